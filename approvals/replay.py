"""What a policy would have done to the holds decided in the last days, before a change to it is saved.

The replay reads the holds decided in the window from the mirror (their env, agent, capability,
times and items' data) and, from the audit trail, what people decided (each hold's last
"decision submitted": approved as it was, edited, rejected). For each hold it asks
``policies.requirement`` which policy applies, with the replayed policy (saved, or an unsaved
instance built from the admin's form) in place of its saved version, and, where that is the
replayed policy, asks ``policies.own_action`` what it does by itself, holds taken in the order
they reached the queue so that its daily cap counts as it would have. A matched hold falls in
exactly one of three figures:

- ``would_approve``: the policy would have approved it by itself before people decided it;
- ``would_default``: else, its default outcome would have decided it before people did;
- ``would_need_more``: else, it would have waited for people, as it did; for a chain, ``waits`` counts them by
  each stage they would have waited for ("14 holds would have waited for Finance").

Of the holds it would have approved, ``people_rejected`` and ``people_edited`` list those that
people in fact rejected or edited: the rule's price. ``second_approver_change`` compares the
holds needing two or more approvers under the replayed policy with those under the saved ones
(negative: fewer). Holds are read in chunks, selecting only these columns.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta

from django.utils import timezone

from approvals import chains
from approvals import policies as policy_rules
from approvals.models import ApprovalPolicy, RememberedApproval
from audit.models import AuditEvent, EventKind
from holds.models import Hold, HoldItem

WINDOWS = (7, 30, 90)  # the days an admin may replay
DEFAULT_WINDOW = 30
CHUNK = 5000


@dataclasses.dataclass(frozen=True)
class PastHold:
    """What the replay needs of a decided hold: what ``requirement`` and ``own_action`` read, and what people did."""

    pk: int
    hold_id: str
    env: str
    agent: str
    capability: str
    first_seen_at: datetime
    expires_at: datetime | None
    decided_at: datetime
    actions: list
    item_data: tuple


@dataclasses.dataclass
class Replay:
    """The replay's figures (see the module's docstring); the lists hold the platform's hold ids."""

    days: int
    matched: int = 0
    would_approve: int = 0
    would_need_more: int = 0
    would_default: int = 0
    people_rejected: list[str] = dataclasses.field(default_factory=list)
    people_edited: list[str] = dataclasses.field(default_factory=list)
    needing_two_before: int = 0
    needing_two_after: int = 0
    people_rejected_pks: list[int] = dataclasses.field(default_factory=list)
    people_edited_pks: list[int] = dataclasses.field(default_factory=list)
    waits: dict[str, int] = dataclasses.field(default_factory=dict)  # a chain's holds needing people, by its stages

    @property
    def wait_words(self) -> list[str]:
        """ "14 holds would have waited for Finance", for each stage of a chain, in its order."""
        return [f"{count} hold{'s' * (count != 1)} would have waited for {who}" for who, count in self.waits.items()]

    @property
    def second_approver_change(self) -> int:
        """How many more holds (negative: fewer) would have needed a second approver than under the saved policy."""
        return self.needing_two_after - self.needing_two_before

    @property
    def rejected_holds(self) -> list[tuple[int, str]]:
        """The holds people rejected, as (mirror pk, platform hold id), for links."""
        return list(zip(self.people_rejected_pks, self.people_rejected, strict=True))

    @property
    def edited_holds(self) -> list[tuple[int, str]]:
        return list(zip(self.people_edited_pks, self.people_edited, strict=True))

    @property
    def fewer_second_approvers(self) -> int:
        return -self.second_approver_change

    def figures(self) -> dict:
        """The figures ``replaypolicy --json`` prints: exactly these keys."""
        return {
            "matched": self.matched,
            "would_approve": self.would_approve,
            "would_need_more": self.would_need_more,
            "would_default": self.would_default,
            "people_rejected": list(self.people_rejected),
            "people_edited": list(self.people_edited),
        }


