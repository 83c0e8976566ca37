"""The periodic sync runs in real Celery processes on Redis."""

import pytest

from holds import tasks
from holds.models import Hold, SyncState
from tests.conftest import wait_until

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

    wait_until(lambda: Hold.objects.filter(hold_id=hold_id).exists(), timeout=10)
