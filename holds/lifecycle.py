"""A hold's life in named actions: one function per thing that happens to a hold.

Each does, in one transaction, the row's change, its audit event, resolving the
notifications the change makes moot, and announcing it (``reviewqueue.changes``), in
the manner of zulip's ``do_*`` actions and saleor's ``order/actions.py``. Every change
of a hold's ``status``, ``closed_at`` or claim is written here and nowhere else
(``tests/architecture/test_lifecycle_writes.py`` holds the rest of the code to it), so that how a hold is
mirrored, claimed, decided, released and closed reads in one place. So does a decision's life:
made (``decide``), undone (``withdraw``), answered by the platform (``delivered``, ``delivery_retried``).

Claims say who is reviewing a hold now, so that two reviewers do not work on it at
once. A claim is explicit time-based state on the hold (who, since when, until when).
It starts when a reviewer starts deciding (merely opening a hold is presence, see
``holds.deciding.presence``), and ends on a decision, a release, an expiry, or when it
times out: after ``CLAIM_MINUTES`` when taken without JavaScript, else a minute after
the page's last heartbeat (``keep_claim``), so a closed page frees the hold within a
minute. Once a claim ends, ``claim_expires_at`` keeps when it did (escalation counts a
hold's minutes without a claim from then, see ``approvals.escalation``; a policy reads
that a person claimed it at all, see ``approvals.alone``). Every change is a
compare-and-set update, so two reviewers opening the same hold at once cannot both
win. A decision takes the claim in its own transaction (``take_claim_for_decision``): a
reviewer decides only a hold whose claim is theirs or nobody's (``decide``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from approvals import approving, awaiting, remembering
from approvals.models import Approval
from audit import events as audit_events
from audit.events import deciding, holding
from holds.deciding import decision_rows
from holds.deciding.deciders import decider_name
from holds.mirror import inserting, mirrored, platform
from holds.models import Decision, DecisionChannel, Hold
from notifications import notify
from reviewqueue import changes

logger = logging.getLogger(__name__)

# Mirroring what the platform says.


def mirror_listed(env: str, new: list[mirrored.Listed], changed: dict[int, mirrored.Listed]) -> set[int]:
    """Insert the ``new`` holds sync listed and update the ``changed`` ones (by pk), with their items and the new
    holds' ``hold_seen`` events, in one transaction. Returns the pks of the changed holds written: one closed here
    (by the expiry sweep, say) since the open holds were read is left closed."""
    now = timezone.now()
    with transaction.atomic():
        still_open = _lock_open(changed)
        holds = [
            mirrored.mirror(Hold(pk=pk, env=env), listed.hold, listed.digest, now)
            for pk, listed in changed.items()
            if pk in still_open
        ]
        if holds:
            Hold.objects.bulk_update(holds, mirrored.MIRRORED_FIELDS, batch_size=500)
            mirrored.rewrite_items([(hold, changed[hold.pk].hold) for hold in holds])
        if new:  # late in the transaction, as they end with the audit events: the chain's lock is held only briefly
            inserting.insert_new(env, new, now)
        # What each waits for in an approval chain: a new hold's first stages, a changed one's round over. After the
        # audit, but it writes rows of these holds alone, which this transaction made or locked.
        awaiting.follow_mirrored(env, [listed.hold.hold_id for listed in new], holds)
        # The new holds' ids are not read back: their pages are not open yet, and the queue needs only their scope.
        arrived = [_Arrived(None, env, listed.hold.agent, listed.hold.capability) for listed in new]
        changes.publish("hold", holds + arrived)
    return still_open


class _Arrived(NamedTuple):
    """What ``changes.publish`` reads of a new hold, without the cost of a model instance each."""

    pk: None
    env: str
    agent: str
    capability: str


def _lock_open(changed: dict[int, mirrored.Listed]) -> set[int]:
    """The pks of ``changed`` still open, whose rows stay locked until the transaction ends.

    The lock keeps the expiry sweep and a decision from closing a hold between this
    check and its update, which would reopen it.
    """
    if not changed:
        return set()
    locked = (
        Hold.objects.select_for_update(no_key=True).filter(pk__in=list(changed), status=Hold.Status.OPEN).order_by("pk")
    )
    return set(locked.values_list("pk", flat=True))


def record(hold: Hold, remote: platform.Hold) -> None:
    """Save what the platform says of one mirrored hold (after a fetch or a decision's answer).

    Should its ids now be past storing, only its status and decision are saved: the
    rest stays as mirrored, so that recording how it ended never fails.
    """
    problem = mirrored.unstorable_ids(remote)
    if problem:
        logger.warning("hold %s: keeping the mirrored ids, as the platform's now cannot be stored: %s", hold, problem)
        mirrored.mirror_ending(hold, mirrored.prepared(remote).hold, timezone.now())
        hold.save(update_fields=mirrored.ENDING_FIELDS)
        changes.publish("hold", [hold])
        return
    listed = mirrored.prepared(remote)
    mirrored.mirror(hold, listed.hold, listed.digest, timezone.now())
    with transaction.atomic():
        hold.save(update_fields=mirrored.MIRRORED_FIELDS)
        mirrored.rewrite_items([(hold, listed.hold)])
        changes.publish("hold", [hold])


def record_changed(hold: Hold, remote: platform.Hold) -> bool:
    """Mirror anew a hold still open on the platform whose payload changed, unless it closed here since it was read.
    Returns whether it was written."""
    with transaction.atomic():
        if not Hold.objects.select_for_update(no_key=True).filter(pk=hold.pk, status=Hold.Status.OPEN).exists():
            return False  # closed here (decided, expired) since it was read: left closed
        record(hold, remote)
        awaiting.follow_mirrored(hold.env, [], [hold])
    return True


def close(hold: Hold, final: platform.Hold) -> None:
    """The platform says the hold ended (decided elsewhere, expired, cancelled): save how, put an expiry or a decision
    made elsewhere on the audit trail, resolve what people were asked to act on and, for a hold open here that the
    platform expired, end its claim and tell the auditors."""
    with transaction.atomic():
        was = hold.status
        record(hold, final)
        if hold.status == was:
            return
        _resolve_notifications(hold)
        if hold.status == Hold.Status.DECIDED:
            audit_events.append(holding.decided_elsewhere(hold=hold))
        elif hold.status == Hold.Status.EXPIRED:
            audit_events.append(holding.expired(hold=hold, on_platform=True))
        if was == Hold.Status.OPEN and hold.status == Hold.Status.EXPIRED:
            end_claim(hold, timezone.now())
            if not hold.live_decision():
                notify.expired([hold])


def expire(due: list[Hold], now: datetime) -> list[Hold]:
    """Close the ``due`` holds, locked by the caller, as expired here: their claims end, the auditors hear of those
    no live decision answers, and what people were asked to act on is resolved. Returns them, as closed.

    The locked rows are the caller's alone until commit, so the one update closes exactly
    them; on SQLite, which has no row locks, the database-wide write lock does the same.
    """
    with transaction.atomic():
        Hold.objects.filter(pk__in=[hold.pk for hold in due], status=Hold.Status.OPEN).update(
            status=Hold.Status.EXPIRED, closed_at=now, expired_here_at=now, **_claim_ended(now)
        )
        decided = set(
            Decision.objects.filter(hold__in=due).exclude(state__in=Decision.NOT_LIVE).values_list("hold", flat=True)
        )
        notify.expired([hold for hold in due if hold.pk not in decided])
        notify.resolve_for_holds([hold.pk for hold in due], notify.RESOLVED_BY_CLOSING, "expired", now)
        audit_events.record_many(holding.expired(hold=hold, on_platform=False) for hold in due)
        changes.publish("hold", due)
    for hold in due:
        hold.status, hold.closed_at, hold.expired_here_at = Hold.Status.EXPIRED, now, now
        hold.claimed_by, hold.claimed_at = None, None
    return due


def close_gone(hold: Hold) -> None:
    """The platform has no such hold (any more): close it as gone, keeping when it closed here if it did."""
    now = timezone.now()
    was = hold.status
    hold.status, hold.closed_at, hold.last_synced_at = Hold.Status.GONE, hold.closed_at or now, now
    with transaction.atomic():
        hold.save(update_fields=["status", "closed_at", "last_synced_at"])
        if was == Hold.Status.OPEN:
            _resolve_notifications(hold)
        changes.publish("hold", [hold])


def _resolve_notifications(hold: Hold) -> None:
    """The platform says the hold ended: resolve what people were asked to act on (see ``notify.resolve_for_holds``)."""
    if hold.status == Hold.Status.DECIDED:
        who = f" by {hold.decided_by}" if hold.decided_by else ""
        notify.resolve_for_holds([hold.pk], notify.RESOLVED_BY_DECISION, f"decided{who} on the platform")
    elif hold.status != Hold.Status.OPEN:
        notify.resolve_for_holds([hold.pk], notify.RESOLVED_BY_CLOSING, hold.get_status_display().lower())


# Claims.


def claim_duration() -> timedelta:
    return timedelta(minutes=settings.CLAIM_MINUTES)


def _unclaimed(now: datetime) -> Q:
    """Holds nobody is reviewing now: never claimed, released, or the claim timed out."""
    return Q(claimed_by__isnull=True) | Q(claim_expires_at__isnull=True) | Q(claim_expires_at__lte=now)


def claim(hold: Hold, user, now: datetime | None = None, lasting: timedelta | None = None) -> bool:
    """Claim an open hold for ``user`` unless someone else's claim is running; True when ``user`` holds it.

    It lasts ``CLAIM_MINUTES``, or ``lasting`` for a page whose heartbeat will keep it alive.
    """
    now = now or timezone.now()
    until = now + (lasting or claim_duration())
    renewed = Hold.objects.filter(
        pk=hold.pk, status=Hold.Status.OPEN, claimed_by=user, claim_expires_at__gt=now
    ).update(claim_expires_at=until)
    with transaction.atomic():
        taken = renewed or Hold.objects.filter(_unclaimed(now), pk=hold.pk, status=Hold.Status.OPEN).update(
            claimed_by=user, claimed_at=now, claim_expires_at=until
        )
        if taken and not renewed:
            audit_events.append(holding.claimed(actor=user, hold=hold))
            changes.publish("claim", [hold])
    hold.refresh_from_db(fields=["claimed_by", "claimed_at", "claim_expires_at"])
    return bool(taken)


def keep_claim(hold: Hold, user, now: datetime, lasting: timedelta) -> bool:
    """Renew ``user``'s running claim for ``lasting`` from now (the page's heartbeat); False when it is not theirs.
    ``hold`` is given the new end, as stored (no need to read it back).

    A claim that lapsed is not taken again here: someone may have taken it meanwhile,
    and the page then offers to claim anew.
    """
    kept = Hold.objects.filter(pk=hold.pk, status=Hold.Status.OPEN, claimed_by=user, claim_expires_at__gt=now).update(
        claim_expires_at=now + lasting
    )
    if kept:
        hold.claim_expires_at = now + lasting
    return bool(kept)


def take_claim_for_decision(hold: Hold, user, now: datetime) -> bool:
    """Take the hold's claim for ``user``'s decision, which ends it; False when someone else's claim is running.

    ``decide`` calls it in the transaction that stores the decision, with the hold's row
    locked: the compare-and-set and the decision then stand or fall together, so a claim
    taken over or a second reviewer deciding at the same moment cannot slip between.
    """
    return bool(
        Hold.objects.filter(_unclaimed(now) | Q(claimed_by=user), pk=hold.pk).update(
            claimed_by=None, claimed_at=None, claim_expires_at=now
        )
    )


def take_over(hold: Hold, user, now: datetime | None = None) -> None:
    """Take an open hold's claim from whoever holds it (the reviewer confirmed)."""
    now = now or timezone.now()
    with transaction.atomic():
        previous = (
            Hold.objects.select_for_update(of=("self",), no_key=True)
            .select_related("claimed_by")
            .get(pk=hold.pk)
            .claimed_by
        )
        taken = Hold.objects.filter(pk=hold.pk, status=Hold.Status.OPEN).update(
            claimed_by=user, claimed_at=now, claim_expires_at=now + claim_duration()
        )
        if taken:
            previous_name = previous.get_username() if previous else ""
            audit_events.append(holding.taken_over(actor=user, hold=hold, previous=previous_name))
            changes.publish("claim", [hold])
    hold.refresh_from_db(fields=["claimed_by", "claimed_at", "claim_expires_at"])


