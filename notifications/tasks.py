"""Celery tasks for notifications: thin wrappers that call the plain functions doing the work."""

from celery import shared_task

from notifications import notify, push_sending, sending
from reviewqueue import sweeping
from reviewqueue.celery import RetryingTask


@shared_task
def send_new_holds_digests() -> int:
    return len(notify.digest_new_holds())


@shared_task(base=RetryingTask)
def send_notification(notification_id: int) -> float | None:
    """Send one notification; retry with backoff while its channel is unavailable."""
    return sending.send(notification_id)


@shared_task(base=RetryingTask)
def send_pushes(notification_ids: list[int]) -> float | None:
    """Send a batch of pushes; wait for the next of them due soon (a device's pace, or a retry's backoff)."""
    return push_sending.send(notification_ids)


@shared_task
def requeue_due_notifications() -> list[int]:
    """Queue again the notifications whose sending task was lost, each alone (``reviewqueue.sweeping``)."""
    due = sending.due_for_requeue()
    queued = sweeping.each("notification_requeue", due, send_notification.delay, lambda pk: {"notification_id": pk})
    return [pk for pk, _ in queued]
