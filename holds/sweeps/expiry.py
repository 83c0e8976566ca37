"""Expiry: close open holds past their expiry, and remind people before it comes.

The sweep locks the due holds it will close (skipping rows another sweep holds)
and closes them with a compare-and-set on ``status = open``, so several workers
or two beat schedulers never expire a hold twice or report it twice. Sync later
confirms the final state with the platform.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from holds import lifecycle
from holds.models import Hold
from holds.queue import listing as holds_queue
from notifications import notify
from notifications.models import Notification

BATCH = 500


def sweep(now: datetime | None = None) -> list[Hold]:
    """Expire the open holds whose time is up; return those this sweep expired."""
    now = now or timezone.now()
    expired = []
    while True:
        batch = _expire_batch(now)
        expired += batch
        if len(batch) < BATCH:
            return expired


def _expire_batch(now: datetime) -> list[Hold]:
    """Lock up to BATCH due holds (skipping any another sweep holds) and close them (``lifecycle.expire``)."""
    with transaction.atomic():
        due = list(
            Hold.objects.select_for_update(skip_locked=True)
            .filter(status=Hold.Status.OPEN, expires_at__lte=now)
            .order_by("expires_at", "pk")[:BATCH]
        )
        return lifecycle.expire(due, now)


def remind(now: datetime | None = None, among: QuerySet[Hold] | None = None) -> list[Hold]:
    """Remind about every open, undecided hold expiring within the lead time (of ``among`` only, when given), once
    per hold: a hold reminded of already, by this sweep or by the sync that mirrored it (``holds.sweeps.arrivals``), is
    left out, and the notifications' uniqueness stops two reminders made at the same moment."""
    now = now or timezone.now()
    lead = timedelta(minutes=settings.EXPIRY_REMINDER_MINUTES)
    reminded = Notification.objects.filter(event=Notification.Event.EXPIRING_SOON, hold=OuterRef("pk"))
    due = holds_queue.open_holds().filter(expires_at__gt=now, expires_at__lte=now + lead)
    if among is not None:
        due = due.filter(pk__in=among.values("pk"))
    due = list(due.exclude(Exists(reminded)).select_related("claimed_by"))
    with transaction.atomic():
        notify.expiring_soon(due, now)
    return due