def release_claim(hold: Hold, user) -> None:
    """End ``user``'s claim on a hold, if they hold it."""
    with transaction.atomic():
        ended = Hold.objects.filter(pk=hold.pk, claimed_by=user).update(
            claimed_by=None, claimed_at=None, claim_expires_at=timezone.now()
        )
        if ended:
            audit_events.append(holding.released(actor=user, hold=hold))
            changes.publish("claim", [hold])
    hold.refresh_from_db(fields=["claimed_by", "claimed_at", "claim_expires_at"])


def end_claim(hold: Hold, now: datetime) -> None:
    """End whoever's claim a hold has, as its closing or a policy's decision does."""
    Hold.objects.filter(pk=hold.pk, claimed_by__isnull=False).update(**_claim_ended(now))


def _claim_ended(now: datetime) -> dict:
    """The claim's columns once it ended ``now``: nobody's, with ``claim_expires_at`` keeping when, for a hold that
    had a claim (a hold never claimed keeps none, which ``approvals.alone`` reads)."""
    return {
        "claimed_by": None,
        "claimed_at": None,
        "claim_expires_at": Case(When(claimed_by__isnull=False, then=Value(now)), default=F("claim_expires_at")),
    }


# Deciding.


class ClaimedByOther(Exception):
    """Someone else's claim on the hold is running (``Hold.claimant`` says whose)."""


