"""Which approval policy applies to a hold, and why, in words a reviewer reads on the page; what a policy does alone.

These are the rules of approval policies, and they fail closed: nothing lets a hold through with fewer
people than the policies ask (0 people, a default outcome, one approval where another policy asks two)
unless every amount the hold carries is read for certain.

Matching. A policy matches a hold when its env, agent and capability globs match (a blank one matches
anything) and, if it has a condition, when the condition holds of the hold's numbers. A condition on an
amount (its key is one, ``agent_numbers.is_amount_key``: ``amount``, ``total``, ``price``, ``refund_amount``…)
reads every amount the hold carries (``agent_numbers.carried``: every item, every amount key in any case,
one level of nesting, ``*_cents`` scaled) and their total; one on another key reads that key, in any
case, the same way, without a total. The condition is judged both ways (``verdicts.Verdict``):

- it holds *for certain* when it holds for every number and the total, each read for certain, not below
  zero, and in the policy's ``currency`` when it names one;
- it holds *possibly* when it holds for any of them, or one of them is in doubt (unreadable, two readings,
  below zero, nested too deep, in no currency or another than the policy's).

Choosing. Of the policies that hold for certain, the most specific wins (``specificity``: each exact pattern
counts 2, each glob 1, a condition 1; on a tie the one needing more people, then the name). A policy that
holds only possibly never lowers what a hold needs, but raises it: when such policies need more people
than that winner (or than the one approval a hold no policy matches needs), the strictest of them wins
instead, and the reason says why ("amount '1,5OO' could not be read: treated as > 100", "total 2,700 ≥
1,000"). With no winner otherwise, the strictest of them still wins, needing at least that one approval:
a policy needing 0 people then says on the page why it leaves the hold to people. A policy with stages
(``approvals.chains``), the certain winner or one holding possibly, wins over one without that would raise it,
needing as many people as that one. A policy row
that cannot be read (an operator no form could have saved, say) is logged once and counts as holding possibly: it
can make a hold need people, never fewer, and no page fails over it. A condition on a subject's total
(``subject_total_over``, judged by ``approvals.subject_totals`` from the totals the caller gives) raises too, as a
policy holding possibly does, even when it holds for certain.

Acting alone (``own_action``). What the hold's winning policy may let through without people rests on the
requirement's ``sure_total``: the sum of every amount the hold carries, set only when the policy held for
certain and no amount is in doubt for it (0 for a hold carrying none). A policy needing 0 people approves
a matching hold ``auto_wait_minutes`` after it reached the queue, while it is enabled, before its
``valid_until``, while the hold allows an approval, with ``sure_total`` set, and under its daily cap (the
count of holds it approved that day and the sum of their ``sure_total``, the day in ``TIME_ZONE``);
otherwise the hold waits for people, and ``held_back`` says why. A policy with a default outcome sends it
``expiry_outcome_minutes`` before the hold's expiry, while enabled and before ``valid_until``; a default
approve also needs ``sure_total`` (else ``default_held_back`` says why, and nothing is sent). The sweeps
(``holds.deciding.by_policy``), the pages and the replay of the past all ask ``own_action``.

A reviewer's remembered approval (``models.RememberedApproval``, ``approvals.remembering``), read with the
policies, is chosen apart: it matches by ``approvals.alike`` alone (every amount the hold carries read for certain,
as above, each at most the remembered one, in its currency), only while running, and wins (needing 0 people)
unless a matching policy needs two or more people, or has stages (``approvals.chains``): that always wins over it.
A policy and a remembered approval may share a pk: ``key`` tells them apart.
"""

from __future__ import annotations

import dataclasses
import logging
import operator
import time
import uuid
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import transaction

from approvals import alike, chains, subject_totals, verdicts
from approvals.models import ApprovalPolicy, RememberedApproval
from reviewqueue import processcache, softcache
from reviewqueue.agent_numbers import carried, grouped_number, is_amount_key
from teams.scopes import GLOB_CHARACTERS, glob_matches

logger = logging.getLogger(__name__)

COMPARISONS = {
    ApprovalPolicy.Operator.GREATER: operator.gt,
    ApprovalPolicy.Operator.AT_LEAST: operator.ge,
    ApprovalPolicy.Operator.LESS: operator.lt,
    ApprovalPolicy.Operator.AT_MOST: operator.le,
    ApprovalPolicy.Operator.EQUAL: operator.eq,
}
NO_POLICY_NEEDS = 1  # a hold no policy matches needs one approval


