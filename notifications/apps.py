from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from holds import handoff_signals
        from notifications import notify

        # Holds, a lower app, tells of hand-offs by signal, in the transaction of the change.
        handoff_signals.assigned.connect(
            lambda sender, assignment, by, **kwargs: notify.assigned(assignment, by), dispatch_uid="notify.assigned",
            weak=False,
        )
        handoff_signals.unassigned.connect(
            lambda sender, hold, by, **kwargs: notify.unassigned(hold, by), dispatch_uid="notify.unassigned", weak=False
        )
        handoff_signals.mentioned.connect(
            lambda sender, note, users, **kwargs: notify.mentioned(note, users), dispatch_uid="notify.mentioned",
            weak=False,
        )
