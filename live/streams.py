"""One page's event stream: what ``reviewqueue.changes`` published, narrowed to what its viewer may see, as SSE.

A process subscribes once to the events' channel (``Hub``) and hands each event to every stream it serves, each
with a queue of its own. A stream subscribes first, then replays from the buffer what came after the page's last
event (its ``Last-Event-ID``, or the ``since`` the page was drawn with): so nothing published in between is lost,
and an event both replayed and received is sent once. When the buffer no longer reaches back that far (or the
counter was reset), the page is told to ``refresh``: to fetch again everything it shows. Events received live
are told in the order they come, whatever their numbers: after Redis lost the counter they start again from 1.

A stream sends a ``ping`` every ``LIVE_HEARTBEAT_SECONDS``, so that no proxy closes it for idleness and the page can
tell a silent stream from a dead one, and ends after ``LIVE_STREAM_SECONDS``: the page reconnects with its last id,
and the new stream reads the viewer's roles and scopes afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field

import redis.asyncio as aioredis
from django.conf import settings

from reviewqueue import changes, processcache, roles
from reviewqueue.viewer import Viewer
from teams import scopes

logger = logging.getLogger(__name__)

RETRY_MILLISECONDS = 1000  # how soon the browser reconnects a stream that ended
QUEUED_EVENTS = 1000  # a stream this far behind is told to refresh rather than read them all
REFRESH = {"kind": "refresh"}
GONE = {"kind": "gone"}  # the process lost its subscription: the stream ends, the page reconnects or polls
# KEYS: the counter, the buffer: both read at one moment.
_READ_BUFFER = "return {redis.call('GET', KEYS[1]) or '0', redis.call('LRANGE', KEYS[2], 0, -1)}"


class Unavailable(Exception):
    """Redis does not answer: no stream now; the page polls."""


@dataclass(eq=False)
class Listener:
    """One stream's place at the hub: the events for it, in order."""

    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(QUEUED_EVENTS))

    def offer(self, event: dict) -> None:
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(REFRESH)


class Hub:
    """The process's one subscription to the events' channel, shared by every stream it serves on its event loop."""

    def __init__(self):
        self.listeners: set[Listener] = set()
        self.loop = asyncio.get_running_loop()
        self.redis = aioredis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2)
        self._subscribed: asyncio.Future | None = None
        self._task: asyncio.Task | None = None

    async def attach(self) -> Listener:
        """A listener receiving every event published from now on; ``Unavailable`` when Redis does not answer."""
        if self._task is None or self._task.done():
            self._subscribed = self.loop.create_future()
            self._task = self.loop.create_task(self._listen())
        try:
            await asyncio.wait_for(asyncio.shield(self._subscribed), 5)
        except Exception as error:
            raise Unavailable from error
        listener = Listener()
        self.listeners.add(listener)
        return listener

    def detach(self, listener: Listener) -> None:
        self.listeners.discard(listener)

    async def _listen(self) -> None:
        subscription = self.redis.pubsub(ignore_subscribe_messages=True)
        try:
            await subscription.subscribe(changes.channel())
            self._subscribed.set_result(True)
            async for message in subscription.listen():
                if message["type"] == "message":
                    event = json.loads(message["data"])
                    for listener in list(self.listeners):
                        listener.offer(event)
        except Exception as error:
            logger.warning("the live events' subscription ended", exc_info=True)
            if not self._subscribed.done():
                self._subscribed.set_exception(error)
        finally:
            for listener in list(self.listeners):
                listener.offer(GONE)
            with contextlib.suppress(Exception):
                await subscription.aclose()


_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}


def hub() -> Hub:
    """This event loop's hub (a server runs one loop a process; the tests run several, one after the other)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        for other in [other for other in _hubs if other.is_closed()]:
            del _hubs[other]
        found = _hubs[loop] = Hub()
    return found


@processcache.register
def forget() -> None:
    _hubs.clear()


def open_streams() -> int:
    """How many streams this process serves now, on all its loops."""
    return sum(len(each.listeners) for each in _hubs.values())


def shown(event: dict, viewer: Viewer) -> dict | None:
    """What of ``event`` the viewer's page may learn: its kind, its number and the ids of the holds in it that they
    may see; None when nothing is for them (another person's bell, a hold out of their scopes, a hold to someone
    who does not review)."""
    if event["users"] and viewer.user.pk not in event["users"]:
        return None
    holds = event["holds"]
    if holds:
        if not roles.can_review(viewer):
            return None
        visible = [pk for pk, *fields in holds if scopes.may_see(viewer, scopes.Combination(*fields))]
        if not visible:
            return None
        holds = [pk for pk in visible if pk is not None]  # a hold just arrived is told of without its id
    return {"id": event["id"], "kind": event["kind"], "holds": holds}


def message(kind: str, data: dict, event_id: int | None = None) -> str:
    """One server-sent event, as the wire has it."""
    lines = [] if event_id is None else [f"id: {event_id}"]
    lines += [f"event: {kind}", f"data: {json.dumps(data, separators=(',', ':'))}"]
    return "\n".join(lines) + "\n\n"


async def replay(redis: aioredis.Redis, since: int) -> tuple[list[dict], int | None]:
    """The buffered events after ``since``, oldest first; or, when some between it and them are gone from the
    buffer (or the counter went back, Redis having lost it), none and the latest event's number, to refresh to."""
    counter, buffered = await redis.eval(_READ_BUFFER, 2, changes.COUNTER_KEY, changes.BUFFER_KEY)
    latest = int(counter or 0)
    after = sorted((event for each in buffered if (event := json.loads(each))["id"] > since), key=_number)
    if since == latest:
        return [], None
    if since > latest or not after or after[0]["id"] != since + 1:
        return [], latest
    return after, None


def _number(event: dict) -> int:
    return event["id"]


async def events_for(viewer: Viewer, since: int | None, listener: Listener, redis: aioredis.Redis, on_ping):
    """The stream's text: a retry delay and a ``hello``, what was missed, then each event for the viewer as it comes,
    a ``ping`` between (after which it awaits ``on_ping()``), until ``LIVE_STREAM_SECONDS`` have passed or the hub
    is gone."""
    loop = asyncio.get_running_loop()
    ends = loop.time() + settings.LIVE_STREAM_SECONDS
    yield f"retry: {RETRY_MILLISECONDS}\n" + message("hello", {"heartbeat": settings.LIVE_HEARTBEAT_SECONDS})
    replayed = set()
    if since is not None:
        missed, refresh_to = await replay(redis, since)
        if refresh_to is not None:
            yield message("refresh", {}, refresh_to)
        for event in missed:
            if seen := shown(event, viewer):
                yield message(seen["kind"], {"holds": seen["holds"]}, seen["id"])
            replayed.add(event["id"])
    while (left := ends - loop.time()) > 0:
        try:
            event = await asyncio.wait_for(listener.queue.get(), min(left, settings.LIVE_HEARTBEAT_SECONDS))
        except TimeoutError:
            yield message("ping", {})
            await on_ping()
            continue
        if event is GONE:
            return
        if event is REFRESH:
            yield message("refresh", {})
            continue
        if event["id"] in replayed:
            continue  # published between the subscription and the replay: sent once already
        if seen := shown(event, viewer):
            yield message(seen["kind"], {"holds": seen["holds"]}, seen["id"])