def replay(
    policy: ApprovalPolicy | RememberedApproval, days: int = DEFAULT_WINDOW, now: datetime | None = None
) -> Replay:
    """Replay ``policy`` (saved or not, never saved here; or a remembered approval) over the holds decided in the last
    ``days`` days."""
    if days not in WINDOWS:
        raise ValueError(f"the replay covers {', '.join(map(str, WINDOWS))} days, not {days}")
    now = now or timezone.now()
    saved = policy_rules.read_policies()
    with_replayed = [*(other for other in saved if other != policy), policy]  # models are equal by model and pk
    saved_version = next((other for other in saved if other == policy), None)
    result = Replay(days)
    tallies: dict = defaultdict(policy_rules.DayTally)
    would_approve = []

    # Only where the replayed policy or its saved version matches can the choice of policy change.
    def concerned(hold) -> bool:
        return _globs_match(policy, hold) or (saved_version is not None and _globs_match(saved_version, hold))

    for hold in decided_holds(now - timedelta(days=days), now, concerned):
        # No subject totals for past holds (``approvals.subject_totals``): a policy on them counts as matching.
        before = policy_rules.requirement(hold, saved, hold.item_data)
        after = policy_rules.requirement(hold, with_replayed, hold.item_data)
        result.needing_two_before += _needs_two(before)
        result.needing_two_after += _needs_two(after)
        if after is None or after.policy is not policy:
            continue
        result.matched += 1
        day = policy_rules.cap_day(hold.first_seen_at + timedelta(minutes=policy.auto_wait_minutes))
        action = policy_rules.own_action(
            policy, hold, after.sure_total, hold.first_seen_at, tallies[day], approvable="approve" in hold.actions
        )
        if action.approve_at is not None and action.approve_at <= hold.decided_at:
            result.would_approve += 1
            tallies[day] = tallies[day].plus(after.sure_total)
            would_approve.append(hold)
        elif action.default_at is not None and action.default_at <= hold.decided_at:
            result.would_default += 1
        else:
            result.would_need_more += 1
            if chains.is_chain(policy):
                for stage in chains.stages_for(after):
                    result.waits[stage.who] = result.waits.get(stage.who, 0) + 1
    did = people_did([hold.pk for hold in would_approve])
    for hold in would_approve:
        if did.get(hold.pk) == "reject":
            result.people_rejected.append(hold.hold_id)
            result.people_rejected_pks.append(hold.pk)
        elif did.get(hold.pk) == "edit":
            result.people_edited.append(hold.hold_id)
            result.people_edited_pks.append(hold.pk)
    return result


def _globs_match(policy: ApprovalPolicy, hold: PastHold) -> bool:
    return all(
        policy_rules.glob_matches(pattern, value)
        for pattern, value in (
            (policy.env_pattern, hold.env),
            (policy.agent_pattern, hold.agent),
            (policy.capability_pattern, hold.capability),
        )
    )


def _needs_two(requirement) -> bool:
    return requirement is not None and requirement.approvals_required >= 2


def decided_holds(since: datetime, until: datetime, concerned=None) -> Iterator[PastHold]:
    """The holds decided between ``since`` and ``until``, in the order they reached the queue, read in chunks; only
    those ``concerned(hold)`` accepts (given a PastHold without its items' data), with their items' data."""
    rows = (
        Hold.objects.filter(status=Hold.Status.DECIDED, decided_at__gte=since, decided_at__lte=until)
        .order_by("first_seen_at", "pk")
        .values_list(
            "pk", "hold_id", "env", "agent", "capability", "first_seen_at", "expires_at", "decided_at", "actions"
        )
    )
    chunk = []
    for row in rows.iterator(chunk_size=CHUNK):
        chunk.append(row)
        if len(chunk) == CHUNK:
            yield from _completed(chunk, concerned)
            chunk = []
    yield from _completed(chunk, concerned)


def _completed(chunk: list, concerned) -> Iterator[PastHold]:
    bare = [PastHold(*row, item_data=()) for row in chunk]
    if concerned is not None:
        bare = [hold for hold in bare if concerned(hold)]
    if not bare:
        return
    pks = [hold.pk for hold in bare]
    data = defaultdict(list)
    for hold_pk, item in HoldItem.objects.filter(hold_id__in=pks).order_by("pk").values_list("hold_id", "data"):
        data[hold_pk].append(item)
    for hold in bare:
        yield dataclasses.replace(hold, item_data=tuple(data[hold.pk]))


def people_did(pks: list[int]) -> dict[int, str]:
    """What people decided on each of these holds, by the audit's last "decision submitted" on it: "approve", "edit"
    or "reject" (an earlier one was withdrawn or not applied)."""
    did = {}
    for start in range(0, len(pks), CHUNK):
        submitted = AuditEvent.objects.filter(
            kind=EventKind.DECISION_SUBMITTED, hold_record_id__in=pks[start : start + CHUNK]
        )
        for hold_pk, actions in submitted.order_by("sequence").values_list("hold_record_id", "actions"):
            did[hold_pk] = _what_people_did(actions)
    return did


def _what_people_did(actions: str) -> str:
    """A decision's items' actions ("approve edit") as one word: any rejected item rejects, any edit edits."""
    words = set(actions.split())
    if "reject" in words:
        return "reject"
    if "edit" in words:
        return "edit"
    return "approve" if words else ""
