"""Deciding holds: the one way every decision is taken, checked and stored exactly once, or taken back.

``submit`` (a reviewer's decision, from any channel) and ``submit_for_policy`` (a policy's own)
lock the hold, check that it can be decided, and by whom, and have ``holds.lifecycle`` store the
decision (``decide``): its claim, its approvals under four eyes, its idempotency key, its audit,
in one transaction. Its delivery (``holds.deciding.delivery``) is queued when that transaction
commits. ``withdraw`` takes a decision back in its undo window (``UNDO_SECONDS``), before its
first delivery attempt; ``withdraw_approval`` an approval that sent nothing. Each raises a
``DecisionRefused`` saying why, for the reviewer, when it cannot be done.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from approvals import approving
from approvals.models import Approval
from holds import lifecycle
from holds.deciding import decidable, delivery
from holds.deciding.deciders import decider_name, reviewer_name
from holds.models import Decision, DecisionChannel, DecisionItem, Hold
from holds.related import safeguard, totals
from people import wording
from teams import scopes

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


class PossibleDuplicate(DecisionRefused):
    """An approval of a possible duplicate without a confirmation covering every duplicate the reviewer may see
    (``holds.related.safeguard``); ``seen`` says which they may see and how many more there are."""

    def __init__(self, guard: safeguard.Guard, seen: safeguard.Seen):
        super().__init__(
            f"Nothing was sent: this hold is a {seen.words()}. Check them, then confirm that you did to approve it."
        )
        self.guard = guard
        self.seen = seen


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


def with_latest_decision(holds: QuerySet[Hold]) -> QuerySet[Hold]:
    """``holds``, each with ``latest_decision_id``: the id of its latest decision, ``NO_DECISION`` before any.

    Every decision moves it on and nothing moves it back (an Undo leaves the withdrawn
    decision the latest), so a summary that names it is good for one round of deciding.
    """
    latest = Decision.objects.filter(hold=OuterRef("pk")).order_by("-pk").values("pk")[:1]
    return holds.annotate(latest_decision_id=Coalesce(Subquery(latest), Value(NO_DECISION)))


def _live_decision(locked: Hold) -> Decision | None:
    """The live decision of a hold read ``with_latest_decision``: a hold never decided has none, without a query."""
    return None if locked.latest_decision_id == NO_DECISION else locked.live_decision()


def submit(
    hold: Hold,
    reviewer,
    choices: list[ItemChoice],
    now: datetime | None = None,
    round_shown: int | None = None,
    decision_shown: int | None = None,
    channel: str = DecisionChannel.PAGE,
    duplicates_checked: list[str] | None = None,
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
    An approval of a possible duplicate (``holds.related.safeguard``), one of four eyes too, raises
    ``PossibleDuplicate`` unless ``duplicates_checked`` (the ids the reviewer confirmed they checked; None for no
    confirmation) names every duplicate they may see; the audit keeps what they confirmed.
    """
    now = now or timezone.now()
    with transaction.atomic():
        # Its items once: the checks, the policy's condition and the stored originals all read them.
        locked = (
            with_latest_decision(Hold.objects.select_for_update(no_key=True)).prefetch_related("items").get(pk=hold.pk)
        )
        if existing := _live_decision(locked):
            raise AlreadyDecided(existing)
        if decision_shown is not None and locked.latest_decision_id != decision_shown:
            raise DecidedSince
        _check_decidable(locked, choices, now)
        # One subject's holds in turns: its total counts what was decided before. After the checks, so that a hold
        # the caller's transaction just closed (the API's fresh read, audited) locks nothing after the audit's head.
        totals.lock_subjects(locked)
        checked = _duplicates_checked(locked, reviewer, choices, now, duplicates_checked)
        try:
            made = lifecycle.decide(locked, reviewer, choices, now, round_shown, channel, duplicates_checked=checked)
        except lifecycle.ClaimedByOther:
            raise DecisionRefused(
                f"{reviewer_name(locked.claimant(now))} is reviewing this hold; take it over first."
            ) from None
        except approving.NotCounted as refused:
            raise DecisionRefused(refused.message) from None
        except IntegrityError:
            raise AlreadyDecided(locked.live_decision()) from None
        if isinstance(made, Decision):
            delivery.deliver_once_committed(made)
    return made


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
        locked = (
            with_latest_decision(Hold.objects.select_for_update(no_key=True)).prefetch_related("items").get(pk=hold.pk)
        )
        totals.lock_subjects(locked)
        if existing := _live_decision(locked):
            raise AlreadyDecided(existing)
        _check_decidable(locked, choices, now)
        try:
            decision = lifecycle.decide_by_policy(locked, decider, choices, now, list(linked), target_minutes)
        except IntegrityError:
            raise AlreadyDecided(locked.live_decision()) from None
        delivery.deliver_once_committed(decision)
    return decision


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
    decision = lifecycle.withdraw(decision_id, hold_pk, reviewer, now)
    if decision.state != Decision.State.WITHDRAWN:
        raise TooLateToUndo("Too late to undo: the decision is already on its way to the platform.")
    return decision


def withdraw_approval(approval_id: int, approver, now: datetime) -> Approval:
    """Take back ``approver``'s own approval in its undo window (``approving.withdraw``), and give them the hold's
    claim back, as ``withdraw`` does after the Undo of a decision (``holds.lifecycle.withdraw_approval``)."""
    return lifecycle.withdraw_approval(approval_id, approver, now)


def _duplicates_checked(hold: Hold, reviewer, choices: list[ItemChoice], now: datetime, checked) -> dict | None:
    """What the audit keeps of the reviewer's check of the hold's possible duplicates when ``choices`` approve one
    (the ids they may see and confirmed, and how many more there are); raise ``PossibleDuplicate`` unless ``checked``
    covers every duplicate they may see. None when the choices approve no possible duplicate."""
    guard = safeguard.needs_person(hold, choices, now=now)
    if guard is None:
        return None
    viewer = scopes.viewer_of(reviewer)
    seen = guard.seen_by(viewer)
    if not guard.covered(viewer, checked):
        raise PossibleDuplicate(guard, seen)
    return {"holds": list(seen.named), "more": seen.more}


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
