"""Which approval policy applies to a hold, and why, in words a reviewer reads on the page.

A policy matches a hold when its env, agent and capability globs match (a blank one
matches anything) and, if it has a condition, when some item's data holds a number at
the condition's key that passes it. A condition on one of the amount keys (``AMOUNT_KEYS``:
``amount``, ``refund_amount``, ``total``) reads all of them, as the queue's amount does;
one on any other key reads that key alone. Numbers are read as everywhere in item data
(``jsonvalues.read_number``), and a condition fails closed: a value at its keys that is not
read for certain ("1,5OO", or "1,500", which is 1.5 or 1500) makes it hold, and the reason
says so ("amount '1,5OO' could not be read: treated as > 100").

Of the matching policies the most specific wins: each exact pattern counts 2, each glob
1, a condition 1; on a tie, the one needing more approvals (the stricter) wins, then the
name, so the choice never depends on the order rows come back in. When a condition held
only for want of a number, the strictest matching policy wins instead: a doubtful value
must not pick a specific policy needing fewer approvals ("amount < 10: 1 approval"). A
hold no policy matches needs one approval, as it always did.

A reviewer's remembered approval (``remembered_by`` set, ``approvals.remembering``) is chosen
apart: it matches by ``approvals.alike`` alone, only while enabled, and wins (needing 0 people)
unless a matching policy needs two or more people, which always wins over it.

What a policy does by itself (``own_action``): one needing 0 people approves a matching
hold ``auto_wait_minutes`` after it reached the queue, while it is enabled, before its
``valid_until`` and under its daily cap (the count of holds it approved that day and the
sum of their condition's numbers, the day in ``TIME_ZONE``); otherwise the hold waits for
people, and ``held_back`` says why: a condition's number not read for certain always leaves it to
people. A policy with a default outcome sends it
``expiry_outcome_minutes`` before the hold's expiry, while enabled and before ``valid_until``.
The sweeps (``holds.deciding.by_policy``) and the replay of the past both ask ``own_action``.
"""

from __future__ import annotations

import dataclasses
import operator
import time
import uuid
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import transaction

from approvals import alike
from approvals.models import ApprovalPolicy
from reviewqueue import processcache, softcache
from reviewqueue.jsonvalues import AMOUNT_KEYS, Reading, grouped_number, read_number
from teams.scopes import GLOB_CHARACTERS, glob_matches

COMPARISONS = {
    ApprovalPolicy.Operator.GREATER: operator.gt,
    ApprovalPolicy.Operator.AT_LEAST: operator.ge,
    ApprovalPolicy.Operator.LESS: operator.lt,
    ApprovalPolicy.Operator.AT_MOST: operator.le,
    ApprovalPolicy.Operator.EQUAL: operator.eq,
}


@dataclasses.dataclass(frozen=True)
class Requirement:
    """What a hold needs under its policy, and ``why``: "amount 1,200.00 > 500", or the policy's name; ``number`` is
    the condition's number that matched (None without a condition)."""

    policy: ApprovalPolicy
    approvals_required: int
    why: str
    number: Decimal | None = None

    @property
    def reason(self) -> str:
        """ "Needs 2 approvals: amount 1,200.00 > 500" ("Needs no approval, …" for a policy that approves itself)."""
        count = self.approvals_required
        if count == 0:
            return f"Needs no approval, the policy approves it: {self.why}"
        return f"{'Needs 1 approval' if count == 1 else f'Needs {count} approvals'}: {self.why}"


def _pattern_weight(pattern: str) -> int:
    if not pattern:
        return 0
    return 1 if GLOB_CHARACTERS & set(pattern) else 2


def specificity(policy: ApprovalPolicy) -> tuple[int, int, str]:
    """How specific a policy is, as a sort key: larger first wins (see the module's docstring)."""
    weight = sum(_pattern_weight(p) for p in (policy.env_pattern, policy.agent_pattern, policy.capability_pattern))
    weight += 1 if policy.condition_key else 0
    return weight, policy.approvals_required, policy.name


@dataclasses.dataclass(frozen=True)
class Met:
    """Why a policy's condition holds: the value at ``key`` passes it, or is not read for certain."""

    key: str
    reading: Reading


def condition_keys(policy: ApprovalPolicy) -> tuple[str, ...]:
    """The data keys a condition reads: every amount key for one on an amount, else its own key."""
    return AMOUNT_KEYS if policy.condition_key in AMOUNT_KEYS else (policy.condition_key,)