@dataclasses.dataclass(frozen=True)
class Requirement:
    """What a hold needs under its winning policy, and ``why``: "amount 1,200.00 > 500", or the policy's name.

    ``sure_total`` is what the policy may act on alone: the sum of every amount the hold carries (0 for
    none), set only when the policy held for certain and no amount is in doubt for it; None otherwise, and
    then ``doubt`` says why ("amount '1,5OO' could not be read"). Every path that lets a hold through with
    fewer people (``own_action``) needs it set.
    """

    policy: ApprovalPolicy
    approvals_required: int
    why: str
    sure_total: Decimal | None = None
    doubt: str = ""

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
    weight += (1 if policy.condition_key else 0) + (1 if policy.subject_total_over is not None else 0)
    return weight, policy.approvals_required, policy.name


@dataclasses.dataclass(frozen=True)
class Match:
    """How ``policy`` matches a hold: ``certain`` when it may lower what the hold needs (no condition, or one that
    holds for certain), else it holds only possibly. ``verdict`` is its condition's (None without one), ``total``
    its subject-total condition's; ``problem`` says why the policy could not be read (it then holds possibly)."""

    policy: ApprovalPolicy
    certain: bool
    verdict: verdicts.Verdict | None = None
    problem: str = ""
    total: subject_totals.TotalVerdict | None = None

    @property
    def people(self) -> int:
        """How many people the policy asks for; a row that could not be read asks for at least one."""
        count = self.policy.approvals_required
        if self.problem:
            return min(max(count, 1), 3) if isinstance(count, int) else 1
        return count


def condition_verdict(policy: ApprovalPolicy, item_data: Iterable, read: dict | None = None) -> verdicts.Verdict | None:
    """What the policy's condition concludes of the items' data (``verdicts.Verdict``); None when the data carry
    no number under its keys, so that the condition says nothing. Raises ``KeyError`` for an unknown operator.
    ``read`` keeps what was read of the data under each key, for the next policy to ask."""
    compare = COMPARISONS[policy.condition_operator]
    threshold = policy.condition_threshold
    read = {} if read is None else read
    key = None if is_amount_key(policy.condition_key) else policy.condition_key
    if key not in read:
        read[key] = carried(item_data, key)
    return verdicts.of(read[key], lambda number: compare(number, threshold), policy_currency(policy))


def policy_currency(policy: ApprovalPolicy) -> str:
    """The currency the policy's amounts are in ("" for any): a condition on another key has none."""
    return policy.currency if policy.condition_key == "" or is_amount_key(policy.condition_key) else ""


def match(policy: ApprovalPolicy, hold, item_data: list, read: dict | None = None, totals=None) -> Match | None:
    """How ``policy`` matches ``hold`` with these items' data, or None when it does not (see the module's docstring).

    A policy row that cannot be read is logged once (``unreadable``) and matches possibly. ``read``: see
    ``condition_verdict``; ``totals``: ``requirement``'s ``subject_totals``."""
    try:
        if not (
            glob_matches(policy.env_pattern, hold.env)
            and glob_matches(policy.agent_pattern, hold.agent)
            and glob_matches(policy.capability_pattern, hold.capability)
        ):
            return None
        verdict = condition_verdict(policy, item_data, read) if policy.condition_key else None
        over = policy.subject_total_over is not None
        total = subject_totals.verdict(policy, hold.capability, totals) if over else None
    except Exception as problem:  # a row no form saves (an unknown operator, say): it must not take pages down
        return Match(policy, certain=False, problem=unreadable(policy, problem))
    if (policy.condition_key and (verdict is None or not verdict.some)) or (over and total is None):
        return None
    certain = (verdict is None or verdict.every) and (total is None or total.certain)
    return Match(policy, certain=certain, verdict=verdict, total=total)


_reported: set[tuple] = set()


def unreadable(policy: ApprovalPolicy, problem: Exception) -> str:
    """Why ``policy``'s row cannot be read, for the page; logged once a process for each row and problem."""
    described = f"{type(problem).__name__}: {problem}"
    if (policy.pk, described) not in _reported:
        _reported.add((policy.pk, described))
        message = "approval policy %s “%s” cannot be read, so holds it may match need people: %s"
        logger.error(message, policy.pk, policy.name, described)
    return described


