"""Setting away with a delegate under Notifications → Preferences in a real Chromium, on a phone (390 px) and a
desktop (1366 px), checked by axe: a refused delegate is told beside its field, a good one is saved and shown."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from notifications import away
from tests.helpers import browser as chromium
from tests.helpers.browser import VIEWPORTS, accessibility_problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_alice_sets_herself_away_with_bob_standing_in_and_sees_it_shown(browser, live_server, alice, bob, viewport):
    page = chromium.signed_in_page(browser, live_server, "alice", viewport=VIEWPORTS[viewport], bypass_csp=True)
    problems = []

    page.goto(reverse("notification-preferences"))
    page.get_by_label("Away until").fill("2099-01-01T09:00")
    page.get_by_label("Delegate (username, optional)").fill("alice")
    page.get_by_role("button", name="Save away").click()
    expect(page.locator("#delegate-error")).to_have_text("Delegate: choose someone else to stand in for you")
    expect(page.get_by_label("Delegate (username, optional)")).to_have_attribute("aria-invalid", "true")
    problems += accessibility_problems(page, f"preferences with a refused delegate at {viewport}")
    # The refusal is a 400, which Chromium notes as a console error: the only one expected.
    assert page.problems == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]
    page.problems.clear()

    page.get_by_label("Delegate (username, optional)").fill("bob")
    page.get_by_role("button", name="Save away").click()
    expect(page.get_by_text("You are away; your messages are rerouted.")).to_be_visible()
    expect(page.locator("#away-now")).to_contain_text("bob is standing in")
    expect(page.get_by_role("button", name="I'm back")).to_be_visible()
    problems += accessibility_problems(page, f"preferences while away at {viewport}")
    assert not page.problems, page.problems
    chromium.close_quietly(page.context)

    assert away.of(alice).delegate == bob
    assert not problems, "\n".join(problems)
