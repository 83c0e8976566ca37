"""Fixtures of the Slack app's tests: the fake Slack, the app's settings pointing at it, linked Slack users."""

import pytest
from django.utils import timezone

from slackapp.models import SlackAccount
from tests.helpers.fake_slack import BOT_TOKEN, SIGNING_SECRET, TEAM, FakeSlack


@pytest.fixture
def fake_slack():
    with FakeSlack() as slack:
        yield slack


@pytest.fixture
def slack_app(fake_slack, settings):
    """The Slack app on (its signing secret set), its Web API the fake's; no bot token."""
    settings.SLACK_SIGNING_SECRET = SIGNING_SECRET
    settings.SLACK_API_URL = fake_slack.api_url
    settings.SLACK_BOT_TOKEN = ""
    return fake_slack


@pytest.fixture
def slack_bot(slack_app, settings):
    """The Slack app with a bot token: messages posted and updated by the bot, Reject asking for a reason."""
    settings.SLACK_BOT_TOKEN = BOT_TOKEN
    return slack_app


def link(user, slack_user_id: str) -> SlackAccount:
    return SlackAccount.objects.create(team_id=TEAM, slack_user_id=slack_user_id, user=user, linked_at=timezone.now())


@pytest.fixture
def alice_in_slack(alice):
    return link(alice, "U0ALICE")


@pytest.fixture
def bob_in_slack(bob):
    return link(bob, "U0BOB")


@pytest.fixture
def slack_env(fake_slack):
    """The environment a worker needs for the Slack app to talk to the fake."""
    return {"SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": fake_slack.api_url, "UNDO_SECONDS": "0"}
