"""Celery tasks: thin wrappers that call the plain functions doing the work."""

from celery import shared_task
from celery.signals import task_prerun
from django.conf import settings

from holds import decisions, expiry, heartbeat, notify, platform, sync


@task_prerun.connect
def record_periodic_run(sender, **_) -> None:
    """Note each periodic task as it starts, so the queue can tell when beat has stopped."""
    heartbeat.record_run(sender.name)


@shared_task
def sync_holds() -> list[dict]:
    """Mirror the open holds of every configured env (beat runs it every SYNC_INTERVAL_SECONDS)."""
    with platform.PlatformClient.from_settings() as client:
        results = sync.sync_all(client, settings.AGENTOS_ENVS)
    return [vars(result) for result in results]


@shared_task(bind=True, max_retries=None, acks_late=True)
def deliver_decision(self, decision_id: int) -> None:
    """Post a stored decision; retry with backoff (and the same key) while the platform is unavailable."""
    with platform.PlatformClient.from_settings() as client:
        delay = decisions.deliver(decision_id, client)
    if delay is not None:
        raise self.retry(countdown=delay)


@shared_task
def requeue_due_decisions() -> list[int]:
    """Queue again the decisions whose delivery task was lost (broker or worker down at the time)."""
    due = decisions.due_for_requeue()
    for decision_id in due:
        deliver_decision.delay(decision_id)
    return due


@shared_task
def alert_undelivered_decisions() -> int:
    return len(decisions.alert_undelivered())


@shared_task
def sweep_expiries() -> dict:
    """Expire holds whose time is up and remind people of those about to expire (beat: every 30 s)."""
    return {"expired": len(expiry.sweep()), "reminded": len(expiry.remind())}


@shared_task
def send_new_holds_digests() -> int:
    return len(notify.digest_new_holds())


@shared_task(bind=True, max_retries=None, acks_late=True)
def send_notification(self, notification_id: int) -> None:
    delay = notify.send(notification_id)
    if delay is not None:
        raise self.retry(countdown=delay)


@shared_task
def requeue_due_notifications() -> list[int]:
    due = notify.due_for_requeue()
    for notification_id in due:
        send_notification.delay(notification_id)
    return due
