"""The decision form in a real Chromium: what a reviewer sees at 1366×900 and on a 390×844 phone, and how a
refused submit brings them to what needs fixing."""

import pytest
from playwright.sync_api import expect

from tests.helpers import browser as chromium
from tests.helpers.reviewing import field_name

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
ONE_ITEM_HOLDS_WITH_AN_AMOUNT = ["h_12", "h_14", "h_15", "h_16", "h_17"]


@pytest.fixture
def sign_in(browser, live_server, samples, alice):
    """A function opening a page of the given size with Alice signed in; no worker: nothing here is sent."""
    contexts = []

    def signed_in(viewport, **options):
        page = chromium.signed_in_page(browser, live_server, viewport=viewport, **options)
        contexts.append(page.context)
        return page

    yield signed_in
    for context in contexts:
        chromium.close_quietly(context)


def open_form(page, hold):
    page.goto(f"/holds/{hold.pk}/")
    expect(page.locator("#decide-form")).to_be_visible()


def bottom(locator) -> float:
    box = locator.bounding_box()
    return box["y"] + box["height"]


@pytest.mark.parametrize("hold_id", ONE_ITEM_HOLDS_WITH_AN_AMOUNT)
def test_on_a_laptop_the_amount_and_the_decision_buttons_are_above_the_fold(sign_in, samples, hold_id):
    page, hold = sign_in(LAPTOP), samples[hold_id]
    open_form(page, hold)

    amount = page.locator(f"#{field_name(hold, 0, 'amount')}")
    approve = page.locator("label.choice.approve")
    reject = page.locator("label.choice.reject")
    send = page.get_by_role("button", name="Review decision")
    assert page.evaluate("window.scrollY") == 0
    for shown in (amount, approve, reject, send):
        expect(shown).to_be_visible()
        assert bottom(shown) <= LAPTOP["height"], f"{hold_id}: bottom at {bottom(shown)}"
    assert page.problems == []


def test_every_input_sits_on_one_grid_at_one_height(sign_in, samples):
    page, hold = sign_in(LAPTOP), samples["h_16"]  # text, decimal, integer, yes/no, empty and JSON fields
    open_form(page, hold)

    inputs = page.locator("#decide-form .field-control input[type=text]")
    boxes = [inputs.nth(index).bounding_box() for index in range(inputs.count())]
    assert len(boxes) == 4  # order id, amount, quantity, note
    assert len({round(box["height"]) for box in boxes}) == 1
    assert len({round(box["x"]) for box in boxes}) == 1
    labels = page.locator("#decide-form .field-label")
    assert len({round(labels.nth(index).bounding_box()["x"]) for index in range(labels.count())}) == 1
    assert "Order id" in labels.first.inner_text() or "Order id" in page.locator("#decide-form").inner_text()


def test_yes_no_is_a_switch_with_its_word_and_empty_is_a_muted_placeholder(sign_in, samples):
    page, hold = sign_in(LAPTOP), samples["h_19"]
    open_form(page, hold)

    express = page.get_by_role("switch", name="Express")
    box = express.bounding_box()
    expect(express).to_be_checked()
    assert box["width"] <= 60 and box["height"] <= 32
    field = page.locator(".field.kind-boolean")
    expect(field).to_contain_text("Yes")
    express.click()
    expect(express).not_to_be_checked()
    expect(field).to_contain_text("No")
    expect(field).not_to_contain_text("False")
    gift_note = page.get_by_label("Gift note")
    expect(gift_note).to_have_attribute("placeholder", "empty")
    assert gift_note.bounding_box()["height"] <= 48


def test_a_json_area_grows_to_show_all_of_its_content(sign_in, samples):
    page, hold = sign_in(LAPTOP), samples["h_19"]
    open_form(page, hold)

    address = page.locator(f"#{field_name(hold, 0, 'address')}")
    expect(address).to_be_hidden()  # folded below the scalar fields
    page.get_by_text("More data: Skus, Address").click()
    expect(address).to_be_visible()
    assert "monospace" in address.evaluate("area => getComputedStyle(area).fontFamily")
    assert address.evaluate("area => area.scrollHeight <= area.clientHeight")
    before = address.bounding_box()["height"]
    address.press("Control+End")
    address.type("\n\n\n\n")
    assert address.evaluate("area => area.scrollHeight <= area.clientHeight")
    assert address.bounding_box()["height"] > before


def test_a_refused_submit_focuses_a_summary_whose_links_lead_to_each_field(sign_in, samples):
    page, hold = sign_in(LAPTOP), samples["h_12"]
    open_form(page, hold)
    amount_id = field_name(hold, 0, "amount")

    page.locator(f"#{amount_id}").fill("1,234")
    page.get_by_role("button", name="Review decision").click()

    summary = page.locator("#error-summary")
    expect(summary).to_be_focused()
    expect(summary).to_contain_text("Amount: write 1234 or 1.234")
    expect(summary).to_contain_text("Action: Choose approve or reject.")
    amount = page.locator(f"#{amount_id}")
    expect(amount).to_have_attribute("aria-invalid", "true")
    expect(amount).to_have_accessible_description(
        "2 decimal places; the agent asked 49.90 write 1234 or 1.234: a comma can't tell thousands from decimals here"
    )
    summary.get_by_role("link", name="Amount").click()
    expect(amount).to_be_focused()
    summary.get_by_role("link", name="Action").click()
    expect(page.locator("#item-0-approve")).to_be_focused()
    # Chromium logs the refused form's 422 answer as a failed load; nothing else may go wrong.
    assert [problem for problem in page.problems if "status of 422" not in problem] == []


def test_a_fixed_form_goes_on_to_the_summary(sign_in, samples):
    page, hold = sign_in(LAPTOP), samples["h_12"]
    open_form(page, hold)

    page.locator(f"#{field_name(hold, 0, 'amount')}").fill("1,234")
    page.get_by_role("button", name="Review decision").click()
    expect(page.locator("#error-summary")).to_be_focused()
    page.locator(f"#{field_name(hold, 0, 'amount')}").fill("20,00")
    page.get_by_text("Approve with edits").click()
    page.get_by_role("button", name="Review decision").click()

    expect(page.get_by_role("heading", name="Check your decision")).to_be_visible()
    expect(page.locator("main")).to_contain_text("20.00")


def test_on_a_phone_labels_keep_their_words_whole_and_nothing_scrolls_sideways(sign_in, samples):
    page = sign_in(PHONE)
    for hold_id in ("h_12", "h_16", "h_19"):
        open_form(page, samples[hold_id])

        names = page.locator("#decide-form .field-name")
        for index in range(names.count()):
            name = names.nth(index)
            lines = name.evaluate("span => span.getClientRects().length")
            assert lines == 1, f"{hold_id}: {name.inner_text()!r} breaks over {lines} lines"
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert page.locator("#decide-form").evaluate("form => form.scrollWidth <= form.clientWidth")


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_the_form_blank_unfolded_and_refused_passes_axe_in_light_and_dark(sign_in, samples, viewport):
    # The app's CSP refuses inline scripts, axe's injected tag among them.
    page, hold = sign_in(viewport, bypass_csp=True), samples["h_16"]
    open_form(page, hold)
    page.get_by_text("More data").click()
    problems = chromium.accessibility_problems_in_light_and_dark(page, "unfolded")

    page.locator(f"#{field_name(hold, 0, 'quantity')}").fill("two")
    page.get_by_role("button", name="Review decision").click()
    expect(page.locator("#error-summary")).to_be_focused()
    problems += chromium.accessibility_problems_in_light_and_dark(page, "refused")

    assert problems == []
