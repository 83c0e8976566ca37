"""Policies and decided holds as the replay tests set them up."""

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from approvals.models import ApprovalPolicy
from audit import events as audit_events
from audit.models import EventKind
from holds.models import Hold, HoldItem

NOW = timezone.now().replace(microsecond=0)


def decided_hold(number, agent, amount, did, decided_days_ago, minutes_to_decide=30, expires_after=None):
    """A hold decided ``decided_days_ago`` days ago, ``minutes_to_decide`` after it reached the queue; ``did`` is what
    the person decided ("approve", "edit", "reject"), written to the audit as a decision does."""
    decided_at = NOW - timedelta(days=decided_days_ago)
    first_seen = decided_at - timedelta(minutes=minutes_to_decide)
    hold = Hold.objects.create(
        env="prod",
        hold_id=f"h_{number}",
        run_id=f"r_{number}",
        agent=agent,
        capability="refunds",
        status=Hold.Status.DECIDED,
        question="Refund?",
        created_at=first_seen,
        first_seen_at=first_seen,
        last_synced_at=decided_at,
        decided_at=decided_at,
        payload={},
        payload_digest="0" * 64,
        actions=["approve", "edit", "reject"],
        expires_at=first_seen + timedelta(minutes=expires_after) if expires_after else None,
    )
    HoldItem.objects.create(hold=hold, item_id="i1", position=0, data={"amount": amount})
    audit_events.record(EventKind.DECISION_SUBMITTED, hold=hold, payload={"items": [{"id": "i1", "action": did}]})
    return hold


def small_refunds(threshold="100", wait=10, default_minutes=5):
    """Refund-bot's refunds up to ``threshold`` approve themselves after ``wait`` minutes; a default reject
    ``default_minutes`` before the expiry."""
    return ApprovalPolicy.objects.create(
        name="small refunds",
        agent_pattern="refund-bot",
        condition_key="amount",
        condition_operator="lte",
        condition_threshold=Decimal(threshold),
        approvals_required=0,
        auto_wait_minutes=wait,
        expiry_outcome="reject",
        expiry_outcome_minutes=default_minutes,
    )
