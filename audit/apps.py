from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit"

    def ready(self) -> None:
        """Connect the sign-in and lockout recorders (admin changes are recorded by the admins themselves)."""
        from audit import sign_ins

        sign_ins.connect()
