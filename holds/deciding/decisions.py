"""Deciding holds: store a reviewer's decision once, then deliver it to the platform exactly once.

``submit`` stores the decision, its items and its idempotency key in the same
transaction that makes it the hold's only decision, and queues its delivery when
that transaction commits. ``deliver`` makes one attempt and records it: applied,
not applied (with the platform's reason), or to be retried later with the same
key. Nothing here sends twice: the platform replays the answer to a repeated key,
and every state change is a compare-and-set on ``state = sending``.

With an undo window (``UNDO_SECONDS``) delivery starts no earlier than the
window's end, and until the first attempt takes its lease the reviewer may
``withdraw`` the decision. Withdrawing and that lease are compare-and-sets on the
same row, both requiring ``delivery_started_at`` unset, so exactly one of them wins:
a decision withdrawn in time never reaches the platform.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from approvals import approving, remembering
from approvals.models import Approval
from audit import events as audit_events
from audit.events import deciding
from holds import lifecycle
from holds.deciding import decidable
from holds.mirror import platform
from holds.models import Decision, DecisionChannel, DecisionItem, DeliveryAttempt, Hold
from notifications import notify
from notifications.models import Notification
from people import wording
from reviewqueue import backoff, changes, queueing, sweeping

logger = logging.getLogger(__name__)

DELIVERY_TASK = "holds.tasks.deliver_decision"
LEASE_MARGIN = timedelta(seconds=5)  # the database work around the POST, and clock differences between hosts
CLOCK_SLACK = timedelta(seconds=2)  # a retry may fire a little before its due time
# How often a page showing a decision still being sent asks for its state: soon after the platform answers,
# without a request a second from every page left open.
STATUS_POLL_SECONDS = 2
NO_DECISION = 0  # the latest decision of a hold never decided (decision ids start at 1)


class DecisionRefused(Exception):
    """The decision cannot be taken; ``message`` says why, for the reviewer."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class TooLateToUndo(DecisionRefused):
    pass


class AlreadyDecided(DecisionRefused):
    def __init__(self, decision: Decision):
        super().__init__(f"Already decided by {decider_name(decision)} at {wording.moment(decision.created_at)}.")
        self.decision = decision


class DecidedSince(DecisionRefused):
    """The hold was decided after the reviewer's summary was made, and that decision is over (undone, say)."""

    def __init__(self):
        super().__init__(
            "This hold was decided since your summary was made, and that decision is over (undone, say); "
            "nothing was sent. Check your decision again, then send it."
        )


@dataclasses.dataclass(frozen=True)
class ItemChoice:
    """A reviewer's choice for one item: ``data`` is the full edited data, for an edit only."""

    item_id: str
    action: str
    data: object = None
    comment: str = ""


@dataclasses.dataclass(frozen=True)
class PolicyDecider:
    """An approval policy deciding a hold by itself (``submit_for_policy``): its ``name``, and the username of who
    last changed it (``changed_by``; blank when nobody did in the admin), whom the audit names with it."""

    name: str
    changed_by: str = ""
    kind: str = "approved"  # or "default_outcome": its default outcome before the hold's expiry
    remembered_by: str = ""  # a reviewer's remembered approval (``approvals.remembering``): its owner's username

    @property
    def channel(self) -> str:
        return DecisionChannel.REMEMBERED if self.remembered_by else DecisionChannel.POLICY


def reviewer_name(user) -> str:
    return user.get_full_name() or user.get_username()


def decider_name(decision: Decision) -> str:
    """Who made ``decision``, for people: its reviewer, or "policy ‘small refunds’"."""
    if decision.decided_by_policy:
        return f"policy ‘{decision.decided_by_policy}’"
    return reviewer_name(decision.reviewer)


def platform_name(user) -> str:
    """How the platform's own records name the reviewer."""
    return user.email or user.get_username()


