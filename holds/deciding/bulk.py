"""Deciding many holds at once: one action and one comment for every item of the selected holds.

``Selection.from_form`` reads what the reviewer picked in the queue. ``plan`` splits it
into the holds that will be sent and those left out, each with the reason a reviewer
reads on the summary; the summary signs a fingerprint of every hold it lists
(``summary_digest``). ``send`` accepts only a confirm carrying that signature for the
same holds, action and comment, then submits each hold as its own decision through
``decisions.submit``: its own idempotency key, audit entry and delivery. A hold that
changed or was decided in between is reported by name, and the others still go. A hold
whose approval policy asks for several approvers gets one approval from the bulk decision,
as from a single one (``approvals.approving``); it is sent once the count is reached. A bulk
approve leaves out the holds the reviewer approved before (a person approves a hold once),
those waiting for approval of a decision other than plain approval (counting the bulk
approve would quietly start their count again over someone's edit), and those whose next
approval must come from a group the reviewer is not in, by the rule the confirm applies
(``rounds.Standing.group_awaited``), and possible duplicates (``holds.related.safeguard``: approving one asks for
a confirmation on its own summary). The summary's signature lasts ``CLAIM_MINUTES`` and
names each hold's latest decision, so a confirm replayed after an Undo sends nothing again.
"""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import datetime

from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from approvals import approving, rounds
from approvals.models import Approval
from approvals.policies import all_policies
from audit.chain import canonical
from holds.deciding import decidable, deciders, decisions, describe, review
from holds.deciding.decisions import ItemChoice
from holds.models import Decision, DecisionChannel, DecisionItem, Hold, HoldItem
from holds.related import safeguard
from reviewqueue import readers
from reviewqueue.viewer import Viewer
from teams import scopes

ACTIONS = (DecisionItem.Action.APPROVE, DecisionItem.Action.REJECT)
MAX_HOLDS = 500  # far above a queue page (50), short of a request that takes minutes
DIGEST_SALT = "holds.deciding.bulk.summary"
CHANGED = "Changed since the summary you confirmed; open it to check it, then decide it on its own."
APPROVED_BEFORE = (
    "You approved this hold before, and a person approves a hold once: another person must give the next one."
)
CHANGED_DECISION = "Waiting for approval of a changed decision: open it."
WAITS_FOR_GROUP = "Waits for approval by {group}: the next approval must come from one of them."
POSSIBLE_DUPLICATE = "Left out: it is a {words}. Open it to check them and confirm."
NOT_CONFIRMED = "Nothing was sent: these decisions did not match a summary shown to you. Check them, then send them."


@dataclasses.dataclass(frozen=True)
class Selection:
    """What the reviewer picked in the queue: the holds, and the one action and comment for all their items."""

    hold_ids: tuple[int, ...]  # in the order the reviewer saw them, each once
    action: str
    comment: str

    @classmethod
    def from_form(cls, form) -> Selection:
        """Read the posted selection; a value that cannot be one raises ``readers.BadValue`` (a 400)."""
        hold_ids = selected_hold_ids(form)
        action = readers.choice(form.get("action", ""), "action", ACTIONS)
        if not action:
            raise readers.BadValue("action", "choose approve or reject")
        comment = readers.text(form.get("comment", "").replace("\r\n", "\n"), "comment", review.MAX_COMMENT)
        return cls(hold_ids, action, comment)

    def choices(self, items: list[HoldItem]) -> list[ItemChoice]:
        return [ItemChoice(item_id=item.item_id, action=self.action, comment=self.comment) for item in items]


def selected_hold_ids(form) -> tuple[int, ...]:
    """The holds picked in the queue, in the order seen, each once; more than ``MAX_HOLDS`` raises
    ``readers.BadValue``."""
    hold_ids = dict.fromkeys(readers.identifier(value, "hold") for value in form.getlist("hold"))
    hold_ids.pop(None, None)
    if len(hold_ids) > MAX_HOLDS:
        raise readers.BadValue("hold", f"select at most {MAX_HOLDS} holds at once")
    return tuple(hold_ids)


