"""How long to wait before retrying something the network refused: decisions and notifications alike."""

import random

from django.conf import settings


def retry_delay(attempts: int) -> float:
    """Exponential backoff with jitter: base × 2^(attempts−1), capped, ±20 %."""
    base = settings.DELIVERY_RETRY_BASE_SECONDS * 2 ** max(attempts - 1, 0)
    return min(base, settings.DELIVERY_RETRY_MAX_SECONDS) * random.uniform(0.8, 1.2)
