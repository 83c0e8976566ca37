"""The API's brake: at most ``API_RATE_PER_MINUTE`` requests in each minute of the clock per person, across all
their tokens, and as many requests with a token that is refused (unknown, revoked, expired) per client address.

Counted in the cache (Redis, shared by every web process; without ``REDIS_URL`` each process
counts its own) under a key naming the person (or the address) and the minute, which expires with
it. A count the cache cannot give fails closed: the request is refused (503) rather than let
through uncounted.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache

from api import problems
from reviewqueue import forwarded

logger = logging.getLogger(__name__)
WINDOW_SECONDS = 60


def check_person(user_pk: int, now: float | None = None) -> None:
    """Count one request of a person's token; raise a 429 ``Problem`` (with ``Retry-After``) past the rate."""
    _count(f"person:{user_pk}", "Your tokens together may make {rate} requests a minute", now)


def check_refused(request, now: float | None = None) -> None:
    """Count one request whose token was refused, against the client's address (``forwarded.client_ip``); a 429
    ``Problem`` past the rate."""
    address = forwarded.client_ip(request) or "unknown"
    _count(f"address:{address}", "This address may send {rate} requests a minute with a token that is refused", now)


def _count(who: str, words: str, now: float | None) -> None:
    now = time.time() if now is None else now
    window = int(now // WINDOW_SECONDS)
    retry_after = str(max(1, (window + 1) * WINDOW_SECONDS - int(now)))
    key = f"api-rate:{who}:{window}"
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
            f"{words.format(rate=settings.API_RATE_PER_MINUTE)}; try again in {retry_after} s.",
            "rate-limited",
            headers={"Retry-After": retry_after},
        )