def with_latest_decision(holds: QuerySet[Hold]) -> QuerySet[Hold]:
    """``holds``, each with ``latest_decision_id``: the id of its latest decision, ``NO_DECISION`` before any.

    Every decision moves it on and nothing moves it back (an Undo leaves the withdrawn
    decision the latest), so a summary that names it is good for one round of deciding.
    """
    latest = Decision.objects.filter(hold=OuterRef("pk")).order_by("-pk").values("pk")[:1]
    return holds.annotate(latest_decision_id=Coalesce(Subquery(latest), Value(NO_DECISION)))


def submit(
    hold: Hold,
    reviewer,
    choices: list[ItemChoice],
    now: datetime | None = None,
    round_shown: int | None = None,
    decision_shown: int | None = None,
    channel: str = DecisionChannel.PAGE,
) -> Decision | Approval:
    """Store ``reviewer``'s decision as the hold's live one and queue its delivery; or, where the hold's approval
    policy asks for more approvers than have agreed, store it as an approval and send nothing (``approvals.approving``).

    Returns the decision, or the approval when nothing was sent. Raises ``AlreadyDecided``
    when the hold has a decision (a double click, a second tab, a second reviewer) and
    ``DecisionRefused`` when it cannot be decided, or not by ``reviewer``: someone else's
    claim on it is running, they may not give this approval, or the round of approvals is
    no longer the one their page showed (``round_shown``, see ``approving.count``); ``DecidedSince``
    when the hold's latest decision is no longer ``decision_shown``, the one their summary showed
    (``with_latest_decision``): a confirm replayed after an Undo sends nothing.
    Everything is checked and the claim taken with the hold's row locked (on SQLite the
    transaction takes the write lock), so concurrent decisions, approvals and take-overs
    apply one at a time. ``channel`` (``DecisionChannel``) is where the decision came from, for the audit.
    """
    now = now or timezone.now()
    with transaction.atomic():
        # Its items once: the checks, the policy's condition and the stored originals all read them.
        locked = with_latest_decision(Hold.objects.select_for_update()).prefetch_related("items").get(pk=hold.pk)
        existing = locked.live_decision()
        if existing:
            raise AlreadyDecided(existing)
        if decision_shown is not None and locked.latest_decision_id != decision_shown:
            raise DecidedSince
        _check_decidable(locked, choices, now)
        if not lifecycle.take_claim_for_decision(locked, reviewer, now):
            raise DecisionRefused(f"{reviewer_name(locked.claimant(now))} is reviewing this hold; take it over first.")
        try:
            counted = approving.count(locked, reviewer, choices, now, round_shown, channel)
        except approving.NotCounted as refused:
            raise DecisionRefused(refused.message) from None
        if not counted.complete:
            changes.publish("approval", [locked])
            return counted.approval
        undo_until = now + undo_window() if settings.UNDO_SECONDS else None
        decision = _create(
            locked,
            counted.choices,
            counted.approvals,
            now,
            reviewer=reviewer,
            undo_until=undo_until,
            channel=channel,
            target_minutes=counted.target_minutes,
        )
    return decision


def submit_for_policy(
    hold: Hold, decider: PolicyDecider, choices: list[ItemChoice], now: datetime, linked=(), target_minutes=None
) -> Decision:
    """Store an approval policy's own decision of ``hold`` and queue its delivery at once.

    The one path of every decision, as ``submit``'s: one idempotency key, delivery and its
    retries, the audit (its actor is the policy, with who last changed it). No undo window
    (the policy's wait was the window) and no approvals counted; ``linked`` are the open
    round's approvals, which the decision ends and the audit keeps. A claim still running
    ends with it. Raises ``AlreadyDecided`` for a hold with a live decision and
    ``DecisionRefused`` for one that cannot be decided. The caller checks, in the same
    transaction and with the hold locked first, that the policy may still decide. ``target_minutes`` is the
    policy's target (``decide_within_minutes``), which the audit keeps.
    """
    with transaction.atomic():
        locked = with_latest_decision(Hold.objects.select_for_update()).prefetch_related("items").get(pk=hold.pk)
        if existing := locked.live_decision():
            raise AlreadyDecided(existing)
        _check_decidable(locked, choices, now)
        lifecycle.end_claim(locked, now)
        decision = _create(
            locked, choices, list(linked), now, decider=decider, channel=decider.channel, target_minutes=target_minutes
        )
    return decision


