"""Celery tasks for approvals: thin wrappers that call the plain functions doing the work."""

from celery import shared_task

from approvals import awaiting, escalation


@shared_task
def escalate_waiting_holds() -> int:
    """Escalate the holds left waiting past their policy's limits (beat: every ESCALATION_SWEEP_SECONDS)."""
    return len(escalation.sweep())


@shared_task
def refresh_awaited_stages() -> int:
    """The first stages of the open holds nobody approved, afresh after a policy changed (``awaiting.refresh_all``)."""
    return awaiting.refresh_all()
