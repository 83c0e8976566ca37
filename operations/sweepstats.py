"""Counting the sweeps' failures on single holds (``reviewqueue.sweeping.failed``): the counter behind
``reviewqueue_sweep_failures_total``."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from operations.models import SweepStats


def record_failure(sweep: str) -> None:
    """Add one failure of ``sweep`` to its counter (an atomic increment, so concurrent workers add up), in a savepoint
    of its own: a sweep's transaction goes on whatever happens here."""
    with transaction.atomic():
        SweepStats.objects.get_or_create(sweep=sweep)
        SweepStats.objects.filter(sweep=sweep).update(failures=F("failures") + 1, last_failed_at=timezone.now())


def failures() -> list[tuple[str, int]]:
    """(sweep, failures so far) of every sweep that has failed on a hold, by name."""
    return list(SweepStats.objects.order_by("sweep").values_list("sweep", "failures"))
