"""Linking a Slack account: the connect link's rules, Preferences' Remove, and an admin removing anyone's."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEvent, EventKind
from holds.links import action_links
from holds.models import Decision, DecisionChannel, Hold
from notifications.models import SlackMessage
from slackapp import linking, payloads
from slackapp import tasks as slack_tasks
from slackapp.models import ConnectLink, SlackAccount
from tests.helpers.fake_slack import TEAM, linked
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def offered(samples, slack_app):
    """The key of a connect link offered to Slack user U0ALICE for a press of Approve on h_12."""
    value = action_links.make(samples["h_12"], "approve", channel=DecisionChannel.SLACK)
    url = linking.offer(payloads.Press(TEAM, "U0ALICE", "approve", value, slack_app.response_url()))
    return re.search(r"/slack/connect/(.+)$", url)[1]


def linked_events():
    return [
        event.payload["action"]
        for event in AuditEvent.objects.filter(kind=EventKind.SETTING_CHANGED).order_by("sequence")
        if event.payload.get("model") == "slackapp.slackaccount"
    ]


def test_connect_binds_the_signed_in_person_then_makes_the_press_and_the_link_works_once(alice_client, alice, offered):
    page = alice_client.get(reverse("slack-connect", args=[offered]))
    connected = alice_client.post(reverse("slack-connect", args=[offered]))
    again = alice_client.post(reverse("slack-connect", args=[offered]))

    account = SlackAccount.objects.get()
    assert page.status_code == 200 and b"Connect and approve" in page.content
    assert (account.user, account.team_id, account.slack_user_id) == (alice, TEAM, "U0ALICE")
    assert b"You approved it" in connected.content and Decision.objects.get().reviewer == alice
    assert again.status_code == 410 and b"used already" in again.content and Decision.objects.count() == 1
    assert linked_events() == ["linked"]


def test_a_connect_link_expires_after_ten_minutes(alice_client, offered):
    with time_machine.travel(timedelta(minutes=10, seconds=1)):
        answer = alice_client.post(reverse("slack-connect", args=[offered]))

    assert answer.status_code == 410 and b"expired" in answer.content and not SlackAccount.objects.exists()


def test_connect_links_are_deleted_a_day_after_they_expire_and_messages_a_week_after_their_hold_closed(
    offered, samples
):
    closed, still_open = samples["h_12"], samples["h_13"]
    Hold.objects.filter(pk=closed.pk).update(status=Hold.Status.DECIDED, closed_at=timezone.now())
    for hold, ts in ((closed, "1.1"), (still_open, "1.2")):
        SlackMessage.objects.create(hold=hold, channel_id="C1", ts=ts, by_bot=True, created_at=timezone.now())

    with time_machine.travel(timedelta(days=1, minutes=9)):
        assert slack_tasks.forget_finished() == 0
    with time_machine.travel(timedelta(days=1, minutes=11)):
        assert slack_tasks.forget_finished() == 1 and not ConnectLink.objects.exists()
    with time_machine.travel(timedelta(days=7, minutes=1)):
        assert slack_tasks.forget_finished() == 1

    assert list(SlackMessage.objects.values_list("hold", flat=True)) == [still_open.pk]


def test_a_slack_account_linked_to_someone_else_is_not_taken_over(client, alice, bob, offered):
    linked(bob, "U0ALICE")  # bob connected that Slack user first
    client.force_login(alice)

    answer = client.post(reverse("slack-connect", args=[offered]))

    assert answer.status_code == 409 and SlackAccount.objects.get().user == bob and not Decision.objects.exists()


def test_a_made_up_connect_key_links_nothing(alice_client, slack_app):
    answer = alice_client.get(reverse("slack-connect", args=["x" * 43]))

    assert answer.status_code == 410 and not SlackAccount.objects.exists()


def test_a_person_sees_and_removes_their_own_link_in_preferences_and_only_theirs(alice_client, alice, bob):
    mine, bobs = linked(alice, "U0ALICE"), linked(bob, "U0BOB")

    preferences = alice_client.get(reverse("notification-preferences")).content.decode()
    listed = alice_client.get(reverse("slack-accounts")).content.decode()
    not_mine = alice_client.post(reverse("slack-accounts"), {"remove": bobs.pk})
    removed = alice_client.post(reverse("slack-accounts"), {"remove": mine.pk})

    assert reverse("slack-accounts") in preferences and "U0ALICE" in listed and "U0BOB" not in listed
    assert not_mine.status_code == 404 and removed.status_code == 302
    assert list(SlackAccount.objects.values_list("slack_user_id", flat=True)) == ["U0BOB"]
    assert linked_events() == ["unlinked"]


def test_a_signed_in_person_with_no_role_opens_no_slack_accounts_page(client):
    nora = make_user("nora")  # signed in, with no role
    linked(nora, "U0NORA")
    client.force_login(nora)

    listed = client.get(reverse("slack-accounts"))
    removed = client.post(reverse("slack-accounts"), {"remove": SlackAccount.objects.get().pk})

    assert (listed.status_code, removed.status_code) == (403, 403) and SlackAccount.objects.exists()


def test_an_admin_removes_anyones_link_and_the_audit_keeps_it(client, alice):
    account = linked(alice, "U0ALICE")
    admin = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(admin)

    client.post(reverse("admin:slackapp_slackaccount_delete", args=[account.pk]), {"post": "yes"})

    assert not SlackAccount.objects.exists()
    removal = AuditEvent.objects.filter(kind=EventKind.SETTING_CHANGED, actor=admin).get()
    assert removal.payload["model"] == "slackapp.slackaccount" and removal.payload["action"] == "deleted"
    assert client.get(reverse("admin:slackapp_slackaccount_add")).status_code == 403
