"""When the periodic tasks last ran: if none has run lately, Celery beat (or every worker) is down.

A worker notes each periodic task as it starts it (Celery's ``task_prerun`` signal, connected
in ``holds/tasks.py``), so the tasks stay thin and any task added to ``CELERY_BEAT_SCHEDULE``
counts. It is noted where it runs rather than where beat sends it, because what matters to
reviewers is that syncs, expiries and reminders actually happen.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, Func, QuerySet
from django.utils import timezone

from holds.models import PeriodicRun


def periodic_task_names() -> set[str]:
    return {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}


def record_run(task_name: str, now: datetime | None = None) -> None:
    """Note that ``task_name`` runs now, if it is one of beat's periodic tasks."""
    if task_name not in periodic_task_names():
        return
    PeriodicRun.objects.bulk_create(
        [PeriodicRun(task=task_name, last_run_at=now or timezone.now())],
        update_conflicts=True,
        unique_fields=["task"],
        update_fields=["last_run_at"],
    )


def last_run_at() -> datetime | None:
    """When any periodic task last ran; None if none ever has."""
    return last_run().get()["latest"]


def last_run() -> QuerySet[PeriodicRun]:
    """``last_run_at`` as a query of one row and value, ``latest``: for the queue to read with its sync states."""
    # MAX as a plain function, not an aggregate: one row without a GROUP BY, also as a scalar subquery.
    return PeriodicRun.objects.order_by().annotate(latest=Func(F("last_run_at"), function="MAX")).values("latest")


def overdue(moment: datetime, now: datetime) -> bool:
    """Whether ``moment`` lies more than three sync intervals before ``now``.

    The one staleness rule: a sync or a periodic task older than that means the
    mirror (or beat) has stopped keeping up; a single late run does not.
    """
    return moment < now - timedelta(seconds=3 * settings.SYNC_INTERVAL_SECONDS)


def walk_overdue(last_walk_ended: datetime | None, now: datetime) -> bool:
    """Whether a reconciling walk has ended, but none within three ``SYNC_RECONCILE_MINUTES`` (plus an interval): then
    holds ended elsewhere go unnoticed until opened, though each interval's tail sync succeeds."""
    if last_walk_ended is None:
        return False
    period = timedelta(minutes=3 * settings.SYNC_RECONCILE_MINUTES, seconds=settings.SYNC_INTERVAL_SECONDS)
    return last_walk_ended < now - period


def stopped(last_run: datetime | None, now: datetime) -> bool:
    """Whether periodic tasks have run, but none lately (``overdue``): then nothing periodic happens."""
    return last_run is not None and overdue(last_run, now)