@dataclasses.dataclass
class Entry:
    """One selected hold: ``reason`` says why it is left out ("" when it is sent)."""

    hold: Hold
    items: list[HoldItem]
    reason: str = ""

    @property
    def item_rows(self) -> list[tuple[HoldItem, str]]:
        """Each item with the plain sentence of what approving it does."""
        return [(item, describe.sentence(item.title, item.data, item.item_id)) for item in self.items]


@dataclasses.dataclass
class Plan:
    """The selected holds split into those that will be sent and those ``left_out``, each with its reason."""

    included: list[Entry]
    left_out: list[Entry]
    unknown: list[int]  # selected ids that name no hold


@dataclasses.dataclass
class Result:
    """What became of one hold at confirm: its decision, or why none was taken."""

    hold: Hold
    decision: Decision | None = None
    reason: str = ""
    approval: Approval | None = None  # counted towards the hold's approval policy, nothing sent yet


def plan(selection: Selection, viewer: Viewer, now: datetime | None = None) -> Plan:
    """Which of the selected holds can take the action from ``viewer`` now, and why the others cannot."""
    now, reviewer = now or timezone.now(), viewer.user
    holds = _load(selection.hold_ids, viewer)
    standings = _standings(holds, selection)
    included, left_out = [], []
    for pk in selection.hold_ids:
        if pk in holds:
            entry = Entry(holds[pk], list(holds[pk].items.all()))
            entry.reason = (
                _left_out_reason(entry.hold, selection.action, reviewer, now)
                or _approval_reason(entry, standings.get(pk), selection, viewer)
                or _duplicate_reason(entry, selection, viewer, now)
            )
            (left_out if entry.reason else included).append(entry)
    return Plan(included, left_out, [pk for pk in selection.hold_ids if pk not in holds])


def _load(hold_ids, viewer: Viewer) -> dict[int, Hold]:
    """The selected holds the viewer may see: one out of their team scopes is as unknown as a made-up id."""
    live = Decision.objects.filter(hold=OuterRef("pk")).exclude(state__in=Decision.NOT_LIVE)
    holds = (
        decisions.with_latest_decision(scopes.visible(Hold.objects.filter(pk__in=hold_ids), viewer))
        .annotate(has_live_decision=Exists(live))
        .select_related("claimed_by")
        .prefetch_related("items")
        .defer("payload", "search_text", "run_snapshot", "platform_decision")
    )
    return {hold.pk: hold for hold in holds}


def _left_out_reason(hold: Hold, action: str, reviewer, now: datetime) -> str:
    """The same refusals as ``decisions.submit``, found before anything is sent."""
    if closed := decidable.closed_reason(hold, now):
        return closed
    if hold.has_live_decision:
        return decisions.AlreadyDecided(hold.live_decision()).message
    if action not in hold.actions:
        return f"This hold does not allow {action}."
    claimant = hold.claimant(now)
    if claimant and claimant != reviewer:
        return f"{deciders.reviewer_name(claimant)} is reviewing this hold; open it to take it over."
    return ""


def _standings(holds: dict[int, Hold], selection: Selection) -> dict[int, rounds.Standing]:
    """Where each hold's approvals stand, by pk, for a bulk approve (one query); none are needed for a reject."""
    if selection.action != DecisionItem.Action.APPROVE:
        return {}
    found: dict[int, list[Approval]] = {pk: [] for pk in holds}
    for approval in rounds.with_rounds(Approval.objects.filter(hold__in=list(holds))):
        found[approval.hold_id].append(approval)
    policies = all_policies()
    return {pk: rounds.standing(holds[pk], policies, approvals) for pk, approvals in found.items()}


def _approval_reason(entry: Entry, standing: rounds.Standing | None, selection: Selection, viewer: Viewer) -> str:
    """Why a bulk approve must leave the hold out for where its approvals stand (``standing``; None for a reject):
    ``viewer`` approved it before, its open round waits for approval of another decision (an edit, say), which the
    bulk approve would restart the count over, or the round's next approval needs a group ``viewer`` is not in."""
    if standing is None:
        return ""
    if standing.has_approved(viewer.user):
        return APPROVED_BEFORE
    current = standing.approvals
    if current and not approving.same_decision(current[0].items, selection.choices(entry.items)):
        return CHANGED_DECISION
    if group := standing.group_awaited(viewer):
        return WAITS_FOR_GROUP.format(group=group)
    return ""