def condition_met(policy: ApprovalPolicy, item_data: Iterable) -> Met | None:
    """The first number at the condition's keys, among the items' data, that passes the condition; failing
    that, the first value there that is not read for certain (None if there is neither)."""
    compare = COMPARISONS[policy.condition_operator]
    doubtful = None
    for data in item_data:
        if not isinstance(data, dict):
            continue
        for key in condition_keys(policy):
            if key not in data:
                continue
            reading = read_number(data[key])
            if reading.exact is None:
                doubtful = doubtful or Met(key, reading)
            elif compare(reading.exact, policy.condition_threshold):
                return Met(key, reading)
    return doubtful


def condition_value(policy: ApprovalPolicy, item_data: Iterable) -> Decimal | None:
    """The number that passes the policy's condition, read for certain; None when none does, or when the condition
    holds only for want of a number (``condition_met``): a policy never approves by itself on a doubtful value."""
    met = condition_met(policy, item_data)
    return met.reading.exact if met else None


def requirement(hold, policies: Iterable[ApprovalPolicy], item_data: Iterable | None = None) -> Requirement | None:
    """The requirement of the most specific of ``policies`` matching ``hold``, or None when none matches.

    ``item_data`` is the data of the hold's items (read from ``hold.items`` when not given).
    """
    if item_data is None:
        item_data = [item.data for item in hold.items.all()]
    item_data = list(item_data)
    matching, remembered = [], []
    for policy in policies:
        if policy.remembered_by_id is not None:
            if policy.enabled and alike.fits(policy, hold, item_data):
                remembered.append(policy)
            continue
        if not (
            glob_matches(policy.env_pattern, hold.env)
            and glob_matches(policy.agent_pattern, hold.agent)
            and glob_matches(policy.capability_pattern, hold.capability)
        ):
            continue
        met = condition_met(policy, item_data) if policy.condition_key else None
        if policy.condition_key and met is None:
            continue
        matching.append((policy, met))
    if remembered and not any(policy.approvals_required >= 2 for policy, _ in matching):
        # A reviewer's remembered approval, only where no policy asks for four eyes (``approvals.remembering``).
        chosen = min(remembered, key=lambda policy: policy.pk or 0)
        return Requirement(chosen, 0, alike.why(chosen))
    if not matching:
        return None
    if any(met and met.reading.exact is None for _, met in matching):
        policy, met = max(matching, key=lambda found: (found[0].approvals_required, specificity(found[0])))
    else:
        policy, met = max(matching, key=lambda found: specificity(found[0]))
    return Requirement(policy, policy.approvals_required, _why(policy, met), met.reading.exact if met else None)


class HeldBack:
    """Why a policy needing 0 people leaves a hold to people (``OwnAction.held_back``)."""

    DISABLED = "disabled"
    ENDED = "ended"
    OVER_CAP = "over_cap"
    DOUBTFUL = "doubtful"


@dataclasses.dataclass(frozen=True)
class DayTally:
    """What a policy approved by itself on one day: how many holds, and the sum of their condition's numbers."""

    count: int = 0
    amount: Decimal = Decimal(0)

    def plus(self, number: Decimal | None) -> DayTally:
        return DayTally(self.count + 1, self.amount + (number or 0))


@dataclasses.dataclass(frozen=True)
class OwnAction:
    """What ``policy`` does with a hold by itself (``own_action``).

    ``approve_at``: when it approves the hold, as it is; None when people decide. ``held_back``:
    why a policy needing 0 people leaves the hold to people after all (a ``HeldBack``), blank
    otherwise. ``default_at`` and ``default_action`` (``reject`` or ``approve``): when and what
    its default outcome sends should nobody have decided by then; None and blank without one.
    """

    policy: ApprovalPolicy
    approve_at: datetime | None = None
    held_back: str = ""
    default_at: datetime | None = None
    default_action: str = ""


def decides_alone(policy: ApprovalPolicy) -> bool:
    """Whether ``policy`` needs nobody: it approves a matching hold itself."""
    return policy.approvals_required == 0


