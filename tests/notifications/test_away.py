"""Away, with a delegate: while alice is away her reminders go to bob, named as hers; afterwards they reach her
again. Delegation moves messages only: it never lets a delegate give an approval they could not give themselves."""

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEvent, EventKind
from holds import lifecycle
from holds.deciding import decisions
from holds.handover import assignments, notes
from notifications import away, notify
from notifications.models import Notification
from reviewqueue import readers, roles
from teams.scopes import viewer_of
from tests.helpers.escalation import add_refund
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


def reminded(hold):
    return {
        (n.user.username, n.title)
        for n in Notification.objects.filter(event="expiring_soon", hold=hold, channel="in_app")
    }


def test_a_reminder_goes_to_the_delegate_while_away_and_to_the_person_again_afterwards(
    platform_client, platform_state, alice, bob
):
    hold = add_refund(platform_client, platform_state, "h_away")
    now = timezone.now()
    away.save(alice, now + timedelta(days=2), bob, by=alice)
    claims_alice(hold, alice, now)

    notify.expiring_soon([hold], now)
    [(to, title)] = reminded(hold)
    assert to == "bob"
    assert "for alice, who is away until" in title

    Notification.objects.filter(hold=hold).delete()
    later = now + timedelta(days=2, minutes=1)
    with time_machine.travel(later, tick=False):
        claims_alice(hold, alice, later)
        notify.expiring_soon([hold], later)
    [(to, title)] = reminded(hold)
    assert to == "alice" and "away" not in title


def claims_alice(hold, alice, now):
    hold.claimed_by, hold.claim_expires_at = alice, now + timedelta(minutes=10)
    hold.save(update_fields=["claimed_by", "claim_expires_at"])


def test_setting_and_ending_away_is_audited(alice, bob):
    away.save(alice, timezone.now() + timedelta(days=1), bob, by=alice)
    away.save(alice, None, None, by=alice)
    messages = list(
        AuditEvent.objects.filter(kind=EventKind.SETTING_CHANGED).order_by("sequence").values_list("payload", flat=True)
    )
    assert [m["message"].split(" ")[0] for m in messages if m.get("model") == "notifications.away"] == ["away", "back:"]


def test_a_delegate_must_be_another_reviewer_who_sees_what_you_see_and_is_here(alice, bob, audrey):
    viewer = viewer_of(alice)
    for username in ("alice", "audrey", "nobody"):
        with pytest.raises(readers.BadValue):
            away.read_delegate(viewer, username)
    away.save(bob, timezone.now() + timedelta(hours=1), None, by=bob)
    with pytest.raises(readers.BadValue, match="away too"):
        away.read_delegate(viewer, "bob")


def test_the_preferences_form_sets_away_in_the_persons_zone_and_refuses_a_bad_delegate(alice_client, alice):
    url = reverse("notification-preferences")
    refused = alice_client.post(url, {"away_until": "2099-01-01T09:00", "delegate": "alice"})
    assert refused.status_code == 400 and b"choose someone else" in refused.content
    assert away.of(alice) is None
    alice_client.post(url, {"away_until": "2099-01-01T09:00", "delegate": ""})
    assert away.of(alice, timezone.now()).until.year == 2099


def test_delegation_gives_no_rights_the_delegate_lacks(alice, bob):
    """Approving reads nothing of away: bob standing in for alice is still only bob, in bob's groups."""
    fiona = make_user("fiona")  # no reviewer role
    away.save(alice, timezone.now() + timedelta(days=1), bob, by=alice)
    assert not roles.can_review(viewer_of(fiona))
    with pytest.raises(readers.BadValue):
        away.read_delegate(viewer_of(alice), "fiona")


