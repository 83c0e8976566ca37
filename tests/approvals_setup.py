"""What the approval tests share: a policy on large refunds, a 1,200.00 refund, and reviewers acting on its page."""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from approvals.models import ApprovalPolicy
from holds.mirror import sync
from holds.models import Hold
from tests.forms import fields_of
from tests.test_review_views import confirm, field_name

__all__ = ["approve_as_it_is", "confirm", "decision_posts", "large_refunds", "lowered_to", "refund", "signed_in"]


@pytest.fixture
def large_refunds(db):
    return ApprovalPolicy.objects.create(
        name="Large refunds", condition_key="amount", condition_operator="gt", condition_threshold=Decimal(500),
        approvals_required=2,
    )


@pytest.fixture
def refund(platform_state, platform_client):
    """A 1,200.00 refund, mirrored from the platform."""
    platform_state.add_hold("default", {
        "hold_id": "h_big", "question": "Refund 1,200.00 on order A-9001?",
        "items": [{"id": "call_1", "title": "Refund A-9001", "data": {"order_id": "A-9001", "amount": "1200.00"}}],
    })
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id="h_big")


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def lowered_to(hold, amount):
    return {field_name(hold, 0, "amount"): amount}


def approve_as_it_is(client, hold):
    page = client.get(reverse("hold", args=[hold.pk])).content.decode()
    return client.post(reverse("hold-approve", args=[hold.pk]), fields_of(page, "approve-as-is-form"))


def decision_posts(platform_state):
    return [r for r in platform_state.requests if r["method"] == "POST" and r["path"].endswith("/decision")]


