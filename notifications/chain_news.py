"""What an approval chain tells people: a stage waiting for them once the stages before it are done
(``approvals.signals.stage_waiting``), or the admins when nobody is left to approve in it."""

from __future__ import annotations

from approvals import awaiting
from holds.models import Hold
from notifications.models import Notification
from notifications.notify import Event, about, create, standing_in
from reviewqueue import roles


def stage_waiting(hold: Hold, states: list, stages: int, round_number: int = 1, key: str = "") -> list[Notification]:
    """Tell the reviewers of each stage with a group that ``hold`` now waits for (``approvals.chains.StageState``, of a
    chain of ``stages``, in its round ``round_number``), who may see it and have not approved it, that their approval
    is what it needs next; when nobody is left to tell, the stage is blocked, never skipped: the admins are told.
    ``key``: what the message is about, when not the hold's stage in that round (a blocked first stage, told once a
    day)."""
    approved, messages = set(hold.approvals.values_list("approver", flat=True)), []
    for state in (state for state in states if state.stage.group is not None):  # any reviewer: the queue tells
        seeing = awaiting.still_to_approve(hold, state, approved)
        told = seeing or list(roles.admins())
        # One message per stage and round: a chain the platform's change or an edit restarted tells the stage again.
        subject = key or f"hold:{hold.pk}:stage:{state.stage.position}:round:{round_number}"
        messages.append(about(hold, subject, told, stage=state, stages=stages, blocked=not seeing))
    return create(Event.STAGE_WAITING, standing_in(messages))
