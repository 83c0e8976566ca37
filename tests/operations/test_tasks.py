"""The periodic tasks run in real Celery processes on Redis."""

from datetime import timedelta

import pytest
from django.utils import timezone

from holds import tasks
from holds.models import Hold, SyncState
from notifications.models import Notification
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_sync_task_runs_on_a_real_worker(celery_processes, platform_state):
    platform_state.load_samples()
    celery_processes("worker")

    tasks.sync_holds.delay()

    wait_until(lambda: SyncState.objects.filter(env="default", last_success_at__isnull=False).exists())
    assert set(Hold.objects.values_list("hold_id", flat=True)) == {
        hold["hold_id"] for hold in platform_state.list_open("default", limit=100)[0]
    }


def test_beat_schedules_the_sync_every_interval(celery_processes, platform_state):
    celery_processes("worker")
    celery_processes("beat", SYNC_INTERVAL_SECONDS="1")

    wait_until(lambda: SyncState.objects.filter(env="default", last_success_at__isnull=False).exists())
    hold_id = platform_state.add_hold("default", {})["hold_id"]

    wait_until(lambda: Hold.objects.filter(hold_id=hold_id).exists())


def test_the_expiry_sweep_runs_on_a_real_worker(celery_processes, samples, alice):
    due = samples["h_12"]
    Hold.objects.filter(pk=due.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    celery_processes("worker")

    tasks.sweep_expiries.delay()

    wait_until(lambda: Hold.objects.filter(pk=due.pk, status="expired").exists())
    wait_until(lambda: Notification.objects.filter(event="expiring_soon", hold=samples["h_15"], user=alice).exists())