def _create(
    locked: Hold,
    choices: list,
    approvals: list,
    now: datetime,
    reviewer=None,
    decider: PolicyDecider | None = None,
    undo_until: datetime | None = None,
    channel: str = DecisionChannel.PAGE,
    target_minutes: int | None = None,
) -> Decision:
    """The hold's live decision, by ``reviewer`` or ``decider``, its items, its audit (with the ``channel`` it came
    through and the ``target_minutes`` its policy set, if any: the statistics count it late against that) and its
    delivery, queued once the transaction commits (``undo_until``: not before the end of that undo window)."""
    try:
        with transaction.atomic():
            decision = Decision.objects.create(
                hold=locked,
                reviewer=reviewer,
                decided_by_policy=decider.name if decider else "",
                created_at=now,
                undo_until=undo_until,
                next_attempt_at=undo_until or now,
            )
    except IntegrityError:
        raise AlreadyDecided(locked.live_decision()) from None
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
    audit_events.append(
        deciding.decision_submitted(
            actor=reviewer,
            hold=locked,
            decision=decision,
            channel=channel,
            target_minutes=target_minutes,
            approvals=approvals,
            policy=decider,
        )
    )
    notify.resolve_for_holds([locked.pk], notify.RESOLVED_BY_DECISION, f"decided by {decider_name(decision)}", now)
    countdown = (undo_until - now).total_seconds() if undo_until else 0
    transaction.on_commit(lambda: enqueue_delivery(decision.pk, countdown=countdown))
    changes.publish("decision", [locked])
    return decision


def undo_window() -> timedelta:
    return timedelta(seconds=settings.UNDO_SECONDS)


def withdraw(decision_id: int, reviewer, now: datetime | None = None) -> Decision:
    """Withdraw ``reviewer``'s decision in its undo window: it is never sent, and the hold is theirs to decide again.

    A decision that completed a round of approvals takes its reviewer's approval back with
    it: the round is open again one approval short (``approving.uncount``). Refused
    (``TooLateToUndo``) once the window ended or a delivery attempt started; withdrawing
    twice is harmless. The reviewer gets the hold's claim back, so nobody else slips in
    while they decide again.
    """
    now = now or timezone.now()
    hold_pk = Decision.objects.filter(pk=decision_id, reviewer=reviewer).values_list("hold", flat=True).first()
    if hold_pk is None:
        raise DecisionRefused("Only the reviewer who sent a decision can undo it.")
    with transaction.atomic():
        # Locks in submit's order (the hold, its decision, the audit head), so the two never deadlock.
        hold = Hold.objects.select_for_update().get(pk=hold_pk)
        withdrawn = Decision.objects.filter(
            pk=decision_id, state=Decision.State.SENDING, delivery_started_at__isnull=True, undo_until__gt=now
        ).update(state=Decision.State.WITHDRAWN, finished_at=now)
        decision = Decision.objects.select_related("hold").get(pk=decision_id)
        if not withdrawn:
            if decision.state == Decision.State.WITHDRAWN:
                return decision
            raise TooLateToUndo("Too late to undo: the decision is already on its way to the platform.")
        uncounted = approving.uncount(decision)
        remembering.undone(hold, reviewer, now)  # an approval remembered with it is taken back with it
        lifecycle.claim(hold, reviewer, now)
        if hold.status == Hold.Status.OPEN:
            notify.reopen_for_hold(hold.pk, since=decision.created_at)
        audit_events.append(
            deciding.withdrawn(actor=reviewer, hold=decision.hold, decision=decision, approval_withdrawn=uncounted)
        )
        changes.publish("decision", [hold])
    return decision


