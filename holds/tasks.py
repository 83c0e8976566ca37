"""Celery tasks: thin wrappers that call the plain functions doing the work."""

from celery import shared_task
from celery.signals import task_prerun
from django.conf import settings
from django.utils import timezone

from holds.deciding import by_policy, delivery
from holds.mirror import platform, sync
from holds.related import sharing, stored
from holds.sweeps import arrivals, expiry, heartbeat
from reviewqueue import sweeping
from reviewqueue.celery import RetryingTask


@task_prerun.connect
def record_periodic_run(sender, **_) -> None:
    """Note each periodic task as it starts, so the queue can tell when beat has stopped."""
    heartbeat.record_run(sender.name)


@shared_task
def sync_holds() -> list[dict]:
    """Mirror the new holds of every configured env, and walk on through its whole listing (beat runs it every
    SYNC_INTERVAL_SECONDS; see ``sync.keep_up``), then announce the new ones that cannot wait for the sweeps
    (``holds.sweeps.arrivals``)."""
    started = timezone.now()
    with platform.PlatformClient.from_settings() as client:
        results = sync.keep_up_all(client, settings.AGENTOS_ENVS)
    if any(result.created for result in results):
        arrivals.announce(since=started)
    return [vars(result) for result in results]


@shared_task(base=RetryingTask)
def deliver_decision(decision_id: int) -> float | None:
    """Post a stored decision; retry with backoff (and the same key) while the platform is unavailable."""
    with platform.PlatformClient.from_settings() as client:
        return delivery.deliver(decision_id, client)


@shared_task
def requeue_due_decisions() -> list[int]:
    """Queue again the decisions whose delivery task was lost (broker or worker down at the time), each alone
    (``reviewqueue.sweeping``)."""
    due = delivery.due_for_requeue()
    return [pk for pk, _ in sweeping.each("delivery_requeue", due, deliver_decision.delay, sweeping.decision_of)]


@shared_task
def alert_undelivered_decisions() -> int:
    return len(delivery.alert_undelivered())


@shared_task
def reread_subjects() -> int:
    """Read again the subjects of the holds whose agents' subject keys an admin changed (queued by the change, and
    beat: every minute, for a task the broker lost)."""
    return stored.reread_asked()


@shared_task
def mark_shared_holds() -> int:
    """Mark the open holds sharing a subject that two writers at once left unmarked (beat: hourly)."""
    return sharing.mark_open()


@shared_task
def sweep_expiries() -> dict:
    """Expire holds whose time is up and remind people of those about to expire (beat: every 30 s)."""
    return {"expired": len(expiry.sweep()), "reminded": len(expiry.remind())}


@shared_task
def approve_due_holds() -> int:
    """Approve the holds whose 0-people policy's wait is over (beat: every POLICY_SWEEP_SECONDS)."""
    return len(by_policy.approve_due())


@shared_task
def send_default_outcomes() -> int:
    """Send the policies' default outcomes of holds nobody decided in time (beat: every POLICY_SWEEP_SECONDS)."""
    return len(by_policy.send_default_outcomes())
