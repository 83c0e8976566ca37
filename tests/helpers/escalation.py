"""Escalation as tests set it up: a large-refunds policy escalating to the finance leads, and a sweep at a moment."""

import time_machine
from django.contrib.auth.models import Group

from approvals import escalation
from approvals.models import ApprovalPolicy
from holds.mirror import sync
from holds.models import Hold

FINANCE_LEADS = "Finance leads"


def policy(**fields) -> ApprovalPolicy:
    """Large refunds: two approvals, escalated to the finance leads (by default after 30 minutes unclaimed)."""
    defaults = {
        "name": "Large refunds",
        "approvals_required": 2,
        "escalate_after_minutes": 30,
        "escalation_group": Group.objects.get_or_create(name=FINANCE_LEADS)[0],
    }
    return ApprovalPolicy.objects.create(**(defaults | fields))


def sweep_at(moment):
    with time_machine.travel(moment, tick=False):
        return escalation.sweep()


def add_refund(platform_client, platform_state, hold_id, **fields):
    platform_state.add_hold(
        "default",
        {
            "hold_id": hold_id,
            "items": [{"id": "A-1", "title": "refund", "data": {"order_id": "A-1", "amount": "1200.00"}}],
            **fields,
        },
    )
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id=hold_id)
