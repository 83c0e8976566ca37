"""Escalation: tell a policy's escalation group about a hold left waiting too long, once per hold (and stage).

A hold escalates when it is open and undecided, its winning policy (``policies.requirement``)
names an escalation group, and either

- nobody has held a claim on it for ``escalate_after_minutes``: counted from the later of
  its arrival in the queue (``first_seen_at``: before that no reviewer could have claimed it,
  so a hold that sat on the platform while sync was down does not escalate the moment it
  shows up) and the end of its last claim (``claim_expires_at``, which a release, an
  approval or a lapse leaves at the moment the claim ended, see ``holds.lifecycle``); a hold
  claimed for 29 minutes then released waits the policy's whole minutes again. Or
- ``escalate_at_percent`` of its lifetime, from the agent's ask (``created_at``) to its
  expiry, has gone, claimed or not; a hold that never expires has no lifetime to use up. Or
- it is past its policy's target, ``decide_within_minutes`` from the agent's ask, claimed or not.

The sweep reads, in SQL, only the open holds not yet escalated that one of the escalating
policies could apply to (its env, agent and capability globs, and its condition's key in
some item's data) and that are past that policy's own thresholds. Which policy wins, and
its condition's number, are decided in Python: a hold whose most specific policy does not
escalate is read but left alone. A run escalates at most ``BATCH`` holds, oldest (first
mirrored) first, reading the candidates in pages of ``BATCH``; after an outage the rest
follow in the next runs. A hold the sweep fails on is left as it was, logged and counted
(``reviewqueue.sweeping``), and the others escalate.

``Escalation`` is unique per hold and stage of its approval chain (1 for a hold without one: a chain escalates
once per stage, each stage's clock starting when it opens), so of two sweeps at once (two beats) only one creates
it: each row is inserted in a savepoint, and only the sweep whose insert succeeded records
the audit event and notifies, in the same transaction. The group's members are told only
about a hold their team scopes let them see; the escalation records how many were
(``told``), and the audit names them, so an escalation nobody could be told about says so.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import (
    DateTimeField,
    DurationField,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.db.models.lookups import LessThanOrEqual
from django.utils import timezone

from approvals import chains, policies, rounds, signals, subject_totals
from approvals.models import Approval, ApprovalPolicy, AwaitedStage, Escalation
from audit import events as audit_events
from audit.events import deciding
from holds.models import Hold
from reviewqueue import sweeping
from teams import scopes

BATCH = 500
SWEEP = "escalation"  # the name its failures are counted under (``reviewqueue.sweeping``)


@dataclasses.dataclass(frozen=True)
class Due:
    """A hold to escalate, under ``policy``, for ``reason`` (in words: "not claimed for 30 minutes"), in ``stage`` of
    its approval chain."""

    hold: Hold
    policy: ApprovalPolicy
    reason: str
    stage: int = 1


def sweep(now: datetime | None = None, among: QuerySet[Hold] | None = None) -> list[Escalation]:
    """Escalate the holds that are due (of ``among`` only, when given: the holds a sync just mirrored), at most
    ``BATCH``, oldest first; return the escalations this sweep made."""
    now = now or timezone.now()
    every_policy = policies.all_policies()
    escalating = [policy for policy in every_policy if escalates(policy)]
    if not escalating:
        return []
    due_holds = candidates(escalating, now)
    if among is not None:
        due_holds = due_holds.filter(pk__in=among.values("pk"))

    def due_now(holds: list[Hold]) -> list[Due]:
        found = []
        for hold in holds:
            totals = subject_totals.read(hold, every_policy)
            requirement = policies.requirement(hold, every_policy, subject_totals=totals)
            if requirement is None:
                continue
            stage, opened = stage_waiting(hold, requirement)
            if reason := due_reason(requirement.policy, hold, now, opened):
                found.append(Due(hold, requirement.policy, reason, stage))
        return found

    due, after = [], 0
    while len(due) < BATCH:
        page = list(due_holds.filter(pk__gt=after).prefetch_related("items")[:BATCH])
        due += sweeping.batched(SWEEP, page, due_now)  # a page in one savepoint, each hold alone should it fail
        if len(page) < BATCH:
            break
        after = page[-1].pk
    return escalate(due[:BATCH], now)


def escalates(policy: ApprovalPolicy) -> bool:
    return bool(
        policy.escalation_group_id
        and (policy.escalate_after_minutes or policy.escalate_at_percent or policy.decide_within_minutes)
    )


def candidates(escalating: list[ApprovalPolicy], now: datetime):
    """Open, undecided holds not yet escalated in the stage they wait for (``awaiting``: the first stage their open
    round waits for, else 1) that one of ``escalating`` may apply to and that are past its thresholds, oldest first."""
    past_one = Q(pk__in=[])
    for policy in escalating:
        past_one |= may_apply(policy) & _past_thresholds(policy, now)
    awaited = AwaitedStage.objects.filter(hold=OuterRef(OuterRef("pk"))).order_by("position").values("position")[:1]
    in_this_stage = Escalation.objects.filter(hold=OuterRef("pk"), stage=Coalesce(Subquery(awaited), Value(1)))
    return Hold.objects.waiting(now).filter(past_one).exclude(Exists(in_this_stage)).order_by("pk")


def stage_waiting(hold: Hold, requirement) -> tuple[int, datetime | None]:
    """The stage of ``hold``'s approval chain that waits now (1 without a chain) and when it opened: None while that
    is the hold's own first stage, whose clock runs from the agent's ask."""
    current = rounds.open_round(rounds.with_rounds(Approval.objects.filter(hold=hold)))
    states = rounds.states_of(requirement, current)
    waiting = chains.waiting(states)
    if not current or not waiting:
        return (waiting[0].stage.position if waiting else 1), None
    opened = chains.opened_at(states, waiting[0], chains.round_start(hold.first_seen_at, current))
    return waiting[0].stage.position, (None if opened == hold.first_seen_at else opened)


def may_apply(policy: ApprovalPolicy) -> Q:
    """The holds ``policy``'s globs match; its condition is checked in Python, as ``policies.requirement`` reads it
    (amounts under keys of any case, nested, or absent: no key in SQL says which holds it concerns)."""
    try:
        matching = scopes.Scope.of(policy.env_pattern, policy.agent_pattern, policy.capability_pattern).q()
    except scopes.InvalidPattern:
        matching = Q()  # a glob SQL cannot read as fnmatch does: Python alone decides
    return matching


def _past_thresholds(policy: ApprovalPolicy, now: datetime) -> Q:
    past = Q(pk__in=[])
    if policy.escalate_after_minutes:
        since = now - timedelta(minutes=policy.escalate_after_minutes)
        past |= Q(first_seen_at__lte=since) & (Q(claim_expires_at__isnull=True) | Q(claim_expires_at__lte=since))
    if policy.escalate_at_percent:
        past |= Q(expires_at__isnull=False) & Q(LessThanOrEqual(_share_due_at(policy.escalate_at_percent), Value(now)))
    if policy.decide_within_minutes:
        past |= Q(created_at__lte=now - timedelta(minutes=policy.decide_within_minutes))
    return past


def _share_due_at(percent: int):
    """When ``percent`` of a hold's lifetime (ask to expiry) has gone, in SQL: portable to SQLite too."""
    lifetime = ExpressionWrapper(F("expires_at") - F("created_at"), output_field=DurationField())
    share = ExpressionWrapper(lifetime * Value(percent) / Value(100), output_field=DurationField())
    return ExpressionWrapper(F("created_at") + share, output_field=DateTimeField())


