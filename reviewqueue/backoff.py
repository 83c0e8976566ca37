"""When to try again what the network refused, and when a retry counts as lost: decisions and notifications alike."""

import random
from datetime import timedelta

from django.conf import settings


def requeue_grace() -> timedelta:
    """A task due this long ago and still not run was lost (broker or worker down): queue it again.

    ``REQUEUE_SECONDS``; a needless re-queue is harmless, since every send first takes its row by compare-and-set.
    """
    return timedelta(seconds=settings.REQUEUE_SECONDS)


def retry_delay(attempts: int) -> float:
    """Exponential backoff with jitter: base × 2^(attempts−1), capped, ±20 %."""
    base = settings.DELIVERY_RETRY_BASE_SECONDS * 2 ** max(attempts - 1, 0)
    return min(base, settings.DELIVERY_RETRY_MAX_SECONDS) * random.uniform(0.8, 1.2)
