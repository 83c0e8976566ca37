"""Connecting a Slack account in a real Chromium: the press's connect link, the sign-in, Connect, the press made."""

import re

import pytest
from playwright.sync_api import expect

from holds.links import action_links
from holds.models import Decision, DecisionChannel
from slackapp import pressing
from slackapp.models import SlackAccount
from slackapp.payloads import Press
from tests.helpers.browser import accessibility_problems_in_light_and_dark, close_quietly
from tests.helpers.fake_slack import TEAM

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_first_press_in_slack_connects_the_account_after_sign_in_and_then_approves(
    browser, live_server, samples, alice, slack_bot, settings
):
    slack_app = slack_bot  # with the bot token that reads who the Slack user is
    settings.SITE_URL = live_server.url
    hold = samples["h_17"]  # not h_12, an A-1001 refund: its Approve press opens its page
    value = action_links.make(hold, "approve", channel=DecisionChannel.SLACK)
    pressing.handle(Press(TEAM, "U0ALICE", "approve", value, slack_app.response_url()))
    connect_url = re.search(r"<(http[^|>]+)\|Connect your Slack account>", slack_app.posts_to("/respond/")[0]["text"])[
        1
    ]
    context = browser.new_context(base_url=live_server.url, bypass_csp=True)  # axe's injected tag needs it
    page = context.new_page()

    page.goto(connect_url)
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("pw")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Connect and approve")).to_be_visible()
    expect(page.locator("#slack-connect-who")).to_contain_text("Alice (@alice, U0ALICE)")
    problems = accessibility_problems_in_light_and_dark(page, "the connect page")
    page.get_by_role("button", name="Connect and approve").click()

    expect(page.locator("#slack-press-answer")).to_contain_text("You approved it")
    assert page.url.startswith(connect_url) and problems == []
    assert SlackAccount.objects.get().user == alice
    assert Decision.objects.get().reviewer == alice
    close_quietly(context)
