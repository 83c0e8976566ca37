from django.apps import AppConfig
from django.core import checks


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from approvals.signals import holds_escalated, stage_waiting
        from notifications import push, receivers

        checks.register(push.check_keys)

        holds_escalated.connect(receivers.tell_escalated, dispatch_uid="notifications.escalated")
        stage_waiting.connect(receivers.tell_stage_waiting, dispatch_uid="notifications.stage_waiting")
