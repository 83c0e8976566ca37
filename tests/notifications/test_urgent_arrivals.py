"""Urgent holds reach people in seconds: a hold arriving already close to its expiry, or already due to escalate, is
announced by the sync that mirrors it, once, while the others wait for the new-holds digest."""

import time
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from approvals import escalation
from approvals.models import Escalation
from holds import tasks
from holds.mirror import sync
from holds.models import Hold, SyncState
from holds.sweeps import arrivals, expiry
from notifications import notify, subscriptions
from notifications.models import Notification
from teams.scopes import viewer_of
from tests.helpers.concurrently import at_once
from tests.helpers.escalation import policy
from tests.helpers.waiting import wait_until

SYNC_INTERVAL_SECONDS = 1
BUDGET_SECONDS = SYNC_INTERVAL_SECONDS + 5


def ask(platform_state, hold_id, minutes_left, created_minutes_ago=0):
    """An agent asks on the platform for a refund that expires in ``minutes_left`` minutes."""
    now = platform_state.now()
    platform_state.add_hold(
        "default",
        {
            "hold_id": hold_id,
            "question": f"Refund {hold_id}?",
            "created_at": (now - timedelta(minutes=created_minutes_ago)).isoformat(),
            "expires_at": (now + timedelta(minutes=minutes_left)).isoformat(),
            "items": [{"id": "A-1", "title": "refund", "data": {"order_id": "A-1", "amount": "1200.00"}}],
        },
    )


def reminders(hold_id):
    return Notification.objects.filter(event="expiring_soon", hold__hold_id=hold_id)


@pytest.mark.django_db
def test_the_sync_that_mirrors_a_hold_inside_the_reminder_lead_time_reminds_of_it_once(
    simulated_platform, platform_state, alice
):
    ask(platform_state, "h_urgent", minutes_left=5)
    ask(platform_state, "h_calm", minutes_left=60)

    tasks.sync_holds()

    assert sorted(reminders("h_urgent").values_list("channel", "user")) == [("email", alice.pk), ("in_app", alice.pk)]
    assert reminders("h_urgent").first().title == "Expires in 5 min: Refund h_urgent?"
    assert not Notification.objects.filter(hold__hold_id="h_calm").exists()
    assert expiry.remind() == []  # the sweep finds nothing left to remind of
    assert reminders("h_urgent").count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_syncs_announcement_and_a_sweep_at_the_same_moment_remind_of_a_hold_once(
    platform_client, platform_state, alice
):
    started = timezone.now()
    ask(platform_state, "h_urgent", minutes_left=5)
    sync.sync_env(platform_client, "default")

    at_once(lambda: arrivals.announce(since=started), expiry.remind)

    assert sorted(reminders("h_urgent").values_list("channel", flat=True)) == ["email", "in_app"]


@pytest.mark.django_db
def test_the_sync_reminds_only_of_the_holds_it_first_saw(simulated_platform, platform_state, alice):
    ask(platform_state, "h_earlier", minutes_left=20)
    tasks.sync_holds()
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        ask(platform_state, "h_new", minutes_left=60)

        tasks.sync_holds()

        assert not reminders("h_earlier").exists()  # inside the lead time by now, but the sweep's to remind of
        assert [hold.hold_id for hold in expiry.remind()] == ["h_earlier"]


@pytest.mark.django_db
def test_the_sync_that_mirrors_a_hold_already_past_its_policys_share_of_lifetime_escalates_it(
    simulated_platform, platform_state, fiona
):
    policy(escalate_after_minutes=None, escalate_at_percent=50)
    ask(platform_state, "h_late", minutes_left=60, created_minutes_ago=120)
    ask(platform_state, "h_fresh", minutes_left=60)

    tasks.sync_holds()

    [escalated] = Escalation.objects.all()
    assert escalated.hold.hold_id == "h_late" and escalated.reason == "50 % of its time before expiry gone"
    assert set(Notification.objects.filter(event="escalated").values_list("user", flat=True)) == {fiona.pk}
    assert escalation.sweep() == []


def test_the_escalation_sweep_runs_as_often_as_sync_unless_told_otherwise():
    from django.conf import settings

    assert settings.CELERY_BEAT_SCHEDULE["escalate-holds"]["schedule"] == settings.SYNC_INTERVAL_SECONDS


@pytest.mark.django_db(transaction=True)
def test_an_urgent_hold_reaches_the_smtp_server_within_a_sync_interval_while_a_calm_one_waits_for_the_digest(
    celery_processes, smtp_server, platform_state, alice, settings
):
    controller, inbox = smtp_server
    subscriptions.save_preferences(viewer_of(alice), {"new_holds": ["email"], "expiring_soon": ["in_app", "email"]})
    notify.digest_new_holds()  # the digest's first window opens now
    slow = {"EXPIRY_SWEEP_SECONDS": "3600", "ESCALATION_SWEEP_SECONDS": "3600", "NOTIFY_BATCH_SECONDS": "3600"}
    celery_processes("worker", EMAIL_BACKEND="smtp", EMAIL_HOST="127.0.0.1", EMAIL_PORT=str(controller.port))
    celery_processes("beat", SYNC_INTERVAL_SECONDS=str(SYNC_INTERVAL_SECONDS), **slow)
    wait_until(lambda: SyncState.objects.filter(last_success_at__isnull=False).exists())

    asked = time.monotonic()
    ask(platform_state, "h_urgent", minutes_left=5)
    ask(platform_state, "h_calm", minutes_left=60)
    wait_until(lambda: inbox, timeout=BUDGET_SECONDS + 5, interval=0.05)
    arrived = time.monotonic()

    assert arrived - asked <= BUDGET_SECONDS
    assert [message["Subject"] for message in inbox] == ["[Review Queue] Expires in 5 min: Refund h_urgent?"]
    calm = Hold.objects.get(hold_id="h_calm")
    assert calm.digested_at is None and not Notification.objects.filter(hold=calm).exists()
    assert tasks.sweep_expiries() == {"expired": 0, "reminded": 0}  # the later sweep sends no second reminder
    assert reminders("h_urgent").filter(channel="email").count() == 1

    notify.digest_new_holds(now=timezone.now() + timedelta(seconds=settings.NOTIFY_BATCH_SECONDS))
    wait_until(lambda: len(inbox) == 2)
    digest = next(part for part in inbox[1].walk() if part.get_content_type() == "text/plain")
    assert "Refund h_calm?" in digest.get_payload(decode=True).decode()
    assert len(inbox) == 2
