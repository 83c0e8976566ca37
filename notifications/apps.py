from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from approvals.signals import holds_escalated
        from notifications import receivers

        holds_escalated.connect(receivers.tell_escalated, dispatch_uid="notifications.escalated")
