"""Fixtures of the Slack app's tests beyond the fake Slack (tests/conftest.py): linked Slack users."""

import pytest

from tests.helpers.fake_slack import SIGNING_SECRET, linked


@pytest.fixture
def alice_in_slack(alice):
    return linked(alice, "U0ALICE")


@pytest.fixture
def bob_in_slack(bob):
    return linked(bob, "U0BOB")


@pytest.fixture
def slack_env(fake_slack):
    """The environment a worker needs for the Slack app to talk to the fake."""
    return {"SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": fake_slack.api_url, "UNDO_SECONDS": "0"}
