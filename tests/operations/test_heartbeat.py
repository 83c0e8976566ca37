"""A dead Celery beat is visible: the queue says so when no periodic task has run for three sync intervals."""

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from holds.models import PeriodicRun
from holds.sweeps import heartbeat
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db

BEAT_STOPPED = b"Celery beat has run no periodic task since"


@pytest.mark.django_db(transaction=True)
def test_the_periodic_tasks_that_beat_sends_are_recorded_as_a_worker_runs_them(celery_processes):
    celery_processes("worker", SYNC_INTERVAL_SECONDS="1")
    celery_processes("beat", SYNC_INTERVAL_SECONDS="1")

    first = wait_until(lambda: PeriodicRun.objects.filter(task="holds.tasks.sync_holds").first())
    later = wait_until(
        lambda: PeriodicRun.objects.filter(task="holds.tasks.sync_holds", last_run_at__gt=first.last_run_at).first()
    )

    assert later.last_run_at > first.last_run_at
    assert PeriodicRun.objects.filter(task="holds.tasks.sync_holds").count() == 1


def test_a_task_beat_does_not_schedule_is_not_recorded():
    heartbeat.record_run("holds.tasks.deliver_decision")
    heartbeat.record_run("holds.tasks.sweep_expiries")

    assert list(PeriodicRun.objects.values_list("task", flat=True)) == ["holds.tasks.sweep_expiries"]


def test_the_queue_says_beat_has_stopped_once_no_periodic_task_ran_for_three_sync_intervals(
    alice_client, samples, settings
):
    last_run = timezone.now()
    heartbeat.record_run("holds.tasks.sync_holds", last_run)
    interval = timedelta(seconds=settings.SYNC_INTERVAL_SECONDS)

    with time_machine.travel(last_run + 2 * interval, tick=False):
        still_running = alice_client.get(reverse("queue"))
    with time_machine.travel(last_run + 3 * interval + timedelta(seconds=1), tick=False):
        stopped = alice_client.get(reverse("queue"))

    assert BEAT_STOPPED not in still_running.content and b'class="banner warn"' not in still_running.content
    assert BEAT_STOPPED in stopped.content
    assert b"syncs, expiries, reminders and re-sends of decisions are stopped" in stopped.content


def test_a_beat_banner_names_beat_even_while_the_platform_is_unreachable(
    alice_client, samples, platform_client, platform_state, settings
):
    from holds.mirror import sync

    heartbeat.record_run("holds.tasks.sync_holds", timezone.now() - timedelta(hours=1))
    platform_state.push_faults([{"status": 503}])
    sync.sync_env(platform_client, "default")

    response = alice_client.get(reverse("queue"))

    assert BEAT_STOPPED in response.content and b"Platform unreachable" not in response.content


def test_a_queue_that_was_never_synced_asks_whether_beat_runs(alice_client):
    response = alice_client.get(reverse("queue"))

    assert (
        b"Not synced with the platform yet, and no periodic task has run: is Celery beat running?" in response.content
    )
