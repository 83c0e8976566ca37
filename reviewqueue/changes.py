"""Telling open pages that something changed: the one function every writer publishes through (``publish``).

A writer calls ``publish`` inside or after its transaction; the event leaves only once that transaction has
committed (``transaction.on_commit``), so a change rolled back is never announced. Each event gets the next number
of one counter in Redis (``live:event-id``), is kept in a short replay buffer (``live:events``, the last
``BUFFERED_EVENTS``) and published on one channel (``channel()``), all in one script, so a subscriber that reads
the buffer after subscribing misses nothing and sees no event twice. The ``live`` app streams them to the pages.

An event says what kind of thing changed (``KINDS``) and where: the holds it is about, each with its env, agent and
capability (what a team scope reads, so a stream can leave out the holds its viewer may not see), and for an
event meant for some people only (the bell) their user ids. It never carries agent-written text: the page fetches
what it shows through the normal views, with their scopes, roles and escaping. The holds' scope fields stay on the
server; what a page receives is the kind, the event's number and hold ids.

With ``LIVE_EVENTS`` off, or without Redis, nothing is published and the pages poll as they always did. A
publication that fails is logged and dropped: the pages' polls, which go on while a stream is down, and a
replay gap's "refresh", make up for it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

import redis
from django.conf import settings
from django.db import transaction

from reviewqueue import processcache

logger = logging.getLogger(__name__)

STREAM_PATH = "/events/"  # where the live app serves the streams (reviewqueue/urls.py)
KINDS = frozenset({"hold", "decision", "claim", "presence", "approval", "assignment", "note", "bell"})
BUFFER_KEY = "live:events"
COUNTER_KEY = "live:event-id"
BUFFERED_EVENTS = 500  # about a busy minute of a large team: a reconnect after longer is told to refresh
BUFFER_SECONDS = 600  # an idle buffer goes, with the counter left where it was

# KEYS: counter, buffer, channel; ARGV: the event's JSON without its id, the buffer's length, its lifetime.
_PUBLISH = """
local id = redis.call('INCR', KEYS[1])
local event = '{"id":' .. id .. ',' .. string.sub(ARGV[1], 2)
redis.call('LPUSH', KEYS[2], event)
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]))
redis.call('PUBLISH', KEYS[3], event)
return id
"""


def enabled() -> bool:
    """Whether events are published and streamed: ``LIVE_EVENTS`` on and a Redis to carry them."""
    return bool(settings.LIVE_EVENTS and settings.REDIS_URL)


def publish(kind: str, holds: Iterable = (), *, users: Iterable[int] = ()) -> None:
    """Announce, once the current transaction commits (at once outside one), that ``kind`` changed about ``holds``
    (objects with ``pk``, ``env``, ``agent`` and ``capability``: holds) or, for ``users`` alone, about them.

    Never raises: a change that is stored must not fail for want of its announcement.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind of event {kind!r}")
    if not enabled():
        return
    event = {
        "kind": kind,
        "holds": [[hold.pk, hold.env, hold.agent, hold.capability] for hold in holds],
        "users": sorted(set(users)),
    }
    if not event["holds"] and not event["users"]:
        return
    transaction.on_commit(lambda: _send(event), robust=True)


def _send(event: dict) -> None:
    try:
        _script()(
            keys=[COUNTER_KEY, BUFFER_KEY, channel()],
            args=[json.dumps(event, separators=(",", ":")), BUFFERED_EVENTS, BUFFER_SECONDS],
        )
    except redis.RedisError:
        logger.warning("a live event was not published: %s", event["kind"], exc_info=True)


def latest_id() -> int:
    """The number of the last event published (0 for none, or when Redis does not answer): where a page's stream
    starts, so that it misses nothing published after the page was drawn."""
    if not enabled():
        return 0
    try:
        return int(_client().get(COUNTER_KEY) or 0)
    except (redis.RedisError, ValueError):
        logger.warning("the live events' counter could not be read", exc_info=True)
        return 0


def channel() -> str:
    """The events' channel: named for the Redis database, as the counter and buffer are in it, since a channel is
    shared by every database of the server (two apps, or two test runs, on one Redis would hear each other)."""
    return f"live:channel:{_client().connection_pool.connection_kwargs.get('db', 0)}"


@processcache.cached
def _client() -> redis.Redis:
    """One client a process: it takes a connection from its pool for each command, from any thread."""
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


@processcache.cached
def _script():
    return _client().register_script(_PUBLISH)
