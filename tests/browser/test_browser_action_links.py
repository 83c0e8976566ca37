"""A one-tap link on a phone, in a real Chromium at 390 px: signed out, sign in, land on the link, send, Undo."""

import pytest
from playwright.sync_api import expect

from holds.links import action_links
from holds.models import Decision
from tests.helpers.browser import VIEWPORTS, accessibility_problems_in_light_and_dark, close_quietly

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def phone(browser, live_server, **options):
    # The app's CSP refuses inline scripts, axe's injected tag among them.
    context = browser.new_context(base_url=live_server.url, viewport=VIEWPORTS["phone"], bypass_csp=True, **options)
    return context.new_page()


def sign_in(page, username="alice"):
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("pw")
    page.get_by_role("button", name="Sign in").click()


def test_a_signed_out_reviewer_follows_an_email_link_signs_in_sends_and_undoes(
    browser, live_server, samples, alice, settings
):
    settings.SITE_URL = live_server.url
    hold = samples["h_17"]  # not h_12, an A-1001 refund: its Approve link opens its page
    approve = action_links.links_for(hold, alice).approve
    page = phone(browser, live_server)

    page.goto(approve)
    expect(page.get_by_label("Username")).to_be_visible()
    sign_in(page)
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    assert page.url == approve
    on_the_link = accessibility_problems_in_light_and_dark(page, "the link's page")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#undo-button")).to_be_visible()
    on_the_outcome = accessibility_problems_in_light_and_dark(page, "the outcome")
    page.locator("#undo-button").click()

    expect(page.locator("#decide-form")).to_be_visible()  # back on the hold page, free to decide again
    decision = Decision.objects.get()
    assert (decision.reviewer, decision.state) == (alice, Decision.State.WITHDRAWN)
    assert on_the_link == on_the_outcome == []
    close_quietly(page.context)


def test_without_javascript_a_chat_link_rejects_with_a_comment(browser, live_server, samples, bob, settings):
    settings.SITE_URL = live_server.url
    hold = samples["h_13"]
    page = phone(browser, live_server, java_script_enabled=False)

    page.goto(action_links.links_for(hold).reject)
    sign_in(page, "bob")
    page.get_by_label("Comment for the agent").fill("Both orders were refunded by the shop already")
    page.get_by_role("button", name="Send").click()

    expect(page.locator("#decision-status")).to_contain_text("Decided by")
    decision = Decision.objects.get()
    assert decision.reviewer == bob
    assert {item.comment for item in decision.items.all()} == {"Both orders were refunded by the shop already"}
    assert [item.action for item in decision.items.all()] == ["reject", "reject"]
    page.context.close()
