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
from reviewqueue import roles
from slackapp import linking, payloads
from slackapp import tasks as slack_tasks
from slackapp.models import ConnectLink, SlackAccount
from tests.helpers.fake_slack import BOT_TOKEN, TEAM, linked, slack_person
from tests.helpers.migrating import back_to, latest, migrate
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def offered(samples, slack_bot):
    """The key of a connect link offered to Slack user U0ALICE (alice@example.com in Slack) for a press of Approve
    on h_12; the bot token reads who they are."""
    return offer_to("U0ALICE", samples["h_17"], slack_bot)


def offer_to(slack_user_id, hold, slack, action="approve"):
    value = action_links.make(hold, action, channel=DecisionChannel.SLACK)
    name = slack_user_id.removeprefix("U0").lower()
    press = payloads.Press(TEAM, slack_user_id, action, value, slack.response_url(), user_name=name, team_domain="acme")
    return re.search(r"/slack/connect/(.+)$", linking.offer(press))[1]


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
    closed, still_open = samples["h_17"], samples["h_13"]
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


def test_an_admin_may_link_an_account_which_then_counts_as_verified_and_is_audited(client, alice):
    admin = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(admin)

    refused = client.post(
        reverse("admin:slackapp_slackaccount_add"), {"user": alice.pk, "slack_user_id": "U<x>", "team_id": TEAM}
    )
    added = client.post(
        reverse("admin:slackapp_slackaccount_add"), {"user": alice.pk, "slack_user_id": "U0ALICE", "team_id": TEAM}
    )
    listed = client.get(reverse("admin:slackapp_slackaccount_changelist")).content.decode()

    account = SlackAccount.objects.get()
    assert refused.status_code == 200 and added.status_code == 302
    assert (account.user, account.slack_user_id, account.proof) == (alice, "U0ALICE", SlackAccount.Proof.ADMIN)
    assert account.verified and linking.decides(account) and "linked by an admin" in listed
    audit = AuditEvent.objects.filter(kind=EventKind.SETTING_CHANGED, actor=admin).get()
    assert audit.payload["model"] == "slackapp.slackaccount" and audit.payload["action"] == "added"
    assert "U0ALICE" in audit.payload["object"]


def test_links_made_before_proof_are_marked_not_verified_in_preferences_and_the_admin(client, alice):
    linked(alice, "U0ALICE", proof="")
    admin = make_user("root", is_staff=True, is_superuser=True)

    client.force_login(alice)
    listed = client.get(reverse("slack-accounts")).content.decode()
    client.force_login(admin)
    in_admin = client.get(reverse("admin:slackapp_slackaccount_changelist")).content.decode()

    assert "not verified" in listed and "decide nothing" in listed
    assert "not verified" in in_admin


@pytest.fixture
def mallory(slack_bot):
    """Slack user U0MALLORY of our workspace, whose Slack email is nobody's here, and whose name is hostile."""
    slack_bot.people["U0MALLORY"] = slack_person(
        "U0MALLORY", "mallory", "mallory@elsewhere.example", real_name="<b>Mallory</b> & co"
    )
    return "U0MALLORY"


def test_a_link_opened_by_someone_whose_email_differs_links_nothing_and_says_who_in_words(
    client, samples, slack_bot, mallory
):
    carol = make_user("carol", roles.REVIEWERS)
    key = offer_to(mallory, samples["h_17"], slack_bot)
    client.force_login(carol)

    page = client.get(reverse("slack-connect", args=[key]))
    posted = client.post(reverse("slack-connect", args=[key]))

    shown = page.content.decode()
    assert (page.status_code, posted.status_code) == (403, 403) and b"Nothing was linked" in posted.content
    assert "&lt;b&gt;Mallory&lt;/b&gt; &amp; co (@mallory, U0MALLORY) of workspace acme (T0TEAM)" in shown
    assert "<b>Mallory</b>" not in shown and "mallory@elsewhere.example" not in shown
    assert not SlackAccount.objects.exists() and not Decision.objects.exists()
    assert ConnectLink.objects.get().used_at is None and linked_events() == []
    (asked,) = [(body, headers) for path, body, headers in slack_bot.received if path == "/api/users.info"][:1]
    assert asked[0] == {"user": "U0MALLORY"} and asked[1]["Authorization"] == f"Bearer {BOT_TOKEN}"


def test_without_a_bot_token_no_link_is_proven_and_the_page_names_the_slack_user_from_the_press(
    alice_client, offered, settings
):
    settings.SLACK_BOT_TOKEN = ""

    answer = alice_client.post(reverse("slack-connect", args=[offered]))

    assert answer.status_code == 403 and not SlackAccount.objects.exists() and not Decision.objects.exists()
    assert b"@alice (U0ALICE) of workspace acme (T0TEAM)" in answer.content and b"no bot token" in answer.content


@pytest.mark.parametrize(
    "slack_says",
    [
        {"deleted": True},
        {"is_bot": True},
        {"team_id": "T0OTHER"},
        {"id": "U0SOMEONE"},
        {"is_email_confirmed": False},
        {"profile": {"real_name": "Alice"}},  # no email shown: no users:read.email
        {"profile": {"email": "alice@example.com.evil.example"}},
        {"profile": {"email": "alıce@example.com"}},  # a dotless ı, which upper-cases to I
        None,  # Slack knows no such user
    ],
)
def test_a_slack_user_not_shown_to_be_the_account_links_nothing(alice_client, offered, slack_bot, slack_says):
    if slack_says is None:
        del slack_bot.people["U0ALICE"]
    else:
        slack_bot.people["U0ALICE"] |= slack_says

    answer = alice_client.post(reverse("slack-connect", args=[offered]))

    assert answer.status_code == 403 and b"Nothing was linked" in answer.content
    assert not SlackAccount.objects.exists() and not Decision.objects.exists()


def test_the_email_matches_whatever_its_case(alice_client, alice, offered, slack_bot):
    slack_bot.people["U0ALICE"]["profile"]["email"] = "Alice@EXAMPLE.com"

    answer = alice_client.post(reverse("slack-connect", args=[offered]))

    assert answer.status_code == 200 and SlackAccount.objects.get().user == alice


def test_a_link_made_without_proof_is_proven_by_connecting_again_and_the_audit_says_so(alice_client, alice, offered):
    linked(alice, "U0ALICE", proof="")

    answer = alice_client.post(reverse("slack-connect", args=[offered]))

    assert answer.status_code == 200 and SlackAccount.objects.get().proof == SlackAccount.Proof.EMAIL
    assert linked_events() == ["verified"] and Decision.objects.get().reviewer == alice


@pytest.mark.django_db(transaction=True)
def test_links_made_before_proof_was_asked_for_are_kept_as_not_verified(alice):
    try:
        old = migrate(back_to(("slackapp", "0001_initial")))
        old.get_model("slackapp", "SlackAccount").objects.create(
            team_id=TEAM, slack_user_id="U0ALICE", user_id=alice.pk, linked_at=timezone.now()
        )

        migrate(latest())

        account = SlackAccount.objects.get()
        assert account.user == alice and not account.verified and not linking.decides(account)
    finally:
        migrate(latest())