def _duplicate_reason(entry: Entry, selection: Selection, viewer: Viewer, now: datetime) -> str:
    """Why a bulk approve leaves the hold out when it is a possible duplicate, in words ``viewer`` may read."""
    if selection.action != DecisionItem.Action.APPROVE:
        return ""
    guard = safeguard.needs_person(entry.hold, selection.choices(entry.items), now=now)
    return POSSIBLE_DUPLICATE.format(words=guard.words(viewer)) if guard else ""


def _round_seen(standing: rounds.Standing | None) -> int | None:
    """The open round a bulk approve was checked against (``approving.count`` refuses it once that round changed)."""
    return rounds.shown(standing.approvals) if standing else None


def summary_digest(selection: Selection, reviewer, included: list[Entry]) -> str:
    """The signature the summary's confirm form carries: the action, the comment and every hold it lists, each with
    its latest decision; it lasts ``CLAIM_MINUTES``."""
    return review.sign_summary(
        DIGEST_SALT,
        {
            "head": _head(selection, reviewer),
            "holds": {str(entry.hold.pk): [_fingerprint(entry), entry.hold.latest_decision_id] for entry in included},
        },
    )


def send(selection: Selection, viewer: Viewer, signed: str) -> list[Result]:
    """Submit one decision per hold of a confirmed summary; raise ``review.NotConfirmed`` for any other confirm, or
    one older than ``CLAIM_MINUTES``.

    A hold changed since the summary is not sent, nor one decided since (that decision
    undone, say); one that can no longer be decided (someone decided, claimed or it
    expired meanwhile) is reported with the reason.
    """
    reviewer = viewer.user
    shown = review.read_summary(DIGEST_SALT, signed, NOT_CONFIRMED)
    if not constant_time_compare(shown["head"], _head(selection, reviewer)):
        raise review.NotConfirmed(NOT_CONFIRMED)
    if set(shown["holds"]) != {str(pk) for pk in selection.hold_ids}:
        raise review.NotConfirmed(NOT_CONFIRMED)
    holds = _load(selection.hold_ids, viewer)
    if len(holds) != len(selection.hold_ids):
        raise review.NotConfirmed(NOT_CONFIRMED)  # a hold left the reviewer's team scopes since the summary
    standings = _standings(holds, selection)
    results = []
    for pk in selection.hold_ids:
        entry = Entry(holds[pk], list(holds[pk].items.all()))
        fingerprint, decision_shown = shown["holds"][str(pk)]
        if not constant_time_compare(fingerprint, _fingerprint(entry)):
            results.append(Result(entry.hold, reason=CHANGED))
            continue
        standing = standings.get(pk)
        if reason := _approval_reason(entry, standing, selection, viewer):
            results.append(Result(entry.hold, reason=reason))  # someone approved or edited since the summary
            continue
        try:
            outcome = decisions.submit(
                entry.hold,
                reviewer,
                selection.choices(entry.items),
                round_shown=_round_seen(standing),
                decision_shown=decision_shown,
                channel=DecisionChannel.BULK,
            )
        except decisions.PossibleDuplicate as refused:  # flagged since the summary
            results.append(Result(entry.hold, reason=POSSIBLE_DUPLICATE.format(words=refused.seen.words())))
        except decisions.DecisionRefused as refused:
            results.append(Result(entry.hold, reason=refused.message))
        else:
            if isinstance(outcome, Decision):
                results.append(Result(entry.hold, decision=outcome))
            else:
                results.append(Result(entry.hold, approval=outcome))
    return results


def _head(selection: Selection, reviewer) -> str:
    return hashlib.sha256(canonical([reviewer.pk, selection.action, selection.comment]).encode()).hexdigest()


def _fingerprint(entry: Entry) -> str:
    """A hash of what the summary shows of a hold: which hold, and each item's id and the agent's data."""
    hold = entry.hold
    shown = [hold.pk, hold.env, hold.hold_id, [[item.item_id, item.title, item.data] for item in entry.items]]
    return hashlib.sha256(canonical(shown).encode()).hexdigest()
