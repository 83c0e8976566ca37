"""How many streams may be open: ``LIVE_STREAMS_PER_SESSION`` for one session, across every process, and
``LIVE_STREAMS_PER_PROCESS`` for one process. A stream refused is a page that polls, as it would without streams.

A session's streams are the members of a sorted set in Redis, each scored with when it lapses unless renewed: a
stream renews its place with each heartbeat, so the place of one whose process died lapses by itself.
"""

from __future__ import annotations

import hashlib
import secrets
import time

import redis.asyncio as aioredis
from django.conf import settings

from live import streams

# KEYS: the session's set; ARGV: now, the new place's lapse time, its name, the cap, the set's lifetime.
_ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
return 1
"""


class Place:
    """One stream's place among its session's."""

    def __init__(self, redis: aioredis.Redis, key: str):
        self.redis = redis
        self.key = key
        self.name = secrets.token_hex(8)

    async def take(self) -> bool:
        now = time.time()
        lapse = _lapse_seconds()
        admitted = await self.redis.eval(
            _ADMIT, 1, self.key, now, now + lapse, self.name, settings.LIVE_STREAMS_PER_SESSION, int(lapse) + 1
        )
        return bool(admitted)

    async def renew(self) -> None:
        await self.redis.zadd(self.key, {self.name: time.time() + _lapse_seconds()}, xx=True)

    async def leave(self) -> None:
        await self.redis.zrem(self.key, self.name)


def _lapse_seconds() -> float:
    return 3 * settings.LIVE_HEARTBEAT_SECONDS


def process_full() -> bool:
    return streams.open_streams() >= settings.LIVE_STREAMS_PER_PROCESS


def place_for(redis: aioredis.Redis, session_key: str) -> Place:
    """The place a stream of this session takes: the key names the session by a digest, never by its key."""
    return Place(redis, "live:session:" + hashlib.sha256(session_key.encode()).hexdigest()[:32])
