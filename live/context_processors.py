from django.conf import settings
from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from reviewqueue import changes, roles


def live_stream(request):
    """Where the page's event stream is (``live_stream_url``: blank with streams off, or for someone with no role),
    starting after the last event published as the page's request began (``live.middleware``); read only by a page
    that draws it."""
    return {
        "live_stream_url": SimpleLazyObject(lambda: _url(request)),
        "live_heartbeat_seconds": settings.LIVE_HEARTBEAT_SECONDS,
    }


def _url(request) -> str:
    if not (changes.enabled() and request.user.is_authenticated and roles.has_a_role(request.viewer)):
        return ""
    since = getattr(request, "live_since", None)
    return f"{reverse('live-events')}?since={changes.latest_id() if since is None else since}"
