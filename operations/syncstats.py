"""Counting syncs per env as each one ends: the counters behind the sync metrics."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from operations.models import SyncStats


def record_sync(env: str, seconds: float, failed: bool) -> None:
    """Add one finished sync of ``env`` to its counters (an atomic increment, so concurrent workers add up)."""
    SyncStats.objects.get_or_create(env=env)
    SyncStats.objects.filter(env=env).update(
        syncs=F("syncs") + 1,
        failures=F("failures") + int(failed),
        seconds_total=F("seconds_total") + seconds,
        last_seconds=seconds,
        last_ended_at=timezone.now(),
    )
