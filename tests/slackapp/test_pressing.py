"""A press in Slack, handled as the worker handles it (``pressing.handle``), answered through the fake Slack."""

import json
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group

from approvals.models import Approval
from audit.models import AuditEvent, EventKind
from holds.links import action_links
from holds.models import Decision, DecisionChannel, Hold
from holds.sweeps import expiry
from notifications.models import SlackMessage
from notifications.signals import holds_changed
from reviewqueue import roles
from slackapp import messages, payloads, pressing
from slackapp.models import ConnectLink, SlackAccount
from tests.helpers.fake_slack import TEAM, button_press, linked
from tests.helpers.reviewing import confirm
from tests.helpers.users import add_hold, make_user, scoped_group

pytestmark = pytest.mark.django_db

HOSTILE = "Refund <!channel> & see <https://evil.example|click here> for *everything*"


def press_of(hold, action, slack, user="U0ALICE", ts="1700000000.000001", **fields):
    value = action_links.make(hold, action, channel=DecisionChannel.SLACK)
    payload = button_press(value, action, slack.response_url(), user=user, ts=ts)
    return pressing_of(payload, **fields)


def pressing_of(payload, **fields):
    press = payloads.read(json.dumps(payload))
    return payloads.Press(**{**press.as_task_argument(), **fields})


def mrkdwn_objects(blocks):
    found = []
    for block in blocks:
        for value in [block.get("text"), *block.get("fields", []), *block.get("elements", [])]:
            if isinstance(value, dict) and value.get("type") == "mrkdwn":
                found.append(value)
    return found


def test_an_unlinked_press_gets_a_single_use_connect_link_and_no_email_match_links_it(samples, alice, slack_app):
    hold = samples["h_17"]
    press = press_of(hold, "approve", slack_app)  # U0ALICE, "alice" by name, and alice@example.com exists

    answer = pressing.handle(press)

    (ephemeral,) = slack_app.posts_to(press.response_url)
    connect = ConnectLink.objects.get()
    assert ephemeral["response_type"] == "ephemeral" and ephemeral["replace_original"] is False
    assert "/slack/connect/" in ephemeral["text"] and "Connect your Slack account" in answer
    assert (connect.team_id, connect.slack_user_id, connect.action, connect.button) == (
        TEAM,
        "U0ALICE",
        "approve",
        press.value,
    )
    assert connect.expires_at - connect.created_at == timedelta(minutes=10)
    assert not SlackAccount.objects.exists() and not Decision.objects.exists() and not Approval.objects.exists()


def test_a_linked_press_approves_once_through_the_one_path_with_the_slack_channel(samples, alice_in_slack, slack_app):
    hold = samples["h_17"]
    press = press_of(hold, "approve", slack_app)

    first = pressing.handle(press)
    again = pressing.handle(press)

    decision = Decision.objects.get()
    submitted = AuditEvent.objects.get(kind=EventKind.DECISION_SUBMITTED)
    assert decision.reviewer == alice_in_slack.user and [i.action for i in decision.items.all()] == ["approve"]
    assert submitted.payload["channel"] == "slack" and submitted.actor == alice_in_slack.user
    assert "You approved it" in first and "Decided by Alice Adams" in again and "nothing was sent" in again
    assert SlackMessage.objects.get().response_url == press.response_url


