"""Approve and remember, in a real Chromium: a reviewer remembers a 12.00 refund's approval, the next 9.50 refund of
that agent approves itself in her name, a 20.00 one and another agent's wait for people, and Revoke stops it."""

import re

import pytest
from playwright.sync_api import expect

from approvals.models import RememberAllowance
from holds.deciding import by_policy
from holds.mirror import sync
from holds.models import Decision, Hold
from tests.helpers.browser import close_quietly, signed_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def add_refund(platform_client, platform_state, hold_id, amount, agent="refund-bot") -> Hold:
    platform_state.add_hold(
        "default",
        {
            "hold_id": hold_id,
            "agent": agent,
            "capability": "refund",
            "question": f"Refund {amount}?",
            # An order of each hold's own: two refunds of one order are possible duplicates, never remembered away.
            "items": [
                {"id": f"A-{hold_id}", "title": "refund", "data": {"order_id": f"A-{hold_id}", "amount": amount}}
            ],
        },
    )
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id=hold_id)


def test_a_remembered_12_approval_approves_the_next_9_50_in_her_name_until_she_revokes_it(
    browser, live_server, alice, platform_client, platform_state
):
    RememberAllowance.objects.create(agent_pattern="refund-bot", capability_pattern="refund")
    first = add_refund(platform_client, platform_state, "h_first", "12.00")
    page = signed_in_page(browser, live_server)
    try:
        page.goto(f"/holds/{first.pk}/")
        page.get_by_role("radio", name="Approve").check()
        page.get_by_role("button", name="Review decision").click()
        expect(page.locator("#remember-what")).to_contain_text(
            "Holds of agent refund-bot, capability refund in env default, each amount at most 12.00"
        )
        page.get_by_label(re.compile("Remember for 1 hour")).check()
        page.get_by_role("button", name="Send decision").click()
        expect(page.get_by_text("Decided by")).to_be_visible()

        like = add_refund(platform_client, platform_state, "h_like", "9.50")
        larger = add_refund(platform_client, platform_state, "h_larger", "20.00")
        other = add_refund(platform_client, platform_state, "h_other", "9.50", agent="other-bot")
        page.goto("/")
        expect(page.locator("tr", has_text="Refund 9.50?").first).to_contain_text(
            "under Alice Adams's remembered approval (until"
        )
        made = by_policy.approve_due()

        assert [decision.hold for decision in made] == [like]
        page.goto(f"/holds/{like.pk}/")
        expect(page.locator("#decided-by-policy")).to_contain_text(
            re.compile(r"Approved by Alice Adams's remembered approval \(until (\d{4}-\d\d-\d\d )?\d\d:\d\d\)")
        )
        assert not Decision.objects.filter(hold__in=[larger, other]).exists()

        page.goto("/notifications/preferences")
        page.get_by_role("link", name="Remembered approvals").click()
        expect(page.locator("#remembered-list")).to_contain_text("1")  # matched so far
        page.get_by_role("button", name="Revoke").click()
        expect(page.locator("#remembered-list")).to_contain_text("Stopped: revoked by Alice Adams")
        again = add_refund(platform_client, platform_state, "h_again", "9.50")

        assert by_policy.approve_due() == []
        assert not Decision.objects.filter(hold=again).exists()
        assert not page.problems
    finally:
        close_quietly(page.context)
