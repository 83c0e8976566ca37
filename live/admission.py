"""How many streams may be open: ``LIVE_STREAMS_PER_SESSION`` for one session and ``LIVE_STREAMS_PER_PERSON`` for one
person across all their sessions, each across every process, and ``LIVE_STREAMS_PER_PROCESS`` for one process. A
stream refused is a page that polls, as it would without streams.

A stream's place is a member of two sorted sets in Redis, its session's and its person's, each member scored with
when it lapses unless renewed: a stream renews its place with each heartbeat, so the place of one whose process died
lapses by itself.
"""

from __future__ import annotations

import hashlib
import secrets
import time

import redis.asyncio as aioredis
from django.conf import settings

from live import streams

SESSION_FULL, PERSON_FULL = 0, -1  # what ``_ADMIT`` answers when a cap refuses the place
# KEYS: the session's set, the person's set; ARGV: now, the new place's lapse time, its name, the session's cap, the
# person's cap, the sets' lifetime. Both sets are checked before either is written: a place is taken in both or none.
_ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[2], ARGV[3])
  redis.call('EXPIRE', key, tonumber(ARGV[6]))
end
return 1
"""


class Place:
    """One stream's place among its session's and its person's."""

    def __init__(self, redis: aioredis.Redis, session_key: str, person_key: str):
        self.redis = redis
        self.keys = (session_key, person_key)
        self.name = secrets.token_hex(8)

    async def take(self) -> int:
        """1 when the place is taken, else ``SESSION_FULL`` or ``PERSON_FULL``: which cap refused it."""
        now = time.time()
        lapse = _lapse_seconds()
        caps = (settings.LIVE_STREAMS_PER_SESSION, settings.LIVE_STREAMS_PER_PERSON)
        return int(await self.redis.eval(_ADMIT, 2, *self.keys, now, now + lapse, self.name, *caps, int(lapse) + 1))

    async def renew(self) -> None:
        lapse = time.time() + _lapse_seconds()
        for key in self.keys:
            await self.redis.zadd(key, {self.name: lapse}, xx=True)

    async def leave(self) -> None:
        for key in self.keys:
            await self.redis.zrem(key, self.name)


def _lapse_seconds() -> float:
    return 3 * settings.LIVE_HEARTBEAT_SECONDS


def process_full() -> bool:
    return streams.open_streams() >= settings.LIVE_STREAMS_PER_PROCESS


def place_for(redis: aioredis.Redis, session_key: str, user_pk: int) -> Place:
    """The place a stream of this session and person takes: the key names the session by a digest, never by its
    key."""
    session = "live:session:" + hashlib.sha256(session_key.encode()).hexdigest()[:32]
    return Place(redis, session, f"live:person:{user_pk}")
