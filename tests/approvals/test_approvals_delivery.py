"""Approvals and delivery with a real Celery worker: the round's last approval sends exactly one POST, races
included."""

import functools

import pytest
from django.urls import reverse

from approvals.models import Approval
from holds.models import Decision
from reviewqueue import roles
from tests.helpers.approvals_setup import confirm, decision_posts, lowered_to, signed_in
from tests.helpers.concurrently import at_once
from tests.helpers.forms import fields_of
from tests.helpers.users import make_user
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker(celery_processes, settings):
    settings.UNDO_SECONDS = 0  # these tests are about delivery; Undo has its own
    return celery_processes("worker", UNDO_SECONDS="0")


def applied(hold):
    return wait_until(lambda: Decision.objects.filter(hold=hold, state="applied").first())


def test_two_approvals_reach_the_platform_as_one_post_with_the_final_data(
    alice, bob, large_refunds, refund, platform_state, worker
):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    nothing_yet = decision_posts(platform_state) == []
    bobs = signed_in(bob)
    page = bobs.get(reverse("hold", args=[refund.pk])).content.decode()

    bobs.post(reverse("hold-approve", args=[refund.pk]), fields_of(page, "approve-as-is-form"))
    decision = applied(refund)

    assert nothing_yet
    assert [post["body"] for post in decision_posts(platform_state)] == [
        {
            "items": [{"id": "call_1", "action": "edit", "data": {"order_id": "A-9001", "amount": "1000.00"}}],
            "decided_by": "alice@example.com, bob@example.com",
        }
    ]
    assert decision.reviewer == bob


def test_two_second_approvers_at_the_same_moment_make_one_decision_and_one_delivery(
    alice, bob, large_refunds, refund, platform_state, worker
):
    carol = make_user("carol", roles.REVIEWERS)
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    clients = [signed_in(bob), signed_in(carol)]
    forms = [
        fields_of(client.get(reverse("hold", args=[refund.pk])).content.decode(), "approve-as-is-form")
        for client in clients
    ]

    def approve(client, form):
        return client.post(reverse("hold-approve", args=[refund.pk]), form).status_code

    answers = at_once(*(functools.partial(approve, client, form) for client, form in zip(clients, forms, strict=True)))
    decision = applied(refund)

    assert sorted(answers) == [302, 409]
    assert Decision.objects.filter(hold=refund).count() == 1
    assert Approval.objects.filter(hold=refund).count() == 2 and decision.approvals.count() == 2
    assert len(decision_posts(platform_state)) == 1
    assert decision_posts(platform_state)[0]["body"]["decided_by"] == f"alice@example.com, {decision.reviewer.email}"
