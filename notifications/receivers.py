"""What notifications hear from the apps below them (connected in ``NotificationsConfig.ready``)."""

from notifications import notify


def tell_escalated(sender, escalations: list[tuple], **_) -> None:
    """``approvals.signals.holds_escalated``: tell each escalation's group members who may see its hold."""
    notify.escalated(escalations)
