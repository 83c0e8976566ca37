"""What the queue and the hold page say of a hold whose policy needs 0 people: when the policy approves it, or why
it waits for people after all; and what such a policy approved by itself on a day, which its daily cap counts."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, Q, Sum
from django.utils import timezone
from django.utils.formats import date_format

from approvals import policies
from approvals.models import ApprovalPolicy, PolicyDecision, RememberedApproval


def decided_by(policy: ApprovalPolicy | RememberedApproval) -> dict:
    """The fields of a ``PolicyDecision`` naming who decided: ``policy``, or a reviewer's remembered approval."""
    remembered = isinstance(policy, RememberedApproval)
    return {"policy": None if remembered else policy, "remembered": policy if remembered else None}


def day_tally(policy: ApprovalPolicy | RememberedApproval, day) -> policies.DayTally:
    """What ``policy`` approved by itself on ``day``: how many holds, and the sum of every amount they carried."""
    found = PolicyDecision.objects.filter(**decided_by(policy), kind=PolicyDecision.Kind.APPROVED, day=day).aggregate(
        count=Count("pk"), amount=Sum("amount")
    )
    return policies.DayTally(found["count"], found["amount"] or 0)


def waiting_words(
    need: policies.Requirement,
    hold,
    now: datetime,
    tally: policies.DayTally,
    *,
    approvable: bool,
    possible_duplicate: bool = False,
) -> tuple[str, str]:
    """What the queue and the hold page say of a hold whose winning policy (``need.policy``) needs 0 people, as
    (words, why): ("Approves itself at 14:02 under ‘small refunds’", "") while it waits (the time in the active zone),
    or ("Waits for people", "Over today's cap of ‘small refunds’") when the policy leaves it to people.
    ``approvable``: whether the hold allows an approval (a reject-only one is never approved by a policy);
    ``possible_duplicate``: whether it is one (``holds.related.safeguard``, which the caller asks), never approved by
    a policy either."""
    policy = need.policy
    action = policies.own_action(policy, hold, need.sure_total, now, tally, approvable=approvable)
    name = policy.label(now) if isinstance(policy, RememberedApproval) else f"‘{policy.name}’"
    if hold.claim_expires_at is not None:
        return "Waits for people", f"a reviewer took it up, so {name} leaves it to people"
    if action.approve_at and possible_duplicate:
        return "Waits for people", held_back_words(policies.HeldBack.POSSIBLE_DUPLICATE, name, need.doubt)
    if action.approve_at:
        return f"Approves itself at {_clock(action.approve_at, now)} under {name}", ""
    return "Waits for people", held_back_words(action.held_back, name, need.doubt)


def default_words(need: policies.Requirement, hold, now: datetime) -> tuple[str, str] | None:
    """What the hold page says of a default approve its policy holds back, as (words, why); None when there is none
    held back."""
    action = policies.own_action(
        need.policy, hold, need.sure_total, now, policies.DayTally(), approvable="approve" in hold.actions
    )
    if not action.default_held_back:
        return None
    why = held_back_words(action.default_held_back, f"‘{need.policy.name}’", need.doubt)
    return "No default approve before it expires", why


def held_back_words(held_back: str, name: str, doubt: str) -> str:
    """Why a policy named ``name`` leaves a hold to people (a ``policies.HeldBack``), ``doubt`` the requirement's."""
    return {
        policies.HeldBack.DISABLED: f"{name} is disabled",
        policies.HeldBack.ENDED: f"{name} has ended",
        policies.HeldBack.OVER_CAP: f"Over today's cap of {name}",
        policies.HeldBack.DOUBTFUL: f"{name} leaves it to people, as {doubt}",
        policies.HeldBack.REJECT_ONLY: f"the agent allows only a reject, so {name} cannot approve it",
        policies.HeldBack.CHAIN: f"{name} leaves it to its approval chain: a default approve never stands in for one",
        policies.HeldBack.POSSIBLE_DUPLICATE: f"{name} leaves it to people, as it is a possible duplicate",
    }[held_back]


def tallies_today(deciding: list, now: datetime) -> dict[tuple, policies.DayTally]:
    """``day_tally`` of each of the policies and remembered approvals ``deciding`` for the day of ``now``, in one
    query, by ``policies.key``."""
    remembered = [one.pk for one in deciding if isinstance(one, RememberedApproval)]
    rows = (
        PolicyDecision.objects.filter(
            Q(policy__in=[one.pk for one in deciding if not isinstance(one, RememberedApproval)])
            | Q(remembered__in=remembered),
            kind=PolicyDecision.Kind.APPROVED,
            day=policies.cap_day(now),
        )
        .values("policy", "remembered")
        .annotate(count=Count("pk"), amount=Sum("amount"))
    )
    found = {}
    for row in rows:
        model = RememberedApproval if row["remembered"] else ApprovalPolicy
        found[(model._meta.model_name, row["remembered"] or row["policy"])] = policies.DayTally(
            row["count"], row["amount"] or 0
        )
    return found


def _clock(moment: datetime, now: datetime) -> str:
    """14:02 in the active zone, with the date when it is not today's."""
    local, today = timezone.localtime(moment), timezone.localtime(now).date()
    return date_format(local, "H:i" if local.date() == today else "Y-m-d H:i")