def withdraw_approval(approval_id: int, approver, now: datetime) -> Approval:
    """Take back ``approver``'s own approval in its undo window (``approving.withdraw``), and give them the hold's
    claim back, as ``withdraw`` does after the Undo of a decision."""
    return approving.withdraw(approval_id, approver, now, reclaim=lambda hold: lifecycle.claim(hold, approver, now))


def _check_decidable(hold: Hold, choices: list[ItemChoice], now: datetime) -> None:
    """Refuse a decision the hold cannot take from anyone: it is closed, or the choices do not fit its items."""
    if closed := decidable.closed_reason(hold, now):
        raise DecisionRefused(closed)
    item_ids = [item.item_id for item in hold.items.all()]
    if [choice.item_id for choice in choices] != item_ids:
        raise DecisionRefused("Every item of the hold needs exactly one decision.")
    for choice in choices:
        if choice.action not in hold.actions:
            raise DecisionRefused(f"This hold does not allow {choice.action}.")
        if choice.action == DecisionItem.Action.EDIT and choice.data is None:
            raise DecisionRefused("An edit needs the item's data.")


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
        if error.hold:
            lifecycle.record(hold, error.hold)
        outcome, message = _not_open_outcome(error)
        _finish(decision, Decision.State.NOT_APPLIED, outcome, message)
    except platform.InvalidDecision as error:
        _finish(decision, Decision.State.NOT_APPLIED, Decision.Outcome.INVALID, error.message)
    except platform.NotFound:
        _finish(
            decision, Decision.State.NOT_APPLIED, Decision.Outcome.NOT_FOUND, "The platform does not know this hold."
        )
    except platform.PlatformError as error:
        return _retry_later(decision, str(error))
    else:
        if decided:
            lifecycle.record(hold, decided)
        _finish(decision, Decision.State.APPLIED, Decision.Outcome.APPLIED, "")
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
        _finish(decision, Decision.State.NOT_APPLIED, Decision.Outcome.EXPIRED, message, attempts=attempts)
        return None
    delay = backoff.retry_delay(attempts)
    with transaction.atomic():
        DeliveryAttempt.objects.create(decision=decision, at=now, outcome="retry", message=error)
        Decision.objects.filter(pk=decision.pk, state=Decision.State.SENDING).update(
            attempts=attempts, last_error=error, next_attempt_at=now + timedelta(seconds=delay)
        )
        changes.publish("decision", [hold])
        retry = deciding.delivery_attempt(decision=decision, attempt=attempts, outcome="retry", message=error)
        audit_events.append(retry)
    logger.info("decision %s not delivered (%s); retrying in %.1f s", decision.pk, error, delay)
    return delay


def _finish(decision: Decision, state: str, outcome: str, message: str, attempts: int | None = None) -> None:
    now = timezone.now()
    attempts = attempts or decision.attempts + 1
    with transaction.atomic():
        DeliveryAttempt.objects.create(decision=decision, at=now, outcome=outcome, message=message)
        finished = Decision.objects.filter(pk=decision.pk, state=Decision.State.SENDING).update(
            state=state, outcome=outcome, outcome_message=message, attempts=attempts, finished_at=now
        )
        if not finished:
            return
        changes.publish("decision", [decision.hold])
        if state == Decision.State.NOT_APPLIED:
            decision.refresh_from_db()
            notify.not_applied(decision)
            notify.resolve_for_holds([decision.hold_id], notify.RESOLVED_BY_DELIVERY, "not applied", now)
        else:
            notify.resolve_for_holds(
                [decision.hold_id],
                notify.RESOLVED_BY_DECISION | notify.RESOLVED_BY_DELIVERY,
                f"decided by {decider_name(decision)}",
                now,
            )
        ended = deciding.applied if state == Decision.State.APPLIED else deciding.not_applied
        audit_events.record_many(
            [
                deciding.delivery_attempt(decision=decision, attempt=attempts, outcome=outcome, message=message),
                ended(decision=decision, outcome=outcome, message=message),
            ]
        )


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
