"""A decision's rows: made with its items, withdrawn, and each delivery attempt the platform answered or not.

Every change of a decision's state is a compare-and-set on ``state = sending``, so that of two
writers at once (an Undo and the first attempt, two attempts) exactly one wins. Only
``holds.lifecycle`` calls these, in the actions that add the hold's claim, the audit, what the
change makes moot and its announcement.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from approvals import approving
from holds.models import Decision, DecisionItem, DeliveryAttempt, Hold


def create(
    locked: Hold, choices: list, approvals: list, now: datetime, reviewer, policy_name: str, undo_until: datetime | None
) -> Decision:
    """``locked``'s decision by ``reviewer`` or the policy ``policy_name``, its ``choices`` as items and the round's
    ``approvals`` pointing at it; its delivery due at once, or at the end of its undo window (``undo_until``).

    Raises ``IntegrityError`` when the hold has a live decision already (a partial unique
    constraint), leaving the caller's transaction usable: the insert has its own savepoint.
    """
    with transaction.atomic():
        decision = Decision.objects.create(
            hold=locked,
            reviewer=reviewer,
            decided_by_policy=policy_name,
            created_at=now,
            undo_until=undo_until,
            next_attempt_at=undo_until or now,
        )
    originals = {item.item_id: item.data for item in locked.items.all()}
    DecisionItem.objects.bulk_create(
        DecisionItem(
            decision=decision,
            position=position,
            item_id=choice.item_id,
            action=choice.action,
            original_data=originals[choice.item_id],
            data=choice.data if choice.action == DecisionItem.Action.EDIT else None,
            comment=choice.comment,
        )
        for position, choice in enumerate(choices)
    )
    approving.link(approvals, decision)
    return decision


def withdraw(decision_id: int, now: datetime) -> bool:
    """Withdraw the decision, if it is in its undo window and no delivery attempt has started (the first attempt's lease
    sets ``delivery_started_at``); whether it was."""
    return bool(
        Decision.objects.filter(
            pk=decision_id, state=Decision.State.SENDING, delivery_started_at__isnull=True, undo_until__gt=now
        ).update(state=Decision.State.WITHDRAWN, finished_at=now)
    )


def finish(decision: Decision, state: str, outcome: str, message: str, attempts: int, now: datetime) -> bool:
    """Keep the attempt the platform answered, and end the decision in ``state`` with the ``outcome``; False, the
    attempt kept all the same, for a decision no longer being sent (another attempt answered first)."""
    DeliveryAttempt.objects.create(decision=decision, at=now, outcome=outcome, message=message)
    return bool(
        Decision.objects.filter(pk=decision.pk, state=Decision.State.SENDING).update(
            state=state, outcome=outcome, outcome_message=message, attempts=attempts, finished_at=now
        )
    )


def retry(decision: Decision, error: str, attempts: int, next_attempt_at: datetime, now: datetime) -> None:
    """Keep the attempt the platform did not answer (``error``); the decision is due again at ``next_attempt_at``."""
    DeliveryAttempt.objects.create(decision=decision, at=now, outcome="retry", message=error)
    Decision.objects.filter(pk=decision.pk, state=Decision.State.SENDING).update(
        attempts=attempts, last_error=error, next_attempt_at=next_attempt_at
    )
