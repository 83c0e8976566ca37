"""Notifications resolve themselves: once a hold is decided, expires or closes, its reminders stop asking anyone."""

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.mirror import sync
from holds.models import Hold
from holds.sweeps import expiry
from notifications import in_app, notify, sending, subscriptions
from notifications.models import Notification, NotificationAttempt
from teams.scopes import viewer_of
from tests.helpers.duplicates import every_duplicate

pytestmark = pytest.mark.django_db


def expiring_in(hold, minutes):
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() + timedelta(minutes=minutes))
    hold.refresh_from_db()
    return hold


def only_these_expire_soon(samples, *holds_and_minutes):
    """Push every sample hold hours away, then bring the chosen ones within the reminder's lead time."""
    Hold.objects.filter(pk__in=[hold.pk for hold in samples.values()]).update(
        expires_at=timezone.now() + timedelta(hours=5)
    )
    return [expiring_in(hold, minutes) for hold, minutes in holds_and_minutes]


def approve_all(hold):
    return [ItemChoice(item_id=item.item_id, action="approve") for item in hold.items.all()]


def reminder(user, hold, channel="in_app"):
    return Notification.objects.get(event="expiring_soon", hold=hold, user=user, channel=channel)


def bell_of(client) -> str:
    return client.get(reverse("notification-bell")).content.decode()


def test_expires_in_11_min_leaves_the_bell_once_alice_decides_the_hold(samples, alice, alice_client):
    [hold] = only_these_expire_soon(samples, (samples["h_12"], 11))
    expiry.remind()
    assert "Expires in 11 min" in reminder(alice, hold).title
    assert in_app.unread_count(viewer_of(alice)) == 1
    assert "Notifications: 1 unread" in bell_of(alice_client)

    decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    assert in_app.unread_count(viewer_of(alice)) == 0
    assert "Notifications: 0 unread" in bell_of(alice_client)
    assert reminder(alice, hold).resolved_reason == "decided by Alice Adams"


def test_expires_in_3_min_leaves_the_bell_when_the_hold_expires(samples, alice):
    [hold] = only_these_expire_soon(samples, (samples["h_12"], 3))
    expiry.remind()
    assert in_app.unread_count(viewer_of(alice)) == 1

    with time_machine.travel(hold.expires_at + timedelta(seconds=1)):
        expiry.sweep()

    assert in_app.unread_count(viewer_of(alice)) == 0
    assert reminder(alice, hold).resolved_reason == "expired"


def test_the_bell_counts_down_as_holds_are_decided_and_expire_and_the_inbox_keeps_them_as_resolved(
    samples, alice, alice_client
):
    decided, expiring = only_these_expire_soon(samples, (samples["h_12"], 11), (samples["h_13"], 3))
    expiry.remind()
    assert in_app.unread_count(viewer_of(alice)) == 2

    decisions.submit(decided, alice, approve_all(decided), duplicates_checked=every_duplicate(decided))
    assert in_app.unread_count(viewer_of(alice)) == 1
    with time_machine.travel(expiring.expires_at + timedelta(seconds=1)):
        expiry.sweep()
    assert in_app.unread_count(viewer_of(alice)) == 0

    inbox = alice_client.get(reverse("notifications")).content.decode()
    assert inbox.count('class="card resolved"') == 2
    assert "Resolved: decided by Alice Adams" in inbox
    assert "Resolved: expired" in inbox
    assert "Mark as read" not in inbox  # nothing left to act on


def test_the_auditors_expired_alert_is_not_resolved_by_the_expiry_it_reports(samples, audrey):
    [hold] = only_these_expire_soon(samples, (samples["h_12"], 3))

    with time_machine.travel(hold.expires_at + timedelta(seconds=1)):
        expiry.sweep()

    alert = Notification.objects.get(event="expired", hold=hold, user=audrey, channel="in_app")
    assert alert.resolved_at is None and in_app.unread_count(viewer_of(audrey)) == 1


def test_the_expired_alert_is_resolved_when_sync_learns_the_platform_had_a_decision_in_time(
    samples, audrey, platform_client, platform_state
):
    [hold] = only_these_expire_soon(samples, (samples["h_12"], 1))
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")
    with time_machine.travel(hold.expires_at + timedelta(seconds=1)):
        expiry.sweep()
        assert in_app.unread_count(viewer_of(audrey)) == 1
        sync.sync_env(platform_client, "default")

    alert = Notification.objects.get(event="expired", hold=hold, user=audrey, channel="in_app")
    assert alert.resolved_reason == "decided by bob@example.com on the platform"
    assert in_app.unread_count(viewer_of(audrey)) == 0


def test_a_reminder_is_resolved_when_sync_learns_the_run_was_cancelled(samples, alice, platform_client, platform_state):
    [hold] = only_these_expire_soon(samples, (samples["h_12"], 11))
    expiry.remind()

    platform_state.cancel("default", "h_12")
    sync.sync_env(platform_client, "default")

    assert reminder(alice, hold).resolved_reason == "cancelled"
    assert in_app.unread_count(viewer_of(alice)) == 0


def test_a_pending_reminder_email_for_a_decided_hold_is_never_sent(samples, alice, mailoutbox):
    [hold] = only_these_expire_soon(samples, (samples["h_12"], 11))
    expiry.remind()
    email = reminder(alice, hold, channel="email")
    assert email.status == "pending"

    decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    sending.send(email.pk)

    email.refresh_from_db()
    assert mailoutbox == []
    assert email.status == "resolved" and email.sent_at is None
    attempt = NotificationAttempt.objects.get(notification=email)
    assert (attempt.outcome, attempt.message) == ("resolved", "not sent: decided by Alice Adams")


