"""Decisions a policy sends by itself: approving a hold that needs 0 people, and its default outcome before expiry.

What a policy would do with a hold is ``policies.own_action``'s to say; this module acts on
it, in two periodic sweeps (two beats at once are safe):

- ``approve_due`` approves, as it is, each open hold whose winning policy needs 0 people once
  the policy's wait is over, while nobody has touched the hold: a reviewer who claimed it
  (even briefly: ``claim_expires_at`` is set by every claim), gave an approval of it or
  decided it (even a decision since withdrawn or not applied) stops it for good, and the
  hold waits for people. That is re-checked with the hold's row locked, so a reviewer's
  decision racing the policy's ends with exactly one decision. The policy's row is locked
  too while its day's tally is read and the approval counted, so two sweeps never go past
  its daily cap together.
- ``send_default_outcomes`` sends a policy's default outcome for each open hold nobody has
  decided ``expiry_outcome_minutes`` before its expiry; a reject carries the policy's
  comment. The open round's approvals end with it and stay in the audit; the auditors, the
  round's approvers and the reviewer holding the hold's claim are told.

Each decision goes through ``decisions.submit_for_policy`` (idempotency key, delivery and its
retries, the audit, whose actor is the policy with who last changed it), and is recorded as
a ``PolicyDecision``, unique per hold and kind: of two sweeps at once only one decides a
hold, and a policy decides a hold at most once of each kind. Neither ever approves a possible duplicate
(``holds.related.safeguard``): such a hold waits for a person, and the audit says why once (``held_for_people``).
A sweep handles at most ``BATCH``
holds, oldest first, each in its own savepoint (``reviewqueue.sweeping``): one that cannot be decided is logged
and left to people, never stopping the others.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from approvals import alone, policies, remembering, rounds, subject_totals
from approvals.escalation import may_apply
from approvals.models import Approval, ApprovalPolicy, PolicyDecision, RememberedApproval
from audit import events as audit_events
from audit.events import deciding as deciding_events
from audit.models import AuditEvent, EventKind
from holds.deciding import decisions
from holds.models import Decision, DecisionItem, Hold
from holds.queue import listing as holds_queue
from holds.related import safeguard, totals
from notifications import notify
from reviewqueue import sweeping

logger = logging.getLogger(__name__)

BATCH = 200
# The names the sweeps' failures are counted under (``sweeping``).
SWEEPS = {PolicyDecision.Kind.APPROVED: "policy_approvals", PolicyDecision.Kind.DEFAULT: "default_outcomes"}


def approve_due(now: datetime | None = None) -> list[Decision]:
    """Approve the holds whose 0-people policy's wait is over, at most ``BATCH``; return the decisions made."""
    now = now or timezone.now()
    remembering.end_stopped(now)  # so that a stopped remembered approval matches nothing, here or elsewhere
    alone = [policy for policy in policies.all_policies() if policies.decides_alone(policy) and policy.enabled]
    waited = Q(pk__in=[])
    for policy in alone:
        waited |= may_apply(policy) & Q(first_seen_at__lte=now - timedelta(minutes=policy.auto_wait_minutes))
    candidates = untouched(holds_queue.open_holds(now).filter(waited)).order_by("pk")
    return _sweep(candidates, PolicyDecision.Kind.APPROVED, now) if alone else []


def send_default_outcomes(now: datetime | None = None) -> list[Decision]:
    """Send the default outcome of each hold that is due for it, at most ``BATCH``; return the decisions made."""
    now = now or timezone.now()
    defaulting = [policy for policy in policies.all_policies() if policy.expiry_outcome and policy.enabled]
    due_now = Q(pk__in=[])
    for policy in defaulting:
        due_now |= may_apply(policy) & Q(expires_at__lte=now + timedelta(minutes=policy.expiry_outcome_minutes))
    sent = PolicyDecision.objects.filter(hold=OuterRef("pk"), kind=PolicyDecision.Kind.DEFAULT)
    candidates = (
        holds_queue.open_holds(now).filter(due_now, expires_at__isnull=False).exclude(Exists(sent)).order_by("pk")
    )
    return _sweep(candidates, PolicyDecision.Kind.DEFAULT, now) if defaulting else []


def _sweep(candidates, kind: str, now: datetime) -> list[Decision]:
    """Decide at most ``BATCH`` of ``candidates`` (pages of ``BATCH``, in pk order) whose winning policy's own action
    of ``kind`` is due, each in its own savepoint (``sweeping.each``: one that fails is left to people); which policy
    wins is decided in Python, as ``policies.requirement`` reads it."""
    every_policy = policies.all_policies()

    def decided(hold: Hold) -> Decision | None:
        return _decide(hold.pk, kind, now) if _looks_due(hold, every_policy, kind, now) else None

    made, after = [], 0
    while len(made) < BATCH:
        page = list(candidates.filter(pk__gt=after).prefetch_related("items")[:BATCH])
        for _, decision in sweeping.each(SWEEPS[kind], page, decided):
            if decision is not None:
                made.append(decision)
            if len(made) == BATCH:
                break
        if len(page) < BATCH:
            break
        after = page[-1].pk
    return made


def _looks_due(hold: Hold, every_policy: list[ApprovalPolicy], kind: str, now: datetime) -> bool:
    """Whether ``hold``'s winning policy would act now, the daily cap aside (checked again, with it, under the
    locks)."""
    found = policies.requirement(hold, every_policy, subject_totals=subject_totals.read(hold, every_policy))
    if found is None:
        return False
    action = policies.own_action(
        found.policy, hold, found.sure_total, now, policies.DayTally(), approvable="approve" in hold.actions
    )
    if kind == PolicyDecision.Kind.APPROVED:
        return bool(action.approve_at and action.approve_at <= now)
    return bool(action.default_at and action.default_at <= now)