def decide(
    locked: Hold,
    reviewer,
    choices: list,
    now: datetime,
    round_shown=None,
    channel=DecisionChannel.PAGE,
    *,
    duplicates_checked: dict | None = None,
):
    """``reviewer``'s ``choices`` for ``locked``, whose row the caller locked and found decidable: its claim taken
    (else ``ClaimedByOther``), counted under four eyes (``approvals.approving.count``, which raises ``NotCounted``)
    and, once the round is complete, stored as the hold's live decision, sent once its undo window (``UNDO_SECONDS``)
    is over. Returns the decision, or the approval (``Approval``) when the round is not complete yet.
    ``duplicates_checked``: the reviewer's check of the hold's possible duplicates, for the audit. It runs in the
    caller's transaction, which locked the row: no savepoint of its own, as whatever it raises ends that transaction."""
    undo_until = now + timedelta(seconds=settings.UNDO_SECONDS) if settings.UNDO_SECONDS else None
    if not take_claim_for_decision(locked, reviewer, now):
        raise ClaimedByOther
    checked = duplicates_checked
    counted = approving.count(locked, reviewer, choices, now, round_shown, channel, duplicates_checked=checked)
    if not counted.complete:
        audit_events.record_many(counted.audit)
        changes.publish("approval", [locked])
        return counted.approval
    decision = decision_rows.create(locked, counted.choices, counted.approvals, now, reviewer, "", undo_until)
    _store(decision, counted, now, channel, checked=checked)
    return decision


