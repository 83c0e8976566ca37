"""Celery tasks for approvals: thin wrappers that call the plain functions doing the work."""

from celery import shared_task

from approvals import escalation, policy_decisions


@shared_task
def escalate_waiting_holds() -> int:
    """Escalate the holds left waiting past their policy's limits (beat: every ESCALATION_SWEEP_SECONDS)."""
    return len(escalation.sweep())


@shared_task
def approve_due_holds() -> int:
    """Approve the holds whose 0-people policy's wait is over (beat: every POLICY_SWEEP_SECONDS)."""
    return len(policy_decisions.approve_due())


@shared_task
def send_default_outcomes() -> int:
    """Send the policies' default outcomes of holds nobody decided in time (beat: every POLICY_SWEEP_SECONDS)."""
    return len(policy_decisions.send_default_outcomes())
