"""The cache as a speed-up only: when it does not answer, callers carry on without it (and it is logged)."""

from __future__ import annotations

import logging

from django.core.cache import cache

logger = logging.getLogger(__name__)


def get_many(keys: list[str], what: str) -> dict:
    """The values the cache holds under ``keys``, in one round trip; none when the cache is down."""
    try:
        return cache.get_many(keys)
    except Exception:
        logger.warning("the cache did not answer; computing %s instead", what, exc_info=True)
        return {}


def set_many(values: dict, timeout: int, what: str) -> None:
    """Store ``values`` for ``timeout`` seconds, in one round trip; nothing when the cache is down."""
    try:
        cache.set_many(values, timeout)
    except Exception:
        logger.warning("the cache did not take %s", what, exc_info=True)