def test_an_assignment_to_someone_away_goes_to_their_delegate_and_counts_as_the_delegates_own(
    platform_client, platform_state, alice, bob, client
):
    hold = add_refund(platform_client, platform_state, "h_assigned")
    carol = make_user("carol", roles.REVIEWERS)
    away.save(alice, timezone.now() + timedelta(days=2), bob, by=alice)

    assignments.assign(hold, alice, "please check the address", by=carol)

    told = {
        (n.user.username, n.title) for n in Notification.objects.filter(event="assigned", hold=hold, channel="in_app")
    }
    assert [to for to, _ in told] == ["bob"] and "for alice, who is away until" in next(iter(told))[1]
    client.force_login(bob)
    assert hold.pk in [row.hold.pk for row in client.get(reverse("queue") + "?assigned=me").context["rows"]]
    assert "alice is away; bob is standing in" in client.get(reverse("hold", args=[hold.pk])).content.decode()

    with time_machine.travel(timezone.now() + timedelta(days=2, minutes=1)):
        client.force_login(bob)
        assert hold.pk not in [row.hold.pk for row in client.get(reverse("queue") + "?assigned=me").context["rows"]]
        assert "standing in" not in client.get(reverse("hold", args=[hold.pk])).content.decode()


def test_a_mention_of_someone_away_goes_to_their_delegate(platform_client, platform_state, alice, bob):
    hold = add_refund(platform_client, platform_state, "h_mentioned")
    carol = make_user("carol", roles.REVIEWERS)
    away.save(alice, timezone.now() + timedelta(days=1), bob, by=alice)

    notes.add_note(hold, carol, "@alice can you look at this one?")

    told = [
        (n.user.username, n.title) for n in Notification.objects.filter(event="mentioned", hold=hold, channel="in_app")
    ]
    assert [to for to, _ in told] == ["bob"] and "for alice" in told[0][1]


def test_a_delegate_who_gave_the_first_approval_cannot_give_the_second_for_the_person_away(
    platform_client, platform_state, alice, bob, large_refunds, refund
):
    away.save(alice, timezone.now() + timedelta(days=1), bob, by=alice)
    decisions.submit(refund, bob, [decisions.ItemChoice("call_1", "approve")])
    lifecycle.release_claim(refund, bob)

    with pytest.raises(decisions.DecisionRefused, match="another person must give the next one"):
        decisions.submit(refund, bob, [decisions.ItemChoice("call_1", "approve")])
    assert not refund.decisions.exists()


@pytest.fixture
def root_client(client, db):
    client.force_login(make_user("root", is_superuser=True, is_staff=True))
    return client


def test_an_admin_sets_someone_away_in_the_admin_audited_as_preferences_and_their_reminders_go_to_the_delegate(
    platform_client, platform_state, alice, bob, root_client
):
    hold = add_refund(platform_client, platform_state, "h_admin_away")

    saved = root_client.post(
        reverse("admin:notifications_notificationsettings_add"),
        {"user": alice.pk, "away_until_0": "2099-01-01", "away_until_1": "09:00:00", "delegate": bob.pk},
    )

    assert saved.status_code == 302, saved.context["adminform"].form.errors
    assert away.of(alice).delegate == bob
    [event] = AuditEvent.objects.filter(kind=EventKind.SETTING_CHANGED, payload__model="notifications.away")
    assert event.actor.username == "root"
    assert (event.payload["object"], event.payload["delegate"]) == ("alice", "bob")
    assert (
        event.payload["message"].startswith("away until 2099-01-01T09:00:00")
        and "bob standing in" in event.payload["message"]
    )
    now = timezone.now()
    claims_alice(hold, alice, now)
    notify.expiring_soon([hold], now)
    [(to, title)] = reminded(hold)
    assert to == "bob" and "for alice, who is away until 2099-01-01" in title


def test_the_admin_refuses_a_delegate_the_preferences_would_refuse_and_saves_nothing(alice, audrey, root_client):
    refused = root_client.post(
        reverse("admin:notifications_notificationsettings_add"),
        {"user": alice.pk, "away_until_0": "2099-01-01", "away_until_1": "09:00:00", "delegate": audrey.pk},
    )

    assert refused.status_code == 200
    assert refused.context["adminform"].form.errors == {"delegate": ["audrey is not a reviewer"]}
    assert away.of(alice) is None
    assert not AuditEvent.objects.filter(payload__model="notifications.away").exists()