def decide_by_policy(locked: Hold, decider, choices: list, now: datetime, linked: list, target_minutes=None):
    """A policy's own ``Decision`` (``decider``, a ``holds.deciding.decisions.PolicyDecider``) of ``locked``, stored
    as ``decide`` stores one, in the caller's transaction: a claim still running ends with it, and so does the open
    round, ``linked`` approvals."""
    end_claim(locked, now)
    decision = decision_rows.create(locked, choices, linked, now, None, decider.name, None)
    linking = approving.Counted(True, choices, linked, target_minutes=target_minutes)
    _store(decision, linking, now, decider.channel, decider)
    return decision


def _store(decision: Decision, counted, now: datetime, channel: str, decider=None, checked=None) -> None:
    """What a decision made makes moot resolved, its audit (the ``counted`` round's events first, with the ``channel``
    it came through and the target its policy set, if any: the statistics count it late against that), and its
    announcement. The notifications' rows before the audit chain's head, as every transaction takes them."""
    locked, reviewer = decision.hold, decision.reviewer
    notify.resolve_for_holds([locked.pk], notify.RESOLVED_BY_DECISION, f"decided by {decider_name(decision)}", now)
    submitted = deciding.decision_submitted(
        actor=reviewer,
        hold=locked,
        decision=decision,
        channel=channel,
        target_minutes=counted.target_minutes,
        approvals=counted.approvals,
        policy=decider,
        duplicates_checked=checked,
    )
    audit_events.record_many([*counted.audit, submitted])
    changes.publish("decision", [locked])


