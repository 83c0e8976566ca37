"""The per-token brake: at most ``API_RATE_PER_MINUTE`` requests a token in each minute of the clock.

Counted in the cache (Redis, shared by every web process; without ``REDIS_URL`` each process
counts its own) under a key naming the token and the minute, which expires with it. A count
the cache cannot give fails closed: the request is refused (503) rather than let through uncounted.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache

from api import problems

logger = logging.getLogger(__name__)
WINDOW_SECONDS = 60


def check(token_digest: str, now: float | None = None) -> None:
    """Count one request of the token; raise a 429 ``Problem`` (with ``Retry-After``) past the rate."""
    now = time.time() if now is None else now
    window = int(now // WINDOW_SECONDS)
    retry_after = str(max(1, (window + 1) * WINDOW_SECONDS - int(now)))
    key = f"api-rate:{token_digest[:32]}:{window}"  # named by the token's digest, never reused
    try:
        cache.add(key, 0, WINDOW_SECONDS + 5)
        count = cache.incr(key)
    except Exception:
        logger.warning("the API's rate limit could not be counted; refusing the request", exc_info=True)
        raise problems.Problem(
            503,
            "The request could not be counted against the rate limit; try again shortly.",
            headers={"Retry-After": retry_after},
        ) from None
    if count > settings.API_RATE_PER_MINUTE:
        raise problems.Problem(
            429,
            f"This token may make {settings.API_RATE_PER_MINUTE} requests a minute; try again in {retry_after} s.",
            "rate-limited",
            headers={"Retry-After": retry_after},
        )
