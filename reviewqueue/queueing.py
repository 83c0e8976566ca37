"""Queueing work for the Celery workers by task name: the one way domain code starts a task.

Domain modules never import a tasks module (the tasks import them); they name the
task here instead, as ``"<app>.tasks.<function>"``.
"""

import logging

from reviewqueue.celery import app

logger = logging.getLogger(__name__)


def queue(task_name: str, *args, description: str, countdown: float = 0) -> None:
    """Send ``task_name`` with ``args`` to the workers; a broker that is down is logged, not raised.

    Everything queued here is stored first and found again by a periodic re-queue,
    so a down broker must not fail the change that queues it: the work is sent once
    the broker is back. ``description`` names the work in that log line; the task runs
    ``countdown`` seconds from now at the earliest.
    """
    try:
        app.send_task(task_name, args=args, countdown=countdown or None)
    except Exception:
        logger.warning("could not queue %s; it will be re-queued", description, exc_info=True)