def withdraw(decision_id: int, hold_pk: int, reviewer, now: datetime) -> Decision:
    """Withdraw ``reviewer``'s decision of the hold ``hold_pk`` in its undo window (``decision_rows.withdraw``): it is
    never sent, a round it completed is open again one approval short (``approving.uncount``), and the hold is theirs
    to decide again, with its claim. Returns the decision as it is now: withdrawn (twice is harmless), or on its way."""
    with transaction.atomic():
        # Locks in decide's order (the hold, its decision, its notifications, the audit head): the two never deadlock.
        hold = Hold.objects.select_for_update(no_key=True).get(pk=hold_pk)
        withdrawn = decision_rows.withdraw(decision_id, now)
        decision = Decision.objects.select_related("hold").get(pk=decision_id)
        if not withdrawn:
            return decision
        if hold.status == Hold.Status.OPEN:  # the notifications before the audit chain's head, which claiming takes
            notify.reopen_for_hold(hold.pk, since=decision.created_at)
        uncounted = approving.uncount(decision)
        remembering.undone(hold, reviewer, now)  # an approval remembered with it is taken back with it
        claim(hold, reviewer, now)
        audit_events.append(
            deciding.withdrawn(actor=reviewer, hold=decision.hold, decision=decision, approval_withdrawn=uncounted)
        )
        changes.publish("decision", [hold])
    return decision


def withdraw_approval(approval_id: int, approver, now: datetime) -> Approval:
    """Take back ``approver``'s own approval in its undo window (``approving.withdraw``, which raises ``NotCounted``):
    the round is one approval short again, and the hold's claim theirs, as after the Undo of a decision."""

    def reclaim(hold: Hold) -> None:
        claim(hold, approver, now)
        changes.publish("approval", [hold])

    return approving.withdraw(approval_id, approver, now, reclaim=reclaim)


# The platform's answer to a decision's delivery.


def delivered(decision: Decision, state: str, outcome: str, message: str, final=None, attempts=None) -> None:
    """The platform's last word on ``decision``: applied or not (``state``, ``outcome``, its ``message``), after
    ``attempts`` (else one more than so far), with the hold as it then described it (``final``, if it did). What it
    made moot is resolved; one not applied is announced. One that another attempt finished first keeps its state."""
    now = timezone.now()
    attempts = attempts or decision.attempts + 1
    with transaction.atomic():
        if final:
            record(decision.hold, final)
        if not decision_rows.finish(decision, state, outcome, message, attempts, now):
            return
        changes.publish("decision", [decision.hold])
        if state == Decision.State.NOT_APPLIED:
            decision.refresh_from_db()
            notify.not_applied(decision)
            if (
                reopened := Hold.objects.select_for_update(no_key=True)
                .filter(pk=decision.hold_id, status=Hold.Status.OPEN)
                .first()
            ):
                awaiting.follow_mirrored(reopened.env, [], [reopened])  # its round ended with it: the chain restarts
            notify.resolve_for_holds([decision.hold_id], notify.RESOLVED_BY_DELIVERY, "not applied", now)
        else:
            moot = notify.RESOLVED_BY_DECISION | notify.RESOLVED_BY_DELIVERY
            notify.resolve_for_holds([decision.hold_id], moot, f"decided by {decider_name(decision)}", now)
        ended = deciding.applied if state == Decision.State.APPLIED else deciding.not_applied
        attempt = deciding.delivery_attempt(decision=decision, attempt=attempts, outcome=outcome, message=message)
        audit_events.record_many([attempt, ended(decision=decision, outcome=outcome, message=message)])


def delivery_retried(decision: Decision, error: str, attempts: int, next_attempt_at: datetime, now: datetime) -> None:
    """An attempt the platform did not answer (``error``): ``decision`` goes again, with the same key, at
    ``next_attempt_at``."""
    with transaction.atomic():
        decision_rows.retry(decision, error, attempts, next_attempt_at, now)
        changes.publish("decision", [decision.hold])
        audit_events.append(
            deciding.delivery_attempt(decision=decision, attempt=attempts, outcome="retry", message=error)
        )