def own_action(policy: ApprovalPolicy, hold, number: Decimal | None, now: datetime, tally: DayTally) -> OwnAction:
    """What ``policy`` (the hold's winning policy) does with ``hold`` by itself: see the module's docstring.

    ``number`` is the condition's number the policy matched (``condition_value``; None without
    a condition, and None with one when its value was not read for certain, which leaves the hold
    to people); ``tally`` is what the policy approved by itself on the day of ``now``
    (``cap_day``) before this hold. ``now`` is the moment asked about: a policy past its
    ``valid_until`` then, or at the hold's approval time, approves nothing. A pure function of
    its arguments, so the replay of past holds asks it as the sweeps do.
    """
    live = policy.enabled and (policy.valid_until is None or policy.valid_until > now)
    approve_at, held_back = None, ""
    if decides_alone(policy):
        due = hold.first_seen_at + timedelta(minutes=policy.auto_wait_minutes)
        if not policy.enabled:
            held_back = HeldBack.DISABLED
        elif not live or (policy.valid_until is not None and policy.valid_until <= due):
            held_back = HeldBack.ENDED
        elif policy.condition_key and number is None:
            held_back = HeldBack.DOUBTFUL
        elif over_cap(policy, tally.plus(number)):
            held_back = HeldBack.OVER_CAP
        else:
            approve_at = due
    default_at, default_action = None, ""
    if live and policy.expiry_outcome and hold.expires_at is not None:
        default_at = hold.expires_at - timedelta(minutes=policy.expiry_outcome_minutes or 0)
        default_action = policy.expiry_outcome
    return OwnAction(policy, approve_at, held_back, default_at, default_action)


def over_cap(policy: ApprovalPolicy, tally: DayTally) -> bool:
    """Whether ``tally`` (a day's approvals by the policy, the next one included) goes past its daily cap."""
    if policy.daily_cap_count is not None and tally.count > policy.daily_cap_count:
        return True
    return policy.daily_cap_amount is not None and tally.amount > policy.daily_cap_amount


def cap_day(moment: datetime) -> date:
    """The day a policy's approval at ``moment`` counts towards, in the server's ``TIME_ZONE``."""
    return moment.astimezone(ZoneInfo(settings.TIME_ZONE)).date()


# Every process keeps the policies it read under the version the cache names (``version``); a change to
# a policy or a group names a new version, so every process reads them again on its next request.
VERSION_KEY = "approval-policies-version"
# Should a change's new version never reach the cache (it was down), a process reads the policies
# again after this long anyway.
KEPT_SECONDS = 60
_kept: dict[str, tuple[float, list[ApprovalPolicy]]] = {}


def all_policies(current: str | None = None) -> list[ApprovalPolicy]:
    """Every policy, with its groups: read from the database once per version (``current``, read when not given:
    see ``version``), then kept."""
    current = current or version()
    kept = _kept.get(current)
    if kept and time.monotonic() - kept[0] < KEPT_SECONDS:
        return kept[1]
    policies = list(ApprovalPolicy.objects.select_related("later_approver_group", "escalation_group", "remembered_by"))
    _kept.clear()
    _kept[current] = (time.monotonic(), policies)
    return policies


def version() -> str:
    """The policies' version, changed with every change to a policy or a group (a fresh one when the cache has none)."""
    current = softcache.get_many([VERSION_KEY], "the approval policies' version").get(VERSION_KEY)
    if current is None:
        current = _new_version()
    return current


def policies_changed(**kwargs) -> None:
    """A policy or a group changed: name a new version now, for this transaction's own reads, and again once it
    commits, since a process reading the policies in between may have kept them as they were before."""
    _new_version()
    transaction.on_commit(_new_version)


@processcache.register
def forget() -> None:
    """Read the policies afresh (a test's rolled-back policies must not outlive it)."""
    _new_version()


def _new_version() -> str:
    _kept.clear()
    fresh = uuid.uuid4().hex
    softcache.set_many({VERSION_KEY: fresh}, None, "the approval policies' version")
    return fresh


def _why(policy: ApprovalPolicy, met: Met | None) -> str:
    if met is None:
        return f"policy “{policy.name}”"
    condition = f"{ApprovalPolicy.Operator(policy.condition_operator).label} {_threshold(policy.condition_threshold)}"
    if met.reading.exact is None:
        return f"{met.key} {met.reading.doubt}: treated as {condition}"
    return f"{met.key} {grouped_number(met.reading.exact)} {condition}"


def _threshold(value: Decimal) -> str:
    """A threshold without the zeros its column pads it with: 500.0000 as 500, 99.5000 as 99.5."""
    plain = value.quantize(Decimal(1)) if value == value.to_integral() else value.normalize()
    return grouped_number(plain)