def test_the_message_is_replaced_for_everyone_with_who_decided_and_the_agents_text_stays_inert(
    platform_state, platform_client, alice_in_slack, slack_app, immediate_delivery
):
    hold = add_hold(platform_state, platform_client, "refunds-bot", question=HOSTILE)
    press = press_of(hold, "approve", slack_app)
    pressing.handle(press)

    replaced = messages.refresh([hold.pk])
    again = messages.refresh([hold.pk])

    replacement = slack_app.posts_to(press.response_url)[-1]
    words = " ".join(slack_app.texts(press.response_url)[-1:])
    buttons = [e for b in replacement["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert (replaced, again) == (1, 0)  # the same state is never sent twice
    assert replacement["replace_original"] is True and "Approved by Alice Adams at" in words
    assert "&lt;!channel&gt; &amp; see &lt;https://evil.example|click here&gt;" in words and "<!channel>" not in words
    assert all(text["verbatim"] for text in mrkdwn_objects(replacement["blocks"]))
    assert [button["action_id"] for button in buttons] == ["open"]  # no undo window: nothing more to press
    assert buttons[-1]["url"].endswith(f"/holds/{hold.pk}/")


def test_four_eyes_across_two_linked_people_records_the_first_and_the_second_decides(
    refund, large_refunds, alice_in_slack, bob_in_slack, slack_app
):
    large_refunds.later_approver_group = Group.objects.create(name="Finance leads")
    large_refunds.save()
    fiona = make_user("fiona", roles.REVIEWERS, "Finance leads", first_name="Fiona")
    linked(fiona, "U0FIONA")

    alices = pressing.handle(press_of(refund, "approve", slack_app))
    bobs = pressing.handle(press_of(refund, "approve", slack_app, user="U0BOB"))
    nothing_yet = not Decision.objects.exists()
    fionas = pressing.handle(press_of(refund, "approve", slack_app, user="U0FIONA"))

    assert alices == "1 of 2 approvals: yours is recorded; the next approval can come from Finance leads."
    assert "Finance leads" in bobs and "Nothing was sent" in bobs and nothing_yet
    assert "You approved it" in fionas
    decision = Decision.objects.get()
    assert decision.reviewer == fiona and [a.approver for a in decision.approvals.order_by("pk")] == [
        alice_in_slack.user,
        fiona,
    ]
    undo = slack_app.posts_to("/respond/1")[0]["blocks"][1]["elements"][0]
    assert undo["action_id"] == "undo" and undo["value"] == f"approval:{Approval.objects.order_by('pk').first().pk}"


def test_a_hold_out_of_the_pressers_scope_answers_as_if_unknown(samples, slack_app):
    carol = make_user("carol", roles.REVIEWERS)
    carol.groups.add(scoped_group("Other team", agent="nobody-here-*"))
    linked(carol, "U0CAROL")

    answer = pressing.handle(press_of(samples["h_17"], "approve", slack_app, user="U0CAROL"))

    assert answer == "No such hold." and not Decision.objects.exists() and not SlackMessage.objects.exists()


def test_a_press_on_a_hold_that_expired_meanwhile_sends_nothing_and_the_message_says_so(
    samples, alice_in_slack, slack_app
):
    hold = next(h for h in samples.values() if h.expires_at)
    press = press_of(hold, "approve", slack_app)

    with time_machine.travel(hold.expires_at + timedelta(seconds=5), tick=False):
        answer = pressing.handle(press)
        messages.refresh([hold.pk])

    words = slack_app.texts(press.response_url)
    assert "expired" in answer and "Nothing was sent" in answer and not Decision.objects.exists()
    assert "Expired, nobody decided" in words[-1]
    assert Hold.objects.get(pk=hold.pk).status == "expired"  # the press's fresh read learnt it from the platform


def test_reject_without_a_bot_token_rejects_with_no_comment(samples, alice_in_slack, slack_app):
    pressing.handle(press_of(samples["h_17"], "reject", slack_app))

    decision = Decision.objects.get()
    assert [(i.action, i.comment) for i in decision.items.all()] == [("reject", "")]
    assert not slack_app.posts_to("/api/views.open")


def test_reject_with_a_bot_token_asks_for_a_reason_in_a_modal_then_rejects_with_it(samples, alice_in_slack, slack_bot):
    hold = samples["h_17"]
    press = press_of(hold, "reject", slack_bot)

    asked = pressing.handle(press)
    (opened,) = slack_bot.posts_to("/api/views.open")
    nothing_yet = not Decision.objects.exists()
    submission = {
        "type": "view_submission",
        "team": {"id": TEAM},
        "user": {"id": "U0ALICE", "team_id": TEAM},
        "view": {
            "callback_id": opened["view"]["callback_id"],
            "private_metadata": opened["view"]["private_metadata"],
            "state": {"values": {"reason": {"reason_input": {"type": "plain_text_input", "value": "Paid <twice>"}}}},
        },
    }
    pressing.handle(pressing_of(submission))
    messages.refresh([hold.pk])

    assert asked == "" and nothing_yet and opened["trigger_id"] == press.trigger_id
    decision = Decision.objects.get()
    assert [(i.action, i.comment) for i in decision.items.all()] == [("reject", "Paid <twice>")]
    assert "Rejected by Alice Adams at" in slack_bot.texts(press.response_url)[-1]
    assert "Paid &lt;twice&gt;" in slack_bot.texts(press.response_url)[-1]


def test_undo_in_the_window_takes_the_decision_back_and_the_buttons_return(
    samples, alice_in_slack, slack_app, settings
):
    settings.UNDO_SECONDS = 10
    hold = samples["h_17"]
    press = press_of(hold, "approve", slack_app)
    pressing.handle(press)
    messages.refresh([hold.pk])
    decided = slack_app.posts_to(press.response_url)[-1]
    undo = next(
        e for b in decided["blocks"] if b["type"] == "actions" for e in b["elements"] if e["action_id"] == "undo"
    )

    answer = pressing.handle(payloads.Press(TEAM, "U0ALICE", "undo", undo["value"], slack_app.response_url()))
    messages.refresh([hold.pk])

    assert Decision.objects.get().state == Decision.State.WITHDRAWN and "Undone" in answer
    reopened = slack_app.posts_to(press.response_url)[-1]
    pressable = [e["action_id"] for b in reopened["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert pressable == ["approve", "reject", "open"]


def test_undo_of_ones_own_approval_after_its_window_tells_the_presser_it_is_too_late(
    refund, large_refunds, alice_in_slack, slack_app, settings
):
    settings.UNDO_SECONDS = 10
    pressing.handle(press_of(refund, "approve", slack_app))
    approval = Approval.objects.get()
    undo = payloads.Press(TEAM, "U0ALICE", "undo", f"approval:{approval.pk}", slack_app.response_url())

    with time_machine.travel(approval.created_at + timedelta(seconds=11)):
        answer = pressing.handle(undo)

    assert answer.startswith("Too late") and Approval.objects.filter(pk=approval.pk).exists()
    assert slack_app.texts(undo.response_url)[-1].startswith("Too late")


def test_a_button_we_did_not_make_for_slack_decides_nothing(samples, alice_in_slack, slack_app):
    hold = samples["h_17"]
    chat_link = action_links.make(hold, "approve")  # a one-tap link's token, not a button's
    slack_reject = action_links.make(hold, "reject", channel=DecisionChannel.SLACK)

    answers = [
        pressing.handle(payloads.Press(TEAM, "U0ALICE", "approve", value, slack_app.response_url()))
        for value in [chat_link, slack_reject, "forged", chat_link + "x"]
    ]

    assert set(answers) == {pressing.NOT_OURS} and not Decision.objects.exists()


def test_the_expiry_sweep_tells_the_slack_app_and_the_message_then_says_nobody_decided(
    samples, slack_app, django_capture_on_commit_callbacks
):
    hold = next(h for h in samples.values() if h.expires_at)
    messages.remember(hold, "C0REVIEWS", "1700000000.000009", slack_app.response_url(), hold.expires_at)
    told = []
    holds_changed.connect(lambda hold_ids, **_: told.append(hold_ids), weak=False, dispatch_uid="test-expiry")

    try:
        with time_machine.travel(hold.expires_at + timedelta(seconds=1), tick=False):
            with django_capture_on_commit_callbacks(execute=True):
                expiry.sweep()
            messages.refresh([hold.pk])
    finally:
        holds_changed.disconnect(dispatch_uid="test-expiry")

    assert any(hold.pk in hold_ids for hold_ids in told)
    assert "Expired, nobody decided" in slack_app.texts("/respond/")[-1]


def test_a_press_through_a_link_never_proven_decides_nothing_and_offers_to_prove_it(
    samples, alice, slack_app, settings
):
    linked(alice, "U0ALICE", proof="")
    press = press_of(samples["h_17"], "approve", slack_app)

    refused = pressing.handle(press)
    settings.SLACK_REQUIRE_VERIFIED_LINKS = False
    allowed = pressing.handle(press_of(samples["h_17"], "approve", slack_app))

    assert "without proof that it is yours" in refused and "Connect your Slack account" in refused
    assert "without proof" in slack_app.texts(press.response_url)[0] and ConnectLink.objects.count() == 1
    assert "You approved it" in allowed and Decision.objects.get().reviewer == alice


def test_an_approval_on_the_page_and_a_press_through_the_same_persons_slack_count_as_one_person(
    refund, large_refunds, alice_client, alice_in_slack, slack_app
):
    confirm(alice_client, refund)

    answer = pressing.handle(press_of(refund, "approve", slack_app))

    assert answer.startswith("You gave approval 1 of 2") and "another person must give" in answer
    assert "Nothing was sent" in answer and not Decision.objects.exists()
    assert [approval.approver for approval in Approval.objects.all()] == [alice_in_slack.user]