def unclaimed_since(hold: Hold, now: datetime) -> datetime | None:
    """Since when nobody has held a claim on ``hold``: its arrival or its last claim's end; None while claimed."""
    if hold.claim_expires_at and hold.claim_expires_at > now:
        return None
    return max(hold.first_seen_at, hold.claim_expires_at or hold.first_seen_at)


def due_reason(policy: ApprovalPolicy, hold: Hold, now: datetime, stage_opened: datetime | None = None) -> str:
    """Why ``hold`` escalates under ``policy`` now, in words; blank when it does not. ``stage_opened``: when the stage
    of its chain waiting now opened, from which its target counts (else from the agent's ask)."""
    if not escalates(policy):
        return ""
    minutes = policy.escalate_after_minutes
    since = unclaimed_since(hold, now)
    if minutes and since and since + timedelta(minutes=minutes) <= now:
        return f"not claimed for {minutes} minute{'s' if minutes != 1 else ''}"
    percent = policy.escalate_at_percent
    if percent and hold.expires_at and hold.created_at + (hold.expires_at - hold.created_at) * percent / 100 <= now:
        return f"{percent} % of its time before expiry gone"
    target = policy.decide_within_minutes
    if target and (stage_opened or hold.created_at) + timedelta(minutes=target) <= now:
        since = "the stage's opening" if stage_opened else "the ask"
        return f"past its target of a decision within {target} minute{'s' if target != 1 else ''} of {since}"
    return ""


def escalate(due: list[Due], now: datetime) -> list[Escalation]:
    """Create each hold's escalation unless another sweep did first, then tell its group and the audit: all in one
    savepoint, or each hold in its own should that fail (``sweeping.batched``)."""
    members: dict[int, list] = {}
    return sweeping.batched(
        SWEEP, due, lambda batch: _escalate(batch, members, now), lambda item: sweeping.hold_of(item.hold)
    )


def _escalate(due: list[Due], members: dict[int, list], now: datetime) -> list[Escalation]:
    made = []
    for item in due:
        group = item.policy.escalation_group
        if group.pk not in members:
            members[group.pk] = scopes.viewers_of(group.user_set.filter(is_active=True).order_by("username"))
        told = scopes.users_who_may_see([item.hold], members[group.pk])
        escalation = Escalation(
            hold=item.hold,
            stage=item.stage,
            policy=item.policy,
            group=group,
            group_name=group.name,
            at=now,
            reason=item.reason,
            told=len(told),
        )
        try:
            with transaction.atomic():
                escalation.save()
        except IntegrityError:
            continue  # another sweep escalated it first
        made.append((escalation, told))
    signals.holds_escalated.send(sender=None, escalations=made)
    audit_events.record_many(deciding.escalated(escalation=escalation, told=told) for escalation, told in made)
    return [escalation for escalation, _ in made]