def requirement(
    hold, policies: Iterable[ApprovalPolicy], item_data: Iterable | None = None, *, subject_totals=None
) -> Requirement | None:
    """The requirement of the policy winning ``hold`` (see the module's docstring), or None when none matches.

    ``item_data`` is the data of the hold's items (read from ``hold.items`` when not given); ``subject_totals`` the
    hold's (``approvals.subject_totals.Totals``; None: not known, and a subject-total condition fails closed)."""
    if item_data is None:
        item_data = [item.data for item in hold.items.all()]
    item_data = list(item_data)
    policies = list(policies)
    remembered = [
        policy
        for policy in policies
        if isinstance(policy, RememberedApproval) and policy.enabled and alike.fits(policy, hold, item_data)
    ]
    read = {None: carried(item_data)}  # every amount, read once for every policy
    matching = [
        found
        for policy in policies
        if not isinstance(policy, RememberedApproval)
        and (found := match(policy, hold, item_data, read, subject_totals))
    ]
    if remembered and not any(found.people >= 2 or chains.is_chain(found.policy) for found in matching):
        # A remembered approval, only where no policy asks for four eyes or a chain (``approvals.remembering``).
        chosen = min(remembered, key=lambda policy: policy.pk or 0)
        return Requirement(chosen, 0, alike.why(chosen), read[None].sure_total())
    certain = [found for found in matching if found.certain]
    winner = max(certain, key=lambda found: specificity(found.policy)) if certain else None
    least, first = (winner.people if winner else NO_POLICY_NEEDS), winner
    possible = [found for found in matching if not found.certain]
    # A subject's total over its threshold asks for more people even where a more specific policy holds for certain.
    raising = [found for found in matching if (not found.certain or found.total) and found.people > least]
    if raising or (winner is None and possible):
        winner = max(raising or possible, key=lambda found: (found.people, specificity(found.policy)))
    if winner is None:
        return None
    people = winner.people if winner.certain else max(winner.people, least)
    chained = [found for found in (*possible, first) if found is not None and chains.is_chain(found.policy)]
    if chained and not chains.is_chain(winner.policy):  # doubt keeps a chain whole, with no fewer people than raised
        winner = max(chained, key=lambda found: (found.people, specificity(found.policy)))
        people = max(people, winner.people)
    amounts = read[None]
    sure_total, doubt = None, ""
    if winner.certain:
        currency = policy_currency(winner.policy)
        sure_total = amounts.sure_total(currency)
        if sure_total is None:
            doubtful = amounts.doubtful(currency)
            doubt = f"{doubtful.path} {doubtful.doubt(currency)}"
    elif winner.problem:
        doubt = _why(winner)
    elif winner.total is not None and not winner.total.certain:
        doubt = winner.total.words
    elif winner.verdict is not None and winner.verdict.doubt:
        doubt = f"{winner.verdict.path} {winner.verdict.doubt}"
    else:
        doubt = f"{_why(winner)}, but not every amount and their total"
    return Requirement(winner.policy, people, _why(winner), sure_total, doubt)


class HeldBack:
    """Why a policy leaves to people what it would do alone (``OwnAction.held_back``, ``default_held_back``)."""

    DISABLED = "disabled"
    ENDED = "ended"
    OVER_CAP = "over_cap"
    DOUBTFUL = "doubtful"
    REJECT_ONLY = "reject_only"
    CHAIN = "chain"  # a default approve never stands in for a chain's stages
    # A possible duplicate of another hold (``holds.related.safeguard``): the deciding layer above finds it, and no
    # policy, remembered approval or default outcome approves one.
    POSSIBLE_DUPLICATE = "possible_duplicate"


@dataclasses.dataclass(frozen=True)
class DayTally:
    """What a policy approved by itself on one day: how many holds, and the sum of every amount they carried."""

    count: int = 0
    amount: Decimal = Decimal(0)

    def plus(self, total: Decimal | None) -> DayTally:
        return DayTally(self.count + 1, self.amount + (total or 0))


@dataclasses.dataclass(frozen=True)
class OwnAction:
    """What ``policy`` does with a hold by itself (``own_action``).

    ``approve_at``: when it approves the hold, as it is; None when people decide. ``held_back``:
    why a policy needing 0 people leaves the hold to people after all (a ``HeldBack``), blank
    otherwise. ``default_at`` and ``default_action`` (``reject`` or ``approve``): when and what
    its default outcome sends should nobody have decided by then; None and blank without one, or
    when a default approve is held back (``default_held_back`` then says why).
    """

    policy: ApprovalPolicy
    approve_at: datetime | None = None
    held_back: str = ""
    default_at: datetime | None = None
    default_action: str = ""
    default_held_back: str = ""


def decides_alone(policy: ApprovalPolicy) -> bool:
    """Whether ``policy`` needs nobody: it approves a matching hold itself."""
    return policy.approvals_required == 0


