from reviewqueue import changes


class LiveSinceMiddleware:
    """``request.live_since``: the number of the last event published as a page's request began (None for a request
    that draws no page), where the page's stream starts.

    It is read before the view reads what the page shows: a change committed while the page is being drawn then
    comes after it, and the stream replays it. Read for a whole page only (a GET, not htmx's) to someone signed in.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.live_since = None
        if (
            request.method == "GET"
            and "HX-Request" not in request.headers
            and request.path != changes.STREAM_PATH
            and changes.enabled()
            and request.user.is_authenticated
        ):
            request.live_since = changes.latest_id()
        return self.get_response(request)
