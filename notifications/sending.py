"""Sending notifications: each exactly once, with retries while the channel is unavailable.

Sending moves a row from pending to sending with a compare-and-set update
first, so only one worker ever sends it; network failures are retried with
backoff and every attempt is recorded. A row whose task was lost, or whose
worker died mid-send, is queued again by ``due_for_requeue``. One about a hold
that was decided or closed meanwhile (``notify.resolve_for_holds``, ``digest.narrow``)
is not sent, and its attempt says why.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import OperationalError, transaction
from django.utils import timezone

from audit import events as audit_events
from audit.events import holding
from notifications import channels, digest
from notifications.models import Notification, NotificationAttempt, WebhookChannel
from reviewqueue import backoff, queueing

logger = logging.getLogger(__name__)

SEND_TASK = "notifications.tasks.send_notification"
SENDING_LEASE = timedelta(minutes=10)
FINISH_TRIES = 5  # a deadlock's loser is rolled back at once: the next try finds the other transaction done


def enqueue(notification_id: int) -> None:
    """Queue the sending; a down broker must not fail the change being reported: the re-queue sends it later."""
    queueing.queue(SEND_TASK, notification_id, description=f"notification {notification_id}")


def send(notification_id: int) -> float | None:
    """Send one notification if it is still pending; return the seconds until a retry, or None when done."""
    now = timezone.now()
    claimed = Notification.objects.filter(pk=notification_id, status=Notification.Status.PENDING).update(
        status=Notification.Status.SENDING, next_attempt_at=now + SENDING_LEASE
    )
    if not claimed:
        return None
    notification = Notification.objects.select_related("user", "webhook", "hold").get(pk=notification_id)
    attempts = notification.attempts + 1
    if notification.resolved_at:
        _finish(notification, attempts, Notification.Status.RESOLVED, f"not sent: {notification.resolved_reason}")
        return None
    if notification.event == Notification.Event.NEW_HOLDS and not digest.narrow(notification):
        _finish(
            notification, attempts, Notification.Status.RESOLVED, "not sent: every hold listed was decided or closed"
        )
        return None
    try:
        channels.send(notification)
    except channels.Refused as refusal:
        _finish(notification, attempts, Notification.Status.FAILED, str(refusal))
        if notification.webhook:
            WebhookChannel.objects.filter(pk=notification.webhook.pk).update(
                failing=True, last_error=str(refusal), last_error_at=now
            )
        return None
    except channels.TRANSIENT_ERRORS as error:
        message = str(error) if isinstance(error, channels.Unavailable) else f"{type(error).__name__}: {error}"
        if attempts >= settings.NOTIFY_RETRY_LIMIT:
            _finish(notification, attempts, Notification.Status.FAILED, message)
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
    except Exception as error:  # a bug must not leave the row stuck in sending: record it as failed
        logger.exception("notification %s failed", notification.pk)
        _finish(notification, attempts, Notification.Status.FAILED, f"{type(error).__name__}: {error}")
        return None
    _finish(notification, attempts, Notification.Status.SENT, "")
    if notification.webhook and notification.webhook.failing:
        WebhookChannel.objects.filter(pk=notification.webhook.pk).update(failing=False)
    return None


def _finish(notification: Notification, attempts: int, status: str, message: str) -> None:
    """Record how sending ended; the audit trail hears of messages sent or failed, not of those resolved first.

    The message went out (or will never): a deadlock or a lost connection must not leave the row ``sending``,
    where the lease's end would send it again. The record is retried (``FINISH_TRIES``) until it is stored.
    """
    for tried in range(1, FINISH_TRIES + 1):
        try:
            return _record_finish(notification, attempts, status, message)
        except OperationalError:
            if tried == FINISH_TRIES:
                raise
            logger.warning("recording how notification %s ended failed; trying again", notification.pk)
    return None


def _record_finish(notification: Notification, attempts: int, status: str, message: str) -> None:
    now = timezone.now()
    # The notification row before the audit chain's head, as every transaction takes them
    # (see holds.handover.assignments).
    with transaction.atomic():
        NotificationAttempt.objects.create(notification=notification, at=now, outcome=status, message=message)
        Notification.objects.filter(pk=notification.pk).update(
            status=status,
            attempts=attempts,
            last_error="" if status == Notification.Status.RESOLVED else message,
            sent_at=now if status == "sent" else None,
        )
        if status == Notification.Status.RESOLVED:
            return
        if status == Notification.Status.SENT:
            audit_events.append(holding.notification_sent(notification=notification))
        else:
            audit_events.append(holding.notification_failed(notification=notification, error=message))


def due_for_requeue(now: datetime | None = None) -> list[int]:
    """Pending notifications whose task was lost, and sending ones whose worker died (lease over)."""
    now = now or timezone.now()
    Notification.objects.filter(status=Notification.Status.SENDING, next_attempt_at__lt=now).update(
        status=Notification.Status.PENDING
    )
    return list(
        Notification.objects.filter(
            status=Notification.Status.PENDING, next_attempt_at__lt=now - backoff.requeue_grace()
        ).values_list("pk", flat=True)[:500]
    )