def own_action(
    policy: ApprovalPolicy,
    hold,
    sure_total: Decimal | None,
    now: datetime,
    tally: DayTally,
    *,
    approvable: bool,
) -> OwnAction:
    """What ``policy`` (the hold's winning policy) does with ``hold`` by itself: see the module's docstring.

    ``sure_total`` is the requirement's (``Requirement.sure_total``): None leaves the hold to people
    (``HeldBack.DOUBTFUL``), whatever the policy. ``approvable`` says whether the hold allows an
    approval at all (its actions): a reject-only hold is never approved by a policy. ``tally`` is
    what the policy approved by itself on the day of ``now`` (``cap_day``) before this hold. ``now``
    is the moment asked about: a policy past its ``valid_until`` then, or at the hold's approval
    time, approves nothing. A pure function of its arguments, so the replay of past holds asks it as
    the sweeps and the pages do.
    """
    live = policy.enabled and (policy.valid_until is None or policy.valid_until > now)
    approve_at, held_back = None, ""
    if decides_alone(policy):
        due = hold.first_seen_at + timedelta(minutes=policy.auto_wait_minutes)
        if not policy.enabled:
            held_back = HeldBack.DISABLED
        elif not live or (policy.valid_until is not None and policy.valid_until <= due):
            held_back = HeldBack.ENDED
        elif not approvable:
            held_back = HeldBack.REJECT_ONLY
        elif sure_total is None:
            held_back = HeldBack.DOUBTFUL
        elif over_cap(policy, tally.plus(sure_total)):
            held_back = HeldBack.OVER_CAP
        else:
            approve_at = due
    default_at, default_action, default_held_back = None, "", ""
    if live and policy.expiry_outcome and hold.expires_at is not None:
        if policy.expiry_outcome == ApprovalPolicy.ExpiryOutcome.APPROVE and chains.is_chain(policy):
            default_held_back = HeldBack.CHAIN
        elif policy.expiry_outcome == ApprovalPolicy.ExpiryOutcome.APPROVE and sure_total is None:
            default_held_back = HeldBack.DOUBTFUL
        elif policy.expiry_outcome == ApprovalPolicy.ExpiryOutcome.APPROVE and not approvable:
            default_held_back = HeldBack.REJECT_ONLY
        else:
            default_at = hold.expires_at - timedelta(minutes=policy.expiry_outcome_minutes or 0)
            default_action = policy.expiry_outcome
    return OwnAction(policy, approve_at, held_back, default_at, default_action, default_held_back)


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


def all_policies(current: str | None = None) -> list[ApprovalPolicy | RememberedApproval]:
    """Every policy, with its groups, and every running remembered approval: read from the database once per version
    (``current``, read when not given: see ``version``), then kept."""
    current = current or version()
    kept = _kept.get(current)
    if kept and time.monotonic() - kept[0] < KEPT_SECONDS:
        return kept[1]
    policies = read_policies()
    _kept.clear()
    _kept[current] = (time.monotonic(), policies)
    return policies


def read_policies() -> list[ApprovalPolicy | RememberedApproval]:
    """Every policy and every running remembered approval, as they are in the database now."""
    policies = ApprovalPolicy.objects.select_related("later_approver_group", "escalation_group")
    return [*policies.prefetch_related("stages__group"), *RememberedApproval.objects.running()]


def key(policy: ApprovalPolicy | RememberedApproval) -> tuple[str, int | None]:
    """What tells a policy from a remembered approval of the same pk: (its model, its pk)."""
    return policy._meta.model_name, policy.pk


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
    """Read the policies afresh (a test's rolled-back policies must not outlive it), and report unreadable rows anew."""
    _reported.clear()
    _new_version()


def _new_version() -> str:
    _kept.clear()
    fresh = uuid.uuid4().hex
    softcache.set_many({VERSION_KEY: fresh}, None, "the approval policies' version")
    return fresh


def _why(found: Match) -> str:
    policy = found.policy
    if found.problem:
        return f"policy “{policy.name}” cannot be read ({found.problem}): treated as needing people"
    verdict, condition = found.verdict, comparison_words(policy) if policy.condition_key else ""
    words = [found.total.words] if found.total is not None else []
    if verdict is not None and verdict.doubt:
        words.insert(0, f"{verdict.path} {verdict.doubt}: treated as {condition}")
    elif verdict is not None:
        words.insert(0, f"{verdict.path} {grouped_number(verdict.number)} {condition}")
    return "; ".join(words) or f"policy “{policy.name}”"


def comparison_words(policy: ApprovalPolicy) -> str:
    """The condition's comparison, "> 500"; an operator no form saves is shown as written, never raising."""
    if policy.condition_operator in ApprovalPolicy.Operator.values:
        sign = ApprovalPolicy.Operator(policy.condition_operator).label
    else:
        sign = f"“{policy.condition_operator}” (unknown)"
    threshold = policy.condition_threshold
    return f"{sign} {subject_totals.threshold_words(threshold) if isinstance(threshold, Decimal) else threshold}"
