"""System notifications from an open tab, in a real Chromium under the ASGI server (live streams): Alice turns them
on under Preferences; with the queue open in a tab she is not looking at, a hold Bob hands her shows as a system
notification, once, and one that arrives while she looks does not pop up."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from holds.handover import assignments
from notifications.models import Notification
from tests.helpers import browser as chromium
from tests.helpers.waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Headless Chromium has no system notifications (its permission is always "denied") and its tabs are never hidden:
# the page's Notification stands in for the system's, asking as the browser would (granted here, for the rest of the
# session) and recording what it is asked to show; the tab is hidden when the test says so.
HIDDEN_AND_RECORDED = """
Object.defineProperty(document, "hidden", { configurable: true, get: () => window.testHidden === true });
window.shownNotifications = [];
window.Notification = class {
  constructor(title, options) { window.shownNotifications.push([title, options.tag]); }
  addEventListener() {}
  close() {}
  static get permission() { return sessionStorage.getItem("test-permission") || "default"; }
  static requestPermission() {
    sessionStorage.setItem("test-permission", "granted");
    return Promise.resolve("granted");
  }
};
"""


def test_a_hold_handed_to_alice_shows_as_a_system_notification_while_her_queue_tab_is_hidden(
    browser, asgi_live_server, alice, bob, samples
):
    page = chromium.signed_in_page(browser, asgi_live_server, "alice")
    page.context.add_init_script(HIDDEN_AND_RECORDED)
    page.goto(reverse("notification-preferences"))
    page.get_by_role("button", name="Notify me on this device").click()
    expect(page.locator("#desktop-state")).to_have_text("On for this device.")
    page.goto(reverse("queue"))
    expect(page.locator("body")).to_have_attribute("data-live", "on")

    page.evaluate("window.testHidden = true")
    assignments.assign(samples["h_13"], alice, "Can you take this one?", by=bob)
    told = Notification.objects.get(user=alice, channel="in_app", hold=samples["h_13"])
    wait_until(lambda: page.evaluate("window.shownNotifications.length"), timeout=30)
    page.evaluate("window.testHidden = false")
    assignments.assign(samples["h_14"], alice, "", by=bob)
    seen = Notification.objects.get(user=alice, channel="in_app", hold=samples["h_14"])
    expect(page.locator(f'#bell[data-desktop-id="{seen.pk}"]')).to_have_count(1)

    assert page.evaluate("window.shownNotifications") == [[told.title, f"review-queue-{told.pk}"]]
    assert page.problems == []
    chromium.close_quietly(page.context)
