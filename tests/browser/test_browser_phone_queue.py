"""The queue on a phone shows holds first: the filters fold behind one "Filters" control saying how many are on, the
bulk bar waits for a ticked hold, and three holds fit the first screen of a 390 × 844 phone. A desk sees the queue as
it was, and the filters work without JavaScript."""

import pytest
from playwright.sync_api import expect

from tests.helpers import browser as chromium
from tests.helpers.browser import VIEWPORTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_on_a_phone_three_holds_come_first_and_the_filters_and_bulk_bar_wait_to_be_asked_for(
    browser, live_server, samples, alice
):
    phone = VIEWPORTS["phone"]
    page = chromium.signed_in_page(browser, live_server, viewport=phone, has_touch=True, is_mobile=True)
    fold = page.locator("details[data-fold-filters]")
    bulk_bar = page.get_by_role("group", name="Selected holds")
    rows = page.locator("tr.hold-row")

    expect(fold.locator("summary")).to_have_text("Filters none active")
    expect(page.get_by_label("Search")).to_be_hidden()
    expect(bulk_bar).to_be_hidden()
    first_screen = [rows.nth(index).bounding_box() for index in range(3)]
    assert all(box["y"] >= 0 and box["y"] + box["height"] <= phone["height"] for box in first_screen), first_screen

    rows.nth(0).locator("input[name=hold]").check()
    expect(bulk_bar).to_be_in_viewport()
    expect(page.get_by_role("button", name="Approve selected")).to_be_in_viewport()
    rows.nth(0).locator("input[name=hold]").uncheck()
    expect(bulk_bar).to_be_hidden()

    fold.locator("summary").focus()  # the keyboard opens the fold as it opens any disclosure
    page.keyboard.press("Enter")
    page.get_by_label("Min amount").fill("100")
    page.get_by_label("Claim").select_option("unclaimed")
    page.get_by_role("button", name="Filter").click()
    expect(fold.locator("summary")).to_have_text("Filters 2 active")
    expect(page.get_by_label("Min amount")).to_be_hidden()  # folded again on the filtered page
    expect(rows).to_have_count(2)  # h_13 (129.00) and h_18 (240.00)
    assert not page.problems, page.problems
    chromium.close_quietly(page.context)

    without_script = chromium.signed_in_page(browser, live_server, viewport=phone, java_script_enabled=False)
    without_script.get_by_label("Min amount").fill("100")
    without_script.get_by_role("button", name="Filter").click()
    expect(without_script.locator("tr.hold-row")).to_have_count(2)
    expect(without_script.locator("details[data-fold-filters] summary")).to_have_text("Filters 1 active")
    chromium.close_quietly(without_script.context)

    desk = chromium.signed_in_page(browser, live_server, viewport=VIEWPORTS["desktop"])
    expect(desk.locator("details[data-fold-filters] summary")).to_be_hidden()
    expect(desk.get_by_label("Search")).to_be_visible()
    expect(desk.get_by_role("group", name="Selected holds")).to_be_visible()
    assert not desk.problems, desk.problems
    chromium.close_quietly(desk.context)
