"""Sending notifications: each exactly once, with retries while the channel is unavailable.

Sending moves a row from pending to sending with a compare-and-set update
first, so only one worker ever sends it; network failures are retried with
backoff and every attempt is recorded. A row whose task was lost, or whose
worker died mid-send, is queued again by ``due_for_requeue``. One about a hold
that was decided or closed meanwhile (``notify.resolve_for_holds``, ``digest.narrow``)
is not sent, and its attempt says why. Pushes are sent in batches (``push_sending``), by the same rules.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.utils import timezone

from notifications import channels, digest, ending, push_sending
from notifications.models import Notification, WebhookChannel
from reviewqueue import backoff, queueing

logger = logging.getLogger(__name__)

SEND_TASK = "notifications.tasks.send_notification"
PUSH_TASK = "notifications.tasks.send_pushes"


def enqueue(notification_id: int) -> None:
    """Queue the sending; a down broker must not fail the change being reported: the re-queue sends it later."""
    queueing.queue(SEND_TASK, notification_id, description=f"notification {notification_id}")


def enqueue_all(pending: list[tuple[int, str]]) -> None:
    """Queue the sending of new notifications, given as (pk, channel): each alone, as ``enqueue`` does, but pushes
    ``push_sending.BATCH`` to a task (one urgent hold makes one for every subscribed device)."""
    pushes = [pk for pk, channel in pending if channel == Notification.Channel.PUSH]
    for pk, channel in pending:
        if channel != Notification.Channel.PUSH:
            enqueue(pk)
    for start in range(0, len(pushes), push_sending.BATCH):
        batch = pushes[start : start + push_sending.BATCH]
        queueing.queue(PUSH_TASK, batch, description=f"{len(batch)} pushes")


def send(notification_id: int) -> float | None:
    """Send one notification if it is still pending; return the seconds until a retry, or None when done."""
    now = timezone.now()
    pending = Notification.objects.filter(pk=notification_id, status=Notification.Status.PENDING)
    claimed = pending.exclude(channel=Notification.Channel.PUSH).update(
        status=Notification.Status.SENDING, next_attempt_at=now + ending.LEASE
    )
    if not claimed:  # a push (re-queued alone) goes as a batch of one; anything else was sent or taken already
        return push_sending.send([notification_id])
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
        return ending.retry_or_fail(notification, attempts, message, now)
    except Exception as error:  # a bug must not leave the row stuck in sending: record it as failed
        logger.exception("notification %s failed", notification.pk)
        _finish(notification, attempts, Notification.Status.FAILED, f"{type(error).__name__}: {error}")
        return None
    _finish(notification, attempts, Notification.Status.SENT, "")
    if notification.webhook and notification.webhook.failing:
        WebhookChannel.objects.filter(pk=notification.webhook.pk).update(failing=False)
    return None


def _finish(notification: Notification, attempts: int, status: str, message: str) -> None:
    ending.record([ending.End(notification, attempts, status, message)])


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
