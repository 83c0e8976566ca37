"""What notifications hear from the apps below them (connected in ``NotificationsConfig.ready``)."""

from notifications import chain_news, notify


def tell_escalated(sender, escalations: list[tuple], **_) -> None:
    """``approvals.signals.holds_escalated``: tell each escalation's group members who may see its hold."""
    notify.escalated(escalations)


def tell_stage_waiting(sender, hold, states: list, stages: int, round_number: int, key: str = "", **_) -> None:
    """``approvals.signals.stage_waiting``: tell the people of each stage the hold now waits for."""
    chain_news.stage_waiting(hold, states, stages, round_number, key)
