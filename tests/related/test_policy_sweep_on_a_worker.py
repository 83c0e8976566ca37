"""Beat and a real Celery worker run the 0-people policy's sweep: of two agents asking to refund the same order, it
pays the one that is no possible duplicate of anything, and leaves both A-1001-like refunds to people, saying why."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from approvals.models import ApprovalPolicy
from audit.models import AuditEvent, EventKind
from holds.mirror import sync
from holds.models import Decision, Hold
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def refund(platform_state, platform_client, hold_id: str, agent: str, order: str) -> Hold:
    platform_state.add_hold(
        "default",
        {
            "hold_id": hold_id,
            "agent": agent,
            "capability": "refund",
            "expires_at": None,
            "items": [{"id": f"call_{hold_id}", "title": "refund", "data": {"order_id": order, "amount": "20.00"}}],
        },
    )
    sync.sync_env(platform_client, "default")
    hold = Hold.objects.get(hold_id=hold_id)
    Hold.objects.filter(pk=hold.pk).update(first_seen_at=timezone.now() - timedelta(hours=1))
    return hold


def test_two_agents_refunding_one_order_wait_for_a_person_under_a_0_people_policy_on_a_real_worker(
    celery_processes, platform_client, platform_state
):
    ApprovalPolicy.objects.create(
        name="small refunds",
        capability_pattern="refund",
        condition_key="amount",
        condition_operator="lte",
        condition_threshold=Decimal(50),
        approvals_required=0,
        auto_wait_minutes=0,
    )
    first = refund(platform_state, platform_client, "h_agno", "support-agno", "B-7")
    second = refund(platform_state, platform_client, "h_upsonic", "upsonic-support", "b-7 ")
    alone = refund(platform_state, platform_client, "h_alone", "support-agno", "B-8")
    celery_processes("worker")
    celery_processes("beat", POLICY_SWEEP_SECONDS="1")

    assert wait_until(lambda: Decision.objects.filter(hold=alone).exists(), timeout=30)
    assert wait_until(lambda: AuditEvent.objects.filter(kind=EventKind.HELD_FOR_PEOPLE).count() == 2, timeout=30)
    assert not Decision.objects.filter(hold__in=[first, second]).exists()
    held = {event.hold_id: event.payload["duplicates"] for event in AuditEvent.objects.filter(kind="held_for_people")}
    assert held == {"h_agno": ["h_upsonic"], "h_upsonic": ["h_agno"]}
