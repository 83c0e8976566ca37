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

from audit import events as audit_events
from audit.models import EventKind
from holds.models import Decision, Hold
from holds.queue import listing as holds_queue
from notifications import notify
from notifications.models import Notification
from reviewqueue import changes, sweeping

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
                Hold.objects.select_for_update(skip_locked=True)
                .filter(status=Hold.Status.OPEN, expires_at__lte=now)
                .exclude(pk__in=failed)
                .order_by("expires_at", "pk")[:BATCH]
            )
            closed = sweeping.batched(EXPIRY, due, lambda holds: _expire(holds, now))
        for hold in closed:
            hold.status, hold.closed_at, hold.expired_here_at = Hold.Status.EXPIRED, now, now
        failed |= {hold.pk for hold in due} - {hold.pk for hold in closed}
        expired += closed
        if len(due) < BATCH:
            return expired


def _expire(due: list[Hold], now: datetime) -> list[Hold]:
    """Close ``due`` (locked by the caller) and tell the auditors.

    The locked rows are ours alone until commit, so the one update closes exactly
    them; on SQLite, which has no row locks, the database-wide write lock does the same.
    """
    Hold.objects.filter(pk__in=[hold.pk for hold in due], status=Hold.Status.OPEN).update(
        status=Hold.Status.EXPIRED,
        closed_at=now,
        expired_here_at=now,
        claimed_by=None,
        claimed_at=None,
        claim_expires_at=None,
    )
    decided = set(
        Decision.objects.filter(hold__in=due).exclude(state__in=Decision.NOT_LIVE).values_list("hold", flat=True)
    )
    notify.expired([hold for hold in due if hold.pk not in decided])
    notify.resolve_for_holds([hold.pk for hold in due], notify.RESOLVED_BY_CLOSING, "expired", now)
    audit_events.record_many(audit_events.Entry(EventKind.EXPIRED, hold=hold) for hold in due)
    changes.publish("hold", due)
    return due


def expired_on_platform(hold: Hold) -> None:
    """Sync learned the platform expired a hold before our sweep did: end its claim and tell the auditors once."""
    Hold.objects.filter(pk=hold.pk).update(claimed_by=None, claimed_at=None, claim_expires_at=None)
    if not hold.live_decision():
        notify.expired([hold])


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
