"""Delivering a stored decision to the platform exactly once: one attempt at a time, retried with the same key.

``enqueue_delivery`` queues the delivery task by name (``DELIVERY_TASK``) once the decision's
transaction commits; ``deliver`` makes one attempt and hands the platform's answer to
``holds.lifecycle`` (``delivered``: applied, or not applied with its reason; ``delivery_retried``:
tried again later with the same key). Nothing here sends twice: the platform replays the answer
to a repeated key, and every change of a decision's state is a compare-and-set on
``state = sending``.

With an undo window (``UNDO_SECONDS``) delivery starts no earlier than the window's end,
and until the first attempt takes its lease the reviewer may withdraw the decision
(``holds.lifecycle.withdraw``). Withdrawing and that lease are compare-and-sets on the same
row, both requiring ``delivery_started_at`` unset, so exactly one of them wins: a decision
withdrawn in time never reaches the platform.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from approvals import approving
from holds import lifecycle
from holds.deciding.deciders import platform_name
from holds.mirror import platform
from holds.models import Decision, Hold
from notifications import notify
from notifications.models import Notification
from people import wording
from reviewqueue import backoff, queueing, sweeping

logger = logging.getLogger(__name__)

DELIVERY_TASK = "holds.tasks.deliver_decision"
LEASE_MARGIN = timedelta(seconds=5)  # the database work around the POST, and clock differences between hosts
CLOCK_SLACK = timedelta(seconds=2)  # a retry may fire a little before its due time


def deliver_once_committed(decision: Decision) -> None:
    """Queue ``decision``'s delivery when the current transaction commits, due at the end of its undo window if it
    has one."""
    countdown = (decision.undo_until - decision.created_at).total_seconds() if decision.undo_until else 0
    transaction.on_commit(lambda: enqueue_delivery(decision.pk, countdown=countdown))


def enqueue_delivery(decision_id: int, countdown: float = 0) -> None:
    """Queue the delivery task (to run after ``countdown`` seconds); if the broker is down, the periodic re-queue picks
    it up."""
    queueing.queue(DELIVERY_TASK, decision_id, description=f"delivery of decision {decision_id}", countdown=countdown)


def deliver(decision_id: int, client: platform.PlatformClient) -> float | None:
    """Make one delivery attempt; return the seconds to wait before the next, or None when finished.

    An attempt first takes the decision's lease (``next_attempt_at`` moved ahead by
    compare-and-set), so a re-queued task and a retry that both fire run one
    attempt between them, and the other ends its chain. Never inside the undo
    window: a task that fires early waits for the window's end. The first lease
    also sets ``delivery_started_at``, which ends the reviewer's chance to withdraw.
    """
    now = timezone.now()
    leased = Decision.objects.filter(
        Q(undo_until__isnull=True) | Q(undo_until__lte=now),
        pk=decision_id,
        state=Decision.State.SENDING,
        next_attempt_at__lte=now + CLOCK_SLACK,
    ).update(next_attempt_at=now + attempt_lease(), delivery_started_at=Coalesce(F("delivery_started_at"), Value(now)))
    if not leased:
        return _undo_time_left(decision_id, now)
    decision = Decision.objects.select_related("hold", "reviewer").get(pk=decision_id)
    hold = decision.hold
    items = [
        platform.DecisionItem(id=item.item_id, action=item.action, data=item.data, comment=item.comment)
        for item in decision.items.all()
    ]
    try:
        if decision.decided_by_policy:
            decided_by = platform.policy_decided_by(decision.decided_by_policy)
        else:
            decided_by = approving.decided_by(decision, platform_name)
        decided = client.post_decision(hold.env, hold.hold_id, items, decided_by, str(decision.idempotency_key))
    except platform.HoldNotOpen as error:
        outcome, message = _not_open_outcome(error)
        lifecycle.delivered(decision, Decision.State.NOT_APPLIED, outcome, message, final=error.hold)
    except platform.InvalidDecision as error:
        lifecycle.delivered(decision, Decision.State.NOT_APPLIED, Decision.Outcome.INVALID, error.message)
    except platform.NotFound:
        unknown = "The platform does not know this hold."
        lifecycle.delivered(decision, Decision.State.NOT_APPLIED, Decision.Outcome.NOT_FOUND, unknown)
    except platform.PlatformError as error:
        return _retry_later(decision, str(error))
    else:
        lifecycle.delivered(decision, Decision.State.APPLIED, Decision.Outcome.APPLIED, "", final=decided)
    return None


def _undo_time_left(decision_id: int, now: datetime) -> float | None:
    """Seconds until the decision's undo window ends, when it is still waiting in it; else None."""
    undo_until = (
        Decision.objects.filter(pk=decision_id, state=Decision.State.SENDING, undo_until__gt=now)
        .values_list("undo_until", flat=True)
        .first()
    )
    return (undo_until - now).total_seconds() if undo_until else None


