"""Expiry: close open holds past their expiry, and remind people before it comes.

The sweep locks the due holds it will close (skipping rows another sweep holds)
and closes them with a compare-and-set on ``status = open``, so several workers
or two beat schedulers never expire a hold twice or report it twice. Sync later
confirms the final state with the platform. Each batch is closed, or reminded of, in one savepoint,
and should that fail each hold in its own (``reviewqueue.sweeping``): a bad hold is left open and
counted, the others go on.
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
from reviewqueue import sweeping

BATCH = 500
EXPIRY, REMINDERS = "expiry", "reminders"  # the names their failures are counted under (``reviewqueue.sweeping``)


def sweep(now: datetime | None = None) -> list[Hold]:
    """Expire the open holds whose time is up; return those this sweep expired. A hold it fails on stays open,
    logged and counted (``reviewqueue.sweeping``), and is not tried again in this sweep."""
    now = now or timezone.now()
    expired, failed = [], set()
    while True:
        with transaction.atomic():
            due = list(
                Hold.objects.select_for_update(skip_locked=True, no_key=True)
                .filter(status=Hold.Status.OPEN, expires_at__lte=now)
                .exclude(pk__in=failed)
                .order_by("expires_at", "pk")[:BATCH]
            )
            closed = sweeping.batched(EXPIRY, due, lambda holds: lifecycle.expire(holds, now))
        failed |= {hold.pk for hold in due} - {hold.pk for hold in closed}
        expired += closed
        if len(due) < BATCH:
            return expired


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

    def reminded_of(holds: list[Hold]) -> list[Hold]:
        notify.expiring_soon(holds, now)
        return holds

    return sweeping.batched(REMINDERS, due, reminded_of)
