"""What the approval tests share: reviewers acting on a hold's page (the large refunds policy and its refund are
fixtures)."""

from django.test import Client
from django.urls import reverse

from holds.mirror import sync
from holds.models import Hold
from tests.helpers.forms import fields_of
from tests.helpers.reviewing import confirm, field_name

__all__ = ["add_refund", "approve_as_it_is", "confirm", "decision_posts", "lowered_to", "signed_in"]


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


def add_refund(platform_client, platform_state, hold_id, amount, **fields) -> Hold:
    """A refund hold of ``amount`` on an order of its own (A-<hold_id>), asked on the platform and mirrored by a sync
    (``fields`` add to it)."""
    platform_state.add_hold(
        "default",
        {
            "hold_id": hold_id,
            "capability": "refund",
            # Each hold on an order of its own: two refunds of one order are possible duplicates.
            "items": [
                {"id": f"A-{hold_id}", "title": "refund", "data": {"order_id": f"A-{hold_id}", "amount": amount}}
            ],
            **fields,
        },
    )
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id=hold_id)
