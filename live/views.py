"""The event stream of an open page (``live.streams``), for its viewer: thin, it admits the stream and serves it."""

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db import connection
from django.http import HttpResponse, StreamingHttpResponse
from django.views.decorators.http import require_safe
from redis.exceptions import RedisError

from live import admission, streams
from reviewqueue import changes, readers, roles
from teams import scopes

LAST_EVENT_ID = "Last-Event-ID"


@require_safe
async def stream(request):
    """``text/event-stream`` of the changes the viewer may see; 204 with streams off or outside an ASGI server (a
    browser's EventSource then stops, and the page polls), 429 beyond the caps, 503 when Redis does not answer."""
    if not changes.enabled() or not isinstance(request, ASGIRequest):
        return HttpResponse(status=204)
    viewer = await sync_to_async(_viewer)(request)
    if not roles.has_a_role(viewer):
        return HttpResponse("Live updates need a role.", status=403, content_type="text/plain")
    since = _since(request)
    if admission.process_full():
        return _refused("This server streams to as many pages as it may: this page polls instead.")
    hub = streams.hub()
    place = admission.place_for(hub.redis, request.session.session_key or "", viewer.user.pk)
    try:
        taken = await place.take()
        if taken == admission.SESSION_FULL:
            return _refused("This session has as many live pages open as it may: this one polls instead.")
        if taken == admission.PERSON_FULL:
            return _refused("You have as many live pages open as a person may, in all your sessions: this one polls.")
        listener = await hub.attach()
    except (streams.Unavailable, OSError, RedisError):
        return HttpResponse("Live updates are unavailable: this page polls.", status=503, content_type="text/plain")
    response = StreamingHttpResponse(_served(hub, listener, place, viewer, since), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache, no-store"
    response["X-Accel-Buffering"] = "no"  # nginx passes each event on at once
    return response


def _viewer(request):
    """Who is asking, read in the request's thread: their user and groups come from the database. Its connection
    closes then: a stream lasts minutes, and would otherwise hold a database connection all along (Django closes
    it when the response ends)."""
    viewer = scopes.viewer_of(request.user)
    connection.close()
    return viewer


def _since(request) -> int | None:
    """The last event the page has: the browser's ``Last-Event-ID`` on a reconnection, else the page's ``since``."""
    value = request.headers.get(LAST_EVENT_ID) or request.GET.get("since", "")
    return readers.integer(value, "since", minimum=0, maximum=readers.ID_MAX)


def _refused(why: str) -> HttpResponse:
    return HttpResponse(why, status=429, content_type="text/plain")


async def _served(hub, listener, place, viewer, since):
    try:
        async for text in streams.events_for(viewer, since, listener, hub.redis, place.renew):
            yield text
    finally:
        hub.detach(listener)
        await place.leave()