def test_a_reminder_email_for_a_hold_still_open_is_sent(samples, alice, mailoutbox):
    [hold] = only_these_expire_soon(samples, (samples["h_12"], 11))
    expiry.remind()

    sending.send(reminder(alice, hold, channel="email").pk)

    assert [message.subject for message in mailoutbox] == [f"[Review Queue] {reminder(alice, hold).title}"]


def test_a_withdrawn_decision_puts_the_reminder_back_in_the_bell(samples, alice, settings):
    settings.UNDO_SECONDS = 10
    [hold] = only_these_expire_soon(samples, (samples["h_12"], 11))
    expiry.remind()
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    assert in_app.unread_count(viewer_of(alice)) == 0

    decisions.withdraw(decision.pk, alice)

    assert in_app.unread_count(viewer_of(alice)) == 1
    assert reminder(alice, hold).resolved_at is None


def test_a_still_undelivered_alert_is_resolved_once_the_decision_is_applied(samples, alice, platform_client, settings):
    settings.UNDO_SECONDS = 0
    settings.DELIVERY_ALERT_MINUTES = 10
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        delivery.alert_undelivered()
    assert in_app.unread_count(viewer_of(alice)) == 1

    delivery.deliver(decision.pk, platform_client)

    alert = Notification.objects.get(event="undelivered", user=alice, channel="in_app")
    assert alert.resolved_reason == "decided by Alice Adams" and in_app.unread_count(viewer_of(alice)) == 0


def test_a_not_applied_alert_is_not_resolved_by_the_refusal_it_reports(
    samples, alice, platform_client, platform_state, settings
):
    settings.UNDO_SECONDS = 0
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")

    delivery.deliver(decision.pk, platform_client)

    alert = Notification.objects.get(event="not_applied", user=alice, channel="in_app")
    assert alert.resolved_at is None and in_app.unread_count(viewer_of(alice)) == 1


# Digests


def subscribe_to_digests(user, settings):
    settings.NOTIFY_BATCH_SECONDS = 60
    subscriptions.save_preferences(viewer_of(user), {"new_holds": ["in_app", "email"]})
    notify.digest_new_holds()  # starts the window


def next_window():
    return time_machine.travel(timezone.now() + timedelta(seconds=61))


def new_holds(platform_client, platform_state, *questions):
    for question in questions:
        platform_state.add_hold("default", {"question": question})
    sync.sync_env(platform_client, "default")
    return {hold.question: hold for hold in Hold.objects.filter(question__in=questions)}


def digest_email():
    return Notification.objects.get(event="new_holds", channel="email")


def test_a_digest_never_mentions_a_hold_decided_before_it_was_written(
    samples, alice, settings, platform_client, platform_state
):
    subscribe_to_digests(alice, settings)
    held = new_holds(platform_client, platform_state, "Refund the first", "Refund the second")
    decisions.submit(
        held["Refund the first"],
        alice,
        approve_all(held["Refund the first"]),
        duplicates_checked=every_duplicate(held["Refund the first"]),
    )

    with next_window():
        notify.digest_new_holds()

    assert [h["question"] for h in digest_email().holds] == ["Refund the second"]
    with time_machine.travel(timezone.now() + timedelta(seconds=200)):
        assert notify.digest_new_holds() == []  # nor in any later digest


def test_a_digest_email_drops_a_hold_decided_before_it_is_sent(
    samples, alice, settings, platform_client, platform_state, mailoutbox
):
    subscribe_to_digests(alice, settings)
    held = new_holds(platform_client, platform_state, "Refund the first", "Refund the second")
    with next_window():
        notify.digest_new_holds()
    decisions.submit(
        held["Refund the first"],
        alice,
        approve_all(held["Refund the first"]),
        duplicates_checked=every_duplicate(held["Refund the first"]),
    )

    sending.send(digest_email().pk)

    [sent] = mailoutbox
    assert sent.subject == "[Review Queue] 1 new hold to review"
    assert "Refund the second" in sent.body and "Refund the first" not in sent.body
    assert [h["question"] for h in digest_email().holds] == ["Refund the second"]


def test_a_digest_email_whose_holds_were_all_decided_is_not_sent(
    samples, alice, settings, platform_client, platform_state, mailoutbox
):
    subscribe_to_digests(alice, settings)
    held = new_holds(platform_client, platform_state, "Refund the first")
    with next_window():
        notify.digest_new_holds()
    decisions.submit(
        held["Refund the first"],
        alice,
        approve_all(held["Refund the first"]),
        duplicates_checked=every_duplicate(held["Refund the first"]),
    )

    sending.send(digest_email().pk)

    assert mailoutbox == []
    assert digest_email().status == "resolved"
    assert NotificationAttempt.objects.get(notification=digest_email()).outcome == "resolved"


# Cost


def sweep_queries(samples, count) -> int:
    """Queries of a sweep expiring ``count`` reminded holds."""
    due = only_these_expire_soon(samples, *[(hold, 3) for hold in list(samples.values())[:count]])
    expiry.remind()
    with (
        time_machine.travel(max(hold.expires_at for hold in due) + timedelta(seconds=1)),
        CaptureQueriesContext(connection) as queries,
    ):
        assert len(expiry.sweep()) == count
    return len(queries.captured_queries)


def test_resolving_costs_the_sweep_the_same_queries_for_one_hold_as_for_many(samples, alice, bob, audrey):
    one = sweep_queries(samples, 1)
    Hold.objects.update(status="open", closed_at=None, expired_here_at=None)
    Notification.objects.all().delete()

    many = sweep_queries(samples, len(samples))

    assert len(samples) > 5 and one == many
    assert Notification.objects.filter(event="expiring_soon", resolved_at__isnull=True).count() == 0