def untouched(holds):
    """``holds`` no person has claimed, approved or decided: those a policy needing 0 people may still approve."""
    return holds.filter(claim_expires_at__isnull=True).exclude(
        Exists(Approval.objects.filter(hold=OuterRef("pk"))) | Exists(Decision.objects.filter(hold=OuterRef("pk")))
    )


def last_changed_by(policy: ApprovalPolicy) -> str:
    """Who last added or changed ``policy`` in the admin, as the audit recorded it (blank if nobody did)."""
    changed = AuditEvent.objects.filter(
        Q(payload__object_id=policy.pk) | Q(payload__object_id=str(policy.pk)),  # as the admin's log entry gave it
        kind=EventKind.SETTING_CHANGED,
        payload__model=ApprovalPolicy._meta.label_lower,
    )
    return changed.order_by("-sequence").values_list("actor_name", flat=True).first() or ""


def _decide(hold_pk: int, kind: str, now: datetime) -> Decision | None:
    try:
        with transaction.atomic():
            return _decide_locked(hold_pk, kind, now)
    except decisions.DecisionRefused as refused:
        logger.info("policy left hold %s undecided: %s", hold_pk, refused.message)
    return None


def _decide_locked(hold_pk: int, kind: str, now: datetime) -> Decision | None:
    """Decide the hold as its policy's ``kind`` asks, if it still does with the hold and the policy locked."""
    held = Hold.objects.select_for_update(of=("self",), no_key=True).prefetch_related("items")
    approving = kind == PolicyDecision.Kind.APPROVED
    hold = (untouched(held) if approving else held).filter(pk=hold_pk).first()
    if hold is None or hold.live_decision():
        return None
    totals.lock_subjects(hold)  # before its subject totals are read: see ``holds.related.totals.lock_subjects``
    every_policy = policies.all_policies()
    subjects = subject_totals.read(hold, every_policy)
    chosen = policies.requirement(hold, every_policy, subject_totals=subjects)
    # The policy's (or remembered approval's) current values, locked: the day's tally is read and counted in turns,
    # and the hold's requirement read again with them.
    policy = (
        type(chosen.policy).objects.select_for_update(no_key=True).filter(pk=chosen.policy.pk).first()
        if chosen
        else None
    )
    remembered = isinstance(policy, RememberedApproval)
    if policy is None or (remembered and remembering.stopped_reason(policy, now)):
        return None
    found = policies.requirement(
        hold, [policy if other == policy else other for other in every_policy], subject_totals=subjects
    )
    if found is None or found.policy != policy:  # models are equal by model and pk
        return None
    day = policies.cap_day(now)
    action = policies.own_action(
        policy,
        hold,
        found.sure_total,
        now,
        alone.day_tally(policy, day) if approving else policies.DayTally(),
        approvable="approve" in hold.actions,
    )
    if approving:
        if action.approve_at is None or action.approve_at > now or "approve" not in hold.actions:
            return None
        choices = [decisions.ItemChoice(item.item_id, DecisionItem.Action.APPROVE) for item in hold.items.all()]
    else:
        if action.default_at is None or action.default_at > now or action.default_action not in hold.actions:
            return None
        comment = policy.expiry_outcome_comment if action.default_action == DecisionItem.Action.REJECT else ""
        choices = [
            decisions.ItemChoice(item.item_id, action.default_action, comment=comment) for item in hold.items.all()
        ]
    approves = any(choice.action == DecisionItem.Action.APPROVE for choice in choices)
    if approves and _held_as_duplicate(hold, policy, kind, now):
        return None
    try:
        with transaction.atomic():
            record = PolicyDecision.objects.create(
                hold=hold,
                **alone.decided_by(policy),
                policy_name=policy.name,
                kind=kind,
                at=now,
                day=day,
                amount=found.sure_total if approving else None,
            )
    except IntegrityError:
        return None  # another sweep decided it first
    current = rounds.open_round(rounds.with_rounds(Approval.objects.filter(hold=hold).select_related("approver")))
    claimant = hold.claimant(now)
    if remembered:
        owner = policy.owner.get_username()
        decider = decisions.PolicyDecider(policy.name, owner, "approved", remembered_by=owner)
    else:
        decider = decisions.PolicyDecider(
            policy.name, last_changed_by(policy), "approved" if approving else "default_outcome"
        )
    decision = decisions.submit_for_policy(
        hold, decider, choices, now, linked=current, target_minutes=policy.decide_within_minutes
    )
    record.decision = decision
    record.save(update_fields=["decision"])
    if not approving:
        notify.default_outcome(decision, [approval.approver for approval in current], claimant)
    return decision


def _held_as_duplicate(hold: Hold, policy, kind: str, now: datetime) -> bool:
    """Whether ``hold``, which ``policy`` would approve (by itself, as a remembered approval, or as its default
    outcome), is a possible duplicate and so waits for a person; the audit says so once per path."""
    guard = safeguard.guard(hold, now=now)
    if not guard.needed:
        return False
    if isinstance(policy, RememberedApproval):
        path = "remembered approval"
    else:
        path = "0-people policy" if kind == PolicyDecision.Kind.APPROVED else "default approve"
    said = AuditEvent.objects.filter(
        env=hold.env,
        hold_id=hold.hold_id,
        kind=EventKind.HELD_FOR_PEOPLE,
        payload__path=path,
        payload__policy=policy.name,
    )
    if not said.exists():
        audit_events.append(
            deciding_events.held_for_people(
                hold=hold,
                path=path,
                policy_name=policy.name,
                reason=policies.HeldBack.POSSIBLE_DUPLICATE,
                duplicates=guard.hold_ids,
            )
        )
    logger.info("%s left hold %s to people: %s", path, hold.pk, guard.words())
    return True
