"""In a real Chromium, Review Queue registers its service worker and has nothing in the way of being installed;
without a network, a page shows the offline page, which passes axe."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.helpers import browser as chromium
from tests.helpers.browser import accessibility_problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_site_installs_as_an_app_and_shows_the_offline_page_without_a_network(browser, live_server, alice):
    page = chromium.signed_in_page(browser, live_server, "alice", bypass_csp=True)  # axe's tag on the offline page
    worker = page.evaluate("navigator.serviceWorker.ready.then((registration) => registration.active.scriptURL)")
    devtools = page.context.new_cdp_session(page)

    installability = devtools.send("Page.getInstallabilityErrors")
    manifest = devtools.send("Page.getAppManifest")

    assert worker == live_server.url + reverse("webapp:service_worker")
    assert installability == {"installabilityErrors": []}
    assert manifest["url"] == live_server.url + reverse("webapp:manifest") and manifest["errors"] == []
    assert page.problems == []

    page.context.set_offline(True)
    page.goto(reverse("queue"))
    expect(page.get_by_role("heading", name="You're offline")).to_be_visible()
    expect(page.get_by_text("deciding needs a connection")).to_be_visible()
    problems = accessibility_problems(page, "the offline page")
    page.context.set_offline(False)
    page.get_by_role("link", name="Try the queue again").click()
    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()

    assert problems == []
    chromium.close_quietly(page.context)
