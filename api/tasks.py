"""Celery tasks: thin wrappers that call the plain functions doing the work."""

from celery import shared_task

from api import idempotency


@shared_task
def forget_old_idempotency_keys() -> int:
    """Delete the Idempotency-Keys kept past their time (``idempotency.forget_old``)."""
    return idempotency.forget_old()
