"""A possible duplicate in Slack: its message says so and offers Approve as a link to the hold's page; an Approve
press (on a message sent before it was flagged, say) answers with that link and decides nothing; Reject still
decides in one press. The A-1001 sample holds, mirrored by a real sync; presses handled as the worker handles them,
answered through the fake Slack over HTTP."""

import json

import pytest
from django.utils import timezone

from approvals.models import Approval
from holds.links import action_links
from holds.models import Decision, DecisionChannel
from notifications import notify, sending
from notifications.models import Notification, WebhookChannel
from slackapp import payloads, pressing
from tests.helpers.fake_slack import button_press

pytestmark = pytest.mark.django_db


def press_of(hold, action, slack, **fields):
    value = action_links.make(hold, action, channel=DecisionChannel.SLACK)
    press = payloads.read(json.dumps(button_press(value, action, slack.response_url())))
    return payloads.Press(**{**press.as_task_argument(), **fields})


def test_a_slack_approve_press_on_a_possible_duplicate_opens_its_page_and_decides_nothing(
    samples, alice_in_slack, slack_app
):
    hold = samples["h_14"]
    press = press_of(hold, "approve", slack_app)

    answer = pressing.handle(press)

    assert "Possible duplicate of h_12, h_13, h_15" in answer
    assert f"/holds/{hold.pk}/" in answer and "Nothing was sent" in answer
    assert not Decision.objects.exists() and not Approval.objects.exists()
    (ephemeral,) = slack_app.posts_to(press.response_url)
    assert f"/holds/{hold.pk}/" in json.dumps(ephemeral)


def test_a_slack_reject_press_on_a_possible_duplicate_still_decides_in_one_press(samples, alice_in_slack, slack_app):
    hold = samples["h_14"]
    pressing.handle(press_of(hold, "reject", slack_app, reason="asked twice"))

    decision = Decision.objects.get(hold=hold)
    assert [item.action for item in decision.items.all()] == ["reject"]


def test_the_slack_message_of_a_possible_duplicate_says_so_and_its_approve_opens_the_page(
    samples, slack_app, webhook_receiver, settings
):
    settings.SITE_URL = "https://review.example.com"
    hold = samples["h_15"]
    WebhookChannel.objects.create(name="slack", url=webhook_receiver.url, events=["expiring_soon"], format="slack")
    notify.expiring_soon([hold], timezone.now())
    sending.send(Notification.objects.get(channel="webhook").pk)
    blocks = json.loads(webhook_receiver.received[-1][1])["blocks"]

    # A channel's message goes to whoever reads the channel: it names only duplicates of the same env, agent and
    # capability (every team scope admitting this hold admits them); the others, of other agents, are counted.
    assert "Possible duplicate of 3 other holds" in json.dumps(blocks)
    assert "h_12" not in json.dumps(blocks)
    buttons = next(block for block in blocks if block["type"] == "actions")["elements"]
    approve = next(button for button in buttons if button["text"]["text"] == "Approve")
    assert approve["url"] == f"https://review.example.com/holds/{hold.pk}/" and "value" not in approve
    reject = next(button for button in buttons if button["text"]["text"] == "Reject")
    assert reject["value"]  # an interactive Reject: still one press
