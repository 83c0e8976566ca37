"""Tagging each request for the logs: its id (echoed as ``X-Request-ID``), its user, the hold it is about."""

from __future__ import annotations

import re
import uuid

from operations import logcontext

REQUEST_ID_HEADER = "X-Request-ID"
# What a proxy's or client's request id may look like: a UUID or a similar token; anything else is replaced.
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{7,127}")


def request_id(request) -> str:
    """The incoming ``X-Request-ID`` if it is a sane token, else a new UUID."""
    incoming = request.headers.get(REQUEST_ID_HEADER, "")
    return incoming if REQUEST_ID_PATTERN.fullmatch(incoming) else uuid.uuid4().hex


class RequestContextMiddleware:
    """Binds the request id for the whole request, and the user and hold once the view is known.

    It comes first in ``MIDDLEWARE`` after the forwarded scheme's, so every line logged while serving the request
    carries the id. The user is read in ``process_view``, after the session and auth
    middleware have already loaded it; the hold is the ``pk`` of the holds app's URLs.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = request_id(request)
        request.log_context = {"request_id": request.request_id}  # for the lines Django logs after the response
        # user and hold are set later in process_view; binding them blank here lets the reset below
        # clear them too, so a worker thread's next request never inherits them.
        tokens = logcontext.bind(request_id=request.request_id, user="", hold_id="", decision_id="")
        try:
            response = self.get_response(request)
        finally:
            logcontext.unbind(tokens)
        response[REQUEST_ID_HEADER] = request.request_id
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        user = getattr(request, "user", None)
        hold = view_kwargs.get("pk") if view_func.__module__.startswith("holds.") else None
        known = {"user": user.get_username() if user is not None and user.is_authenticated else None, "hold_id": hold}
        known = {name: str(value) for name, value in known.items() if value is not None}
        request.log_context |= known
        logcontext.bind(**known)  # no tokens kept: __call__ resets these fields when the request ends
