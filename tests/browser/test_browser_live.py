"""Pages that update themselves, in real Chromium under the ASGI server: a new hold reaches an open queue and a
colleague's decision an open hold page within 1.5 s, without a reload; with the stream cut, the polls still do."""

import time

import pytest
from playwright.sync_api import expect

from holds.deciding import decisions, review
from holds.mirror import sync
from tests.helpers import browser as chromium

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PUSHED_WITHIN_MS = 1500


def live(page):
    """Wait for the page's stream to be open (static/live/live.js marks the body)."""
    expect(page.locator("body")).to_have_attribute("data-live", "on")


def new_hold(platform_state, platform_client, question):
    platform_state.add_hold("default", {"question": question})
    sync.sync_env(platform_client, "default")  # committed when it returns
    return time.monotonic()


@pytest.fixture
def browsing_page(browser, asgi_live_server, samples, alice):
    """Alice, signed in, on the queue served by uvicorn."""
    page = chromium.signed_in_page(browser, asgi_live_server)
    yield page
    chromium.close_quietly(page.context)


def test_a_new_hold_shows_in_an_open_queue_within_a_second_and_a_half_of_reaching_the_mirror(
    browsing_page, platform_state, platform_client
):
    live(browsing_page)

    mirrored = new_hold(platform_state, platform_client, "Refund the pushed order P-1?")

    expect(browsing_page.get_by_text("Refund the pushed order P-1?")).to_be_visible(timeout=PUSHED_WITHIN_MS)
    assert time.monotonic() - mirrored < PUSHED_WITHIN_MS / 1000
    assert browsing_page.problems == []


def test_a_colleagues_decision_shows_on_an_open_hold_page_within_a_second_and_a_half(browsing_page, samples, bob):
    hold = samples["h_12"]
    chromium.open_hold(browsing_page, hold)
    live(browsing_page)

    decisions.submit(hold, bob, review.rejecting_all(hold, "Not this one."))
    decided = time.monotonic()

    expect(browsing_page.locator("#decision-status")).to_contain_text("Bob Brown", timeout=PUSHED_WITHIN_MS)
    assert time.monotonic() - decided < PUSHED_WITHIN_MS / 1000
    expect(browsing_page.locator("#decide-form")).to_have_count(0)  # no form left to send
    assert browsing_page.problems == []


def test_with_the_stream_cut_the_queue_still_updates_by_polling(
    browser, asgi_live_server, alice, samples, platform_state, platform_client
):
    page = chromium.signed_in_page(browser, asgi_live_server)
    page.context.route("**/events/**", lambda route: route.abort())
    page.reload()
    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()

    new_hold(platform_state, platform_client, "Refund the polled order P-2?")

    expect(page.get_by_text("Refund the polled order P-2?")).to_be_visible(timeout=8000)  # the 5 s poll
    assert page.locator("body[data-live]").count() == 0
    chromium.close_quietly(page.context)
