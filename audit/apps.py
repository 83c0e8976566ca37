from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit"

    def ready(self) -> None:
        """Connect the sign-in and admin-change recorders: they live here, not in the holds code paths."""
        from audit import signals

        signals.connect()
