"""How sending a notification ended, recorded: its attempt, its row's new state, and the audit trail's event; or
that it is to be tried again later (``retry_or_fail``).

One place for every sender (``sending`` one notification at a time, ``push_sending`` a batch of pushes), which
each hold a row for ``LEASE`` while sending it. The
message went out (or never will): a deadlock or a lost connection must not leave a row ``sending``, where its lease's
end would send it again, so the record is retried (``TRIES``) until it is stored. The audit trail hears of messages
sent or failed, not of those resolved first, nor of pushes folded into another.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db import OperationalError, transaction
from django.utils import timezone

from audit import events as audit_events
from audit.events import holding
from notifications.models import Notification, NotificationAttempt
from reviewqueue import backoff

logger = logging.getLogger(__name__)

TRIES = 5  # a deadlock's loser is rolled back at once: the next try finds the other transaction done
LEASE = timedelta(minutes=10)  # a row sending longer than this was lost with its worker: ``due_for_requeue`` frees it
UNAUDITED = frozenset({Notification.Status.RESOLVED, Notification.Status.FOLDED})


@dataclasses.dataclass(frozen=True)
class End:
    """How sending ``notification`` ended, at its ``attempts``-th attempt: its new ``status`` and why."""

    notification: Notification
    attempts: int
    status: str
    message: str = ""


def retry_or_fail(notification: Notification, attempts: int, message: str, now: datetime) -> float | None:
    """The channel could not take the message now (``message`` says why): leave it pending with backoff, its attempt
    recorded, and answer the seconds until its retry; or, past ``NOTIFY_RETRY_LIMIT`` attempts, record it failed and
    answer None."""
    if attempts >= settings.NOTIFY_RETRY_LIMIT:
        record([End(notification, attempts, Notification.Status.FAILED, message)])
        return None
    delay = backoff.retry_delay(attempts)
    with transaction.atomic():
        NotificationAttempt.objects.create(notification=notification, at=now, outcome="retry", message=message)
        Notification.objects.filter(pk=notification.pk).update(
            status=Notification.Status.PENDING,
            attempts=attempts,
            last_error=message,
            next_attempt_at=now + timedelta(seconds=delay),
        )
    return delay


def record(ends: list[End]) -> None:
    """Store every end in one transaction, retried until stored."""
    for tried in range(1, TRIES + 1):
        try:
            return _record(ends)
        except OperationalError:
            if tried == TRIES:
                raise
            logger.warning("recording how %d notifications ended failed; trying again", len(ends))
    return None


def _record(ends: list[End]) -> None:
    if not ends:
        return
    now = timezone.now()
    alike = defaultdict(list)
    for end in ends:
        alike[(end.attempts, end.status, end.message)].append(end.notification.pk)
    # The notification rows before the audit chain's head, as every transaction takes them
    # (see holds.handover.assignments).
    with transaction.atomic():
        NotificationAttempt.objects.bulk_create(
            NotificationAttempt(notification=end.notification, at=now, outcome=end.status, message=end.message)
            for end in ends
        )
        for (attempts, status, message), pks in alike.items():
            Notification.objects.filter(pk__in=pks).update(
                status=status,
                attempts=attempts,
                last_error="" if status in UNAUDITED else message,
                sent_at=now if status in (Notification.Status.SENT, Notification.Status.FOLDED) else None,
            )
        audit_events.record_many(
            holding.notification_sent(notification=end.notification)
            if end.status == Notification.Status.SENT
            else holding.notification_failed(notification=end.notification, error=end.message)
            for end in ends
            if end.status not in UNAUDITED
        )
