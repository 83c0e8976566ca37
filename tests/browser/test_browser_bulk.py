"""A reviewer decides several holds at once in a real Chromium: tick them, check the summary, send."""

import pytest
from playwright.sync_api import expect

from holds.mirror import sync
from holds.models import Decision, Hold
from holds.related import safeguard
from tests.helpers import browser as chromium
from tests.helpers.waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_tick_holds_with_x_and_shift_click_then_approve_them_together(
    reviewer_page, samples, platform_state, platform_client, settings
):
    settings.UNDO_SECONDS = 0  # delivery at once: this test is about the selection and the summary
    page = reviewer_page
    rows = page.locator("tr.hold-row")
    boxes = page.locator("tr.hold-row input[name=hold]")
    chosen = [int(rows.nth(n).get_attribute("id").removeprefix("row-")) for n in (0, 2, 3, 4)]

    page.keyboard.press("j")
    page.keyboard.press("x")
    boxes.nth(2).click()
    boxes.nth(4).click(modifiers=["Shift"])

    expect(page).to_have_url(f"{page.url.split('?')[0]}")  # ticking a box opens no hold
    expect(page.get_by_text("4 selected")).to_be_visible()
    platform_state.add_hold("default", {"question": "A fresh refund request", "expires_at": None})
    sync.sync_env(platform_client, "default")
    expect(page.get_by_text("1 new hold arrived since you opened the queue.")).to_be_visible(timeout=10000)
    expect(page.locator("tr.hold-row input[name=hold]:checked")).to_have_count(4)  # the refresh kept the ticks

    page.get_by_label("Comment for every item").fill("Checked against the order history.")
    page.get_by_role("button", name="Approve selected").click()

    # The sample holds' A-1001 refunds among them are possible duplicates: the bulk approve leaves them out.
    duplicates = [hold.pk for hold in Hold.objects.filter(pk__in=chosen) if safeguard.guard(hold).needed]
    sent = [pk for pk in chosen if pk not in duplicates]
    expect(page.get_by_role("heading", name="Check your decisions")).to_be_visible()
    expect(page.locator(".bulk-included > li")).to_have_count(len(sent))
    if duplicates:
        expect(page.get_by_text("possible duplicate of").first).to_be_visible()
    page.wait_for_load_state("domcontentloaded")  # the keys are app.js's, deferred past the heading's showing
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", name=f"{len(sent)} decision")).to_be_visible()

    wait_until(lambda: Decision.objects.filter(state="applied").count() == len(sent), timeout=30)
    for hold in Hold.objects.filter(pk__in=sent):
        assert chromium.decision_bodies(platform_state, hold.hold_id) == [
            {
                "items": [
                    {"id": item.item_id, "action": "approve", "comment": "Checked against the order history."}
                    for item in hold.items.all()
                ],
                "decided_by": "alice@example.com",
            }
        ]
    assert sorted(Decision.objects.values_list("hold", flat=True)) == sorted(sent)
    assert not page.problems
