"""Four eyes in a real Chromium: two reviewers give the two approvals a large refund needs, and the platform gets one
POST."""

import pytest
from playwright.sync_api import expect

from tests.helpers import approvals_setup
from tests.helpers.browser import applied, close_quietly, signed_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def reviewers(browser, live_server, alice, bob, celery_processes, immediate_delivery):
    """Alice's and Bob's pages, each signed in through the login page, with a worker delivering decisions."""
    celery_processes("worker")
    pages = [signed_in_page(browser, live_server, name) for name in ("alice", "bob")]
    yield pages
    for page in pages:
        close_quietly(page.context)


def test_two_reviewers_approve_a_large_refund_and_the_platform_receives_one_post(
    reviewers, large_refunds, refund, platform_state
):
    alices, bobs = reviewers

    alices.goto(f"/holds/{refund.pk}/")
    expect(alices.locator(".approval-reason")).to_have_text(
        "Needs 2 approvals: amount 1,200.00 > 500 (policy “Large refunds”)"
    )
    alices.get_by_label("amount").fill("1000.00")
    alices.get_by_role("radio", name="Approve").check()
    alices.get_by_role("button", name="Review decision").click()
    alices.get_by_role("button", name="Send decision").click()
    expect(alices.locator("#approved-already")).to_contain_text("You gave approval 1 of 2")
    expect(alices.locator("#decide-form")).to_have_count(0)
    expect(alices.get_by_role("button", name="Reject and send now")).to_be_visible()  # all she may still do
    nothing_sent_yet = approvals_setup.decision_posts(platform_state) == []

    bobs.goto(f"/holds/{refund.pk}/")
    expect(bobs.locator(".approval-count")).to_have_text("1 of 2 approvals: alice approved 1,200.00 → 1,000.00")
    expect(bobs.locator(".round-items .after")).to_have_text("1000.00")
    bobs.get_by_role("button", name="Approve as it is").click()

    assert nothing_sent_yet
    assert applied(bobs, platform_state, refund) == [
        {
            "items": [{"id": "call_1", "action": "edit", "data": {"order_id": "A-9001", "amount": "1000.00"}}],
            "decided_by": "alice@example.com, bob@example.com",
        }
    ]
    assert len(approvals_setup.decision_posts(platform_state)) == 1
    assert not alices.problems and not bobs.problems