def _not_open_outcome(error: platform.HoldNotOpen) -> tuple[str, str]:
    final = error.hold
    if final and final.status == Hold.Status.DECIDED and final.decision:
        who = final.decision.decided_by or "someone else"
        when = f" at {wording.moment(final.decision.decided_at)}" if final.decision.decided_at else ""
        return Decision.Outcome.DECIDED_ELSEWHERE, f"Decided by {who}{when} before this decision arrived."
    if final and final.status == Hold.Status.EXPIRED:
        expired = f" at {wording.moment(final.expires_at)}" if final.expires_at else ""
        return Decision.Outcome.EXPIRED, f"This hold expired{expired}; the agent was told nobody decided."
    if final and final.status == Hold.Status.CANCELLED:
        return Decision.Outcome.CANCELLED, "The run was cancelled; the hold no longer needs a decision."
    return Decision.Outcome.DECIDED_ELSEWHERE, f"The hold is no longer open ({error})."


def _retry_later(decision: Decision, error: str) -> float | None:
    now = timezone.now()
    attempts = decision.attempts + 1
    hold = decision.hold
    if hold.expires_at and hold.expires_at <= now:
        message = (
            f"The hold expired at {wording.moment(hold.expires_at)} while the platform could not be reached ({error}). "
            "If an earlier attempt did arrive, the hold's final state will show it once the platform answers."
        )
        lifecycle.delivered(decision, Decision.State.NOT_APPLIED, Decision.Outcome.EXPIRED, message, attempts=attempts)
        return None
    delay = backoff.retry_delay(attempts)
    lifecycle.delivery_retried(decision, error, attempts, now + timedelta(seconds=delay), now)
    logger.info("decision %s not delivered (%s); retrying in %.1f s", decision.pk, error, delay)
    return delay


def attempt_lease() -> timedelta:
    """How long one attempt holds its decision: the platform's connect and read timeouts, and a margin.

    Just long enough that a live attempt has finished or failed by then; a worker that
    died mid-attempt leaves the decision to the periodic re-queue once it runs out. Should
    an attempt outlive it after all, the re-sent POST carries the same Idempotency-Key.
    """
    timeouts = settings.AGENTOS_CONNECT_TIMEOUT + settings.AGENTOS_READ_TIMEOUT
    return timedelta(seconds=timeouts) + LEASE_MARGIN


def due_for_requeue(now: datetime | None = None) -> list[int]:
    """Decisions still sending past their due time or lease, plus the grace: their task was lost or its worker died."""
    now = now or timezone.now()
    return list(
        Decision.objects.filter(state=Decision.State.SENDING, next_attempt_at__lt=now - backoff.requeue_grace())
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:500]
    )


def alert_undelivered(now: datetime | None = None) -> list[Decision]:
    """Announce decisions still not delivered after DELIVERY_ALERT_MINUTES, once each (one that fails is logged,
    counted and announced at the next run: ``reviewqueue.sweeping``)."""
    now = now or timezone.now()
    alerted = Notification.objects.filter(event=Notification.Event.UNDELIVERED, decision=OuterRef("pk"))
    late = list(
        Decision.objects.filter(
            state=Decision.State.SENDING, created_at__lte=now - timedelta(minutes=settings.DELIVERY_ALERT_MINUTES)
        )
        .exclude(Exists(alerted))
        .select_related("hold", "reviewer")
    )

    def announced(decisions: list[Decision]) -> list[Decision]:
        notify.undelivered(decisions, now)
        return decisions

    return sweeping.batched("undelivered_alerts", late, announced, sweeping.decision_of)
