"""The Slack app with a real worker: a press through the request URL decides once and replaces the message, and a
hold decided on the page updates the message the bot posted."""

import re

import pytest
from django.db import transaction
from django.utils import timezone

from holds.links import action_links
from holds.models import Decision, DecisionChannel
from notifications import notify
from notifications.models import SlackMessage, WebhookChannel
from reviewqueue import roles
from slackapp.models import SlackAccount
from tests.helpers.fake_slack import BOT_TOKEN, CHANNEL, button_press, post_press, signed, slack_person
from tests.helpers.reviewing import confirm
from tests.helpers.users import make_user
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
    hold = samples["h_17"]
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
    hold = samples["h_17"]
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


def test_a_slack_user_decides_only_once_an_account_with_their_email_connected_them(
    celery_processes, samples, alice, slack_bot, slack_env, platform_state, client, immediate_delivery
):
    """The attack of issue 45: mallory's connect link opened by carol, signed in, must not make mallory carol."""
    celery_processes("worker", **slack_env)
    slack_bot.people["U0MALLORY"] = slack_person("U0MALLORY", "mallory", "mallory@elsewhere.example")
    carol = make_user("carol", roles.REVIEWERS)
    hold = samples["h_17"]

    def press_as(slack_user_id):
        value = action_links.make(hold, "approve", channel=DecisionChannel.SLACK)
        pressed = button_press(value, "approve", slack_bot.response_url(), user=slack_user_id)
        assert post_press(client, *signed(pressed)).status_code == 200
        answer = wait_until(lambda: slack_bot.texts(pressed["response_url"]))[0]
        return re.search(r"<http[^|>]*(/slack/connect/[^|>]+)\|Connect your Slack account>", answer)[1]

    mallorys_link = press_as("U0MALLORY")
    client.force_login(carol)
    opened, connected = client.get(mallorys_link), client.post(mallorys_link)
    press_as("U0MALLORY")  # mallory's next press is offered a connect link again: it decides nothing
    nothing_linked = not SlackAccount.objects.exists() and not Decision.objects.exists()

    alices_link = press_as("U0ALICE")
    client.force_login(alice)
    approved = client.post(alices_link)

    assert (opened.status_code, connected.status_code) == (403, 403) and nothing_linked
    assert b"mallory" in connected.content and b"another email in Slack" in connected.content
    assert approved.status_code == 200 and b"You approved it" in approved.content
    assert SlackAccount.objects.get().user == alice and Decision.objects.get().reviewer == alice
    wait_until(lambda: len(posted_decisions(platform_state, hold)) == 1)
