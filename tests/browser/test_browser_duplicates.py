"""Approving a possible duplicate in a real Chromium: the summary names the other A-1001 refunds and asks for a
tick; sending without it is refused with a field error, nothing sent; ticked, the decision goes to the simulator."""

import pytest
from playwright.sync_api import expect

from holds.models import Decision
from tests.helpers.browser import applied, open_hold

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_approving_a_possible_duplicate_asks_for_the_tick_naming_the_others(reviewer_page, samples, platform_state):
    page = reviewer_page
    hold = samples["h_14"]
    open_hold(page, hold)
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", name="Check your decision")).to_be_visible()
    check = page.locator("#duplicate-check")
    expect(check).to_contain_text("Possible duplicate")
    for other in ("h_12", "h_13", "h_15"):
        expect(check).to_contain_text(other)

    page.get_by_role("button", name="Send decision").click()
    expect(page.locator("#duplicates-confirmed-error")).to_be_visible()
    assert not Decision.objects.filter(hold=hold).exists()

    page.get_by_label("I checked").check()
    page.get_by_role("button", name="Send decision").click()
    assert len(applied(page, platform_state, hold)) == 1
