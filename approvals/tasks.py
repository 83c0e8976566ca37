"""Celery tasks for approvals: thin wrappers that call the plain functions doing the work."""

from celery import shared_task

from approvals import escalation


@shared_task
def escalate_waiting_holds() -> int:
    """Escalate the holds left waiting past their policy's limits (beat: every ESCALATION_SWEEP_SECONDS)."""
    return len(escalation.sweep())
