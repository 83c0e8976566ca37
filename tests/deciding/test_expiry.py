"""Expiry and reminders: holds close on time, once, and people hear about them once."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.mirror import sync
from holds.models import Decision, Hold
from holds.queue import listing as queue
from holds.sweeps import expiry
from notifications import notify, subscriptions
from notifications.models import Notification
from people import wording
from teams.scopes import viewer_of
from tests.helpers.concurrently import at_once
from tests.helpers.duplicates import every_duplicate

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def expire_soon(hold, minutes):
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() + timedelta(minutes=minutes))
    hold.refresh_from_db()
    return hold


def notifications(event, hold=None):
    rows = Notification.objects.filter(event=event)
    return rows.filter(hold=hold) if hold else rows


def test_a_hold_past_its_expiry_leaves_the_queue_and_its_claim_ends(samples, alice, audrey):
    hold = expire_soon(samples["h_12"], 2)
    from holds import lifecycle

    lifecycle.claim(hold, alice)

    with time_machine.travel(hold.expires_at + timedelta(seconds=1)):
        expired = expiry.sweep()

    hold.refresh_from_db()
    assert hold in expired and samples["h_13"] not in expired
    assert hold.status == "expired" and hold.claimed_by is None
    assert hold not in queue.open_holds()


def test_auditors_hear_once_that_a_hold_expired_undecided(samples, audrey):
    hold = expire_soon(samples["h_12"], 1)

    with time_machine.travel(hold.expires_at + timedelta(seconds=1)):
        expiry.sweep()
        expiry.sweep()

    sent = notifications("expired", hold)
    assert sorted(sent.values_list("channel", flat=True)) == ["email", "in_app"]
    assert set(sent.values_list("user", flat=True)) == {audrey.pk}


def test_a_hold_not_yet_due_stays_open(samples):
    hold = expire_soon(samples["h_12"], 2)  # the sample h_15 expires a little later

    with time_machine.travel(hold.expires_at - timedelta(seconds=1)):
        assert expiry.sweep() == []

    assert Hold.objects.get(pk=hold.pk).status == "open"


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_expire_each_hold_once_and_send_one_message(samples, audrey):
    for hold in samples.values():
        Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    results = at_once(expiry.sweep, expiry.sweep)

    expired = [hold.pk for result in results for hold in result]
    assert sorted(expired) == sorted(hold.pk for hold in samples.values())
    assert notifications("expired").filter(channel="in_app").count() == len(samples)


def test_a_reminder_goes_to_the_reviewer_holding_the_claim_once(samples, alice, bob):
    from holds import lifecycle

    hold = expire_soon(samples["h_12"], 14)
    lifecycle.claim(hold, alice)
    for other in samples.values():
        if other.pk != hold.pk:
            Hold.objects.filter(pk=other.pk).update(expires_at=timezone.now() + timedelta(hours=5))

    expiry.remind()
    expiry.remind()

    reminders = notifications("expiring_soon", hold)
    assert set(reminders.values_list("user__username", flat=True)) == {"alice"}
    assert reminders.filter(channel="in_app").count() == 1
    assert "Expires in 14 min" in reminders.first().title


def test_an_unclaimed_hold_reminds_every_reviewer(samples, alice, bob):
    hold = expire_soon(samples["h_12"], 10)

    expiry.remind()

    assert set(notifications("expiring_soon", hold).values_list("user__username", flat=True)) == {"alice", "bob"}


def test_no_reminder_before_the_lead_time(samples, alice, settings):
    settings.EXPIRY_REMINDER_MINUTES = 15
    hold = expire_soon(samples["h_12"], 20)

    with time_machine.travel(timezone.now() + timedelta(minutes=4)):
        expiry.remind()
    assert not notifications("expiring_soon", hold).exists()

    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        expiry.remind()
    assert notifications("expiring_soon", hold).exists()


def test_a_decision_after_expiry_is_refused_and_never_reaches_the_platform(alice_client, samples, platform_state):
    hold = expire_soon(samples["h_12"], 1)
    from tests.helpers.reviewing import confirm

    with time_machine.travel(hold.expires_at + timedelta(seconds=30)):
        response = confirm(alice_client, hold)

    assert (
        f"This hold expired at {wording.moment(hold.expires_at)}; the agent was told nobody decided."
        in response.content.decode()
    )
    assert not Decision.objects.exists()
    assert not [r for r in platform_state.requests if r["method"] == "POST"]


def test_sync_confirms_the_platforms_final_state_after_our_sweep(samples, platform_client, platform_state):
    hold = samples["h_15"]  # expires within minutes on the simulated platform too
    platform_state.advance_clock((hold.expires_at - timezone.now()).total_seconds() + 1)
    with time_machine.travel(hold.expires_at + timedelta(seconds=1)):
        expiry.sweep()
        sync.sync_env(platform_client, "default")

    hold.refresh_from_db()
    assert hold.status == "expired" and hold.last_synced_at > hold.expired_here_at
    assert hold.payload["status"] == "expired"


def test_sync_corrects_our_expiry_when_the_platform_had_a_decision_in_time(samples, platform_client, platform_state):
    hold = expire_soon(samples["h_12"], 1)
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")
    with time_machine.travel(hold.expires_at + timedelta(seconds=1)):
        expiry.sweep()
        sync.sync_env(platform_client, "default")

    hold.refresh_from_db()
    assert hold.status == "decided" and hold.decided_by == "bob@example.com"


def test_a_decision_not_applied_tells_the_reviewer_and_the_auditors(
    samples, alice, audrey, platform_client, platform_state
):
    hold = samples["h_12"]
    decision = decisions.submit(
        hold, alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(hold)
    )
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")

    delivery.deliver(decision.pk, platform_client)

    told = notifications("not_applied", hold)
    assert set(told.values_list("user__username", flat=True)) == {"alice", "audrey"}
    assert "Decided by bob@example.com" in told.first().body


def test_a_decision_still_undelivered_is_announced_once(samples, alice, settings):
    settings.DELIVERY_ALERT_MINUTES = 10
    hold = samples["h_12"]
    decisions.submit(hold, alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(hold))

    with time_machine.travel(timezone.now() + timedelta(minutes=9)):
        assert delivery.alert_undelivered() == []
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        assert len(delivery.alert_undelivered()) == 1
        assert delivery.alert_undelivered() == []

    assert notifications("undelivered", hold).filter(user=alice, channel="in_app").count() == 1


def test_new_holds_arrive_as_one_digest_per_subscribed_reviewer(
    samples, alice, bob, platform_client, platform_state, settings
):
    settings.NOTIFY_BATCH_SECONDS = 60
    subscriptions.save_preferences(viewer_of(alice), {"new_holds": ["in_app", "email"]})
    notify.digest_new_holds()  # starts the window
    for question in ("First new", "Second new", "Third new"):
        platform_state.add_hold("default", {"question": question})
    sync.sync_env(platform_client, "default")

    with time_machine.travel(timezone.now() + timedelta(seconds=30)):
        assert notify.digest_new_holds() == []  # the window is not over
    with time_machine.travel(timezone.now() + timedelta(seconds=61)):
        notify.digest_new_holds()
        notify.digest_new_holds()

    digests = notifications("new_holds")
    assert sorted(digests.values_list("channel", flat=True)) == ["email", "in_app"]
    assert set(digests.values_list("user__username", flat=True)) == {"alice"}
    assert [h["question"] for h in digests.first().holds] == ["First new", "Second new", "Third new"]
    assert digests.first().title == "3 new holds to review"
