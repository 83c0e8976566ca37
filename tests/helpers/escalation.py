"""Escalation as tests set it up: a large-refunds policy escalating to the finance leads, and a sweep at a moment."""

import time_machine
from django.contrib.auth.models import Group

from approvals import escalation
from approvals.models import ApprovalPolicy

FINANCE_LEADS = "Finance leads"


def policy(**fields) -> ApprovalPolicy:
    """Large refunds: two approvals, escalated to the finance leads (by default after 30 minutes unclaimed)."""
    defaults = {
        "name": "Large refunds", "approvals_required": 2, "escalate_after_minutes": 30,
        "escalation_group": Group.objects.get_or_create(name=FINANCE_LEADS)[0],
    }
    return ApprovalPolicy.objects.create(**(defaults | fields))


def sweep_at(moment):
    with time_machine.travel(moment, tick=False):
        return escalation.sweep()
