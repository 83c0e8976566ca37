"""Celery tasks: thin wrappers that call the plain functions doing the work."""

from celery import shared_task
from django.conf import settings

from holds import decisions, platform, sync


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
