"""After approving, in a real Chromium: the run panel shows the run moved on, and the countdown has stopped."""

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import applied, open_hold

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_after_approving_with_edits_the_run_moves_on_and_the_countdown_stops(reviewer_page, samples, platform_state):
    page, hold = reviewer_page, samples["h_12"]
    open_hold(page, hold)
    expires = page.locator("dt:text-is('Expires') + dd")
    expect(page.locator("#run-status")).to_have_text("held")
    expect(expires.locator("time.countdown")).to_be_visible()
    item = page.locator("fieldset.item").first
    expect(item.locator("p.does")).to_have_text(
        "Approving: Goes ahead with amount 49.90, order_id A-1001"
    )  # jsonb orders the keys

    item.get_by_label("amount").fill("20.00")
    expect(item.locator("[data-approve-word]")).to_have_text("Approve with edits")
    item.get_by_role("radio", name="Approve with edits").check()
    item.get_by_label("Comment").fill("Half now, the rest once the lamp is back.")
    page.get_by_role("button", name="Review decision").click()
    expect(page.locator(".summary-item .action")).to_have_text(["Approve with edits"])
    page.get_by_label("I checked").check()  # h_12 is an A-1001 refund, a possible duplicate: she checked the others
    page.get_by_role("button", name="Send decision").click()

    assert applied(page, platform_state, hold)
    expect(page.locator("#run-status")).to_have_text("completed")  # reloaded by the status partial's trigger
    expect(expires).to_contain_text("Decided")
    expect(expires.locator("time.countdown")).to_have_count(0)
    sent = page.locator(".decided-items > li")
    expect(sent).to_have_count(1)
    expect(sent.locator(".action")).to_have_text("Approve with edits")
    expect(sent.locator(".before")).to_have_text("49.90")
    expect(sent.locator(".after")).to_have_text("20.00")
    expect(sent).to_contain_text("Half now, the rest once the lamp is back.")
    assert not page.problems
