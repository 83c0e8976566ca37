"""Celery tasks: thin wrappers that call the plain functions doing the work."""

from celery import shared_task
from django.conf import settings

from holds import platform, sync


@shared_task
def sync_holds() -> list[dict]:
    """Mirror the open holds of every configured env (beat runs it every SYNC_INTERVAL_SECONDS)."""
    with platform.PlatformClient.from_settings() as client:
        results = sync.sync_all(client, settings.AGENTOS_ENVS)
    return [vars(result) for result in results]
