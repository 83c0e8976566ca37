"""In Chromium, a push the service worker receives shows as a system notification with its actions, and its Approve…
opens the one-tap page of that hold, which decides nothing until its Send.

DevTools' ``ServiceWorker.deliverPushMessage`` hands the worker a push as the browser would after decrypting it;
the push service's side (signature, encryption) is tests/notifications/test_push.py's. This is Debian's whole
Chromium, in its new headless mode: the headless shell the other browser tests use never grants notifications.
"""

import json

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from notifications import hold_links, notify, push
from notifications.models import Notification, PushSubscription
from tests.helpers import browser as chromium
from tests.helpers.browser import accessibility_problems
from tests.helpers.push_service import vapid_keys
from tests.helpers.waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WHOLE_CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def notifying_browser(playwright):
    browser = playwright.chromium.launch(
        executable_path=WHOLE_CHROMIUM, args=["--headless=new", "--no-sandbox", "--disable-gpu"]
    )
    yield browser
    browser.close()


def test_a_push_shows_a_notification_whose_approve_opens_the_holds_one_tap_page(
    notifying_browser, live_server, samples, alice, settings
):
    settings.SITE_URL = live_server.url
    hold = samples["h_17"]  # not an A-1001 refund: its Approve is a one-tap link, not the hold's page
    now = timezone.now()
    notify.expiring_soon([hold], now)
    reminder = Notification.objects.get(hold=hold, user=alice, channel="in_app")  # what a push would say
    [links] = hold_links.links_for_many(hold, [alice], now, for_push=True)
    content = push.payload(reminder, links, hold_links.amounts_of(hold), now=now)
    page = chromium.signed_in_page(notifying_browser, live_server, "alice", permissions=["notifications"])
    devtools = page.context.new_cdp_session(page)
    registrations = []
    devtools.on("ServiceWorker.workerRegistrationUpdated", lambda event: registrations.extend(event["registrations"]))
    devtools.send("ServiceWorker.enable")
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.reload()  # now under the worker, which takes a notification's click to the page it controls
    wait_until(lambda: registrations)

    devtools.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": live_server.url, "registrationId": registrations[0]["registrationId"], "data": json.dumps(content)},
    )

    shown = "navigator.serviceWorker.ready.then((registration) => registration.getNotifications())"
    wait_until(lambda: page.evaluate(f"{shown}.then((found) => found.length)") == 1)
    title, body, actions = page.evaluate(
        f"{shown}.then(([found]) => [found.title, found.body, found.actions.map((action) => action.title)])"
    )
    assert title == f"Expiring soon: hold {hold.pk}"
    assert hold.agent in body and hold.question not in body
    assert actions == ["Approve…", "Reject…"]  # Chromium shows two: a click on the notification itself opens

    # What a click on Approve… does; a script's event, as DevTools cannot click a system notification.
    [worker] = page.context.service_workers
    worker.evaluate(
        "self.registration.getNotifications().then(([found]) => self.dispatchEvent("
        "new NotificationEvent('notificationclick', {notification: found, action: 'approve'})))"
    )

    expect(page.get_by_role("button", name="Send")).to_be_visible()
    assert page.url == content["links"]["approve"]
    assert hold.decisions.count() == 0  # opening the link decided nothing
    assert page.problems == []
    chromium.close_quietly(page.context)


def test_subscribing_a_browser_its_push_service_refuses_says_so_and_adds_nothing(
    notifying_browser, live_server, alice, settings
):
    settings.WEBPUSH_VAPID_PUBLIC_KEY, settings.WEBPUSH_VAPID_PRIVATE_KEY = vapid_keys()
    page = chromium.signed_in_page(
        notifying_browser, live_server, "alice", permissions=["notifications"], bypass_csp=True
    )
    page.goto(reverse("notification-preferences"))
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    problems = accessibility_problems(page, "the preferences with push on")

    page.get_by_label("Name this device").fill("Work laptop")
    page.get_by_role("button", name="Subscribe this device").click()

    # This machine reaches no browser vendor's push service: the browser cannot subscribe, and the page says so.
    expect(page.locator("#push-error")).to_contain_text("This browser could not subscribe")
    assert not PushSubscription.objects.exists()
    assert problems == []
    chromium.close_quietly(page.context)
