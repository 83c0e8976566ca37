"""The Slack app with a real worker: a press through the request URL decides once and replaces the message, and a
hold decided on the page updates the message the bot posted."""

import pytest
from django.db import transaction
from django.utils import timezone

from holds.links import action_links
from holds.models import Decision, DecisionChannel
from notifications import notify
from notifications.models import SlackMessage, WebhookChannel
from tests.helpers.fake_slack import BOT_TOKEN, CHANNEL, button_press, post_press, signed
from tests.helpers.reviewing import confirm
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def posted_decisions(platform_state, hold):
    return [
        r for r in platform_state.requests if r["method"] == "POST" and f"/holds/{hold.hold_id}/decision" in r["path"]
    ]


def test_a_linked_press_decides_once_and_the_message_says_who_decided(
    celery_processes, samples, alice_in_slack, slack_app, slack_env, platform_state, client, immediate_delivery
):
    celery_processes("worker", **slack_env)
    hold = samples["h_12"]
    value = action_links.make(hold, "approve", channel=DecisionChannel.SLACK)
    pressed = button_press(value, "approve", slack_app.response_url())
    body, headers = signed(pressed)

    forged = post_press(client, *signed(pressed, secret="forged")).status_code
    first = post_press(client, body, headers).status_code
    replayed = post_press(client, body, headers).status_code

    decision = wait_until(lambda: Decision.objects.filter(state=Decision.State.APPLIED).first())
    replaced = wait_until(lambda: [t for t in slack_app.texts(pressed["response_url"]) if "Approved by Alice" in t])
    assert (forged, first, replayed) == (401, 200, 401)
    assert decision.reviewer == alice_in_slack.user and len(posted_decisions(platform_state, hold)) == 1
    assert "Approved by Alice Adams at" in replaced[-1]


def test_a_hold_decided_on_the_page_updates_the_message_the_bot_posted(
    celery_processes, samples, alice, alice_client, slack_bot, slack_env, immediate_delivery
):
    celery_processes("worker", **slack_env, SLACK_BOT_TOKEN=BOT_TOKEN)
    WebhookChannel.objects.create(
        name="reviews", url="https://hooks.example/x", secret="s", events=["expiring_soon"], slack_channel=CHANNEL
    )
    hold = samples["h_12"]
    with transaction.atomic():
        notify.expiring_soon([hold], timezone.now())
    message = wait_until(lambda: SlackMessage.objects.filter(hold=hold, by_bot=True).first())
    (posted,) = slack_bot.posts_to("/api/chat.postMessage")
    buttons = {e["action_id"]: e for b in posted["blocks"] if b["type"] == "actions" for e in b["elements"]}

    confirm(alice_client, hold)

    updated = wait_until(lambda: [t for t in slack_bot.texts("/api/chat.update") if "Approved by Alice" in t])
    update = slack_bot.posts_to("/api/chat.update")[-1]
    assert posted["channel"] == CHANNEL and message.ts.startswith("1700000000.")
    assert action_links.read(buttons["approve"]["value"], action_links.BUTTON_CHANNELS).hold_pk == hold.pk
    assert "url" not in buttons["approve"] and buttons["open"]["url"].endswith(f"/holds/{hold.pk}/")
    assert (update["channel"], update["ts"]) == (CHANNEL, message.ts) and "Approved by Alice Adams at" in updated[-1]
    assert [e["action_id"] for b in update["blocks"] if b["type"] == "actions" for e in b["elements"]] == ["open"]
