"""Plain request and response values, so routes can be written without the HTTP machinery."""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote

from simulator.state import PlatformState, error_body

JSON_CONTENT_TYPE = "application/json; charset=utf-8"


@dataclass(frozen=True)
class Request:
    """One HTTP request as the routes see it."""

    method: str
    path: str
    query: dict[str, str]
    # Names lowercased: HTTP header names are case-insensitive.
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        """The body as JSON. Raises ValueError if it is empty or not JSON."""
        return json.loads(self.body.decode("utf-8"))

    def json_or_none(self) -> object:
        """The body as JSON, or None when it is empty or not JSON."""
        try:
            return self.json()
        except ValueError:
            return None


@dataclass(frozen=True)
class Response:
    """What to send back: status, bytes and their type, and any extra headers."""

    status: int
    body: bytes
    content_type: str = JSON_CONTENT_TYPE
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, payload: object, headers: dict[str, str] | None = None) -> Response:
    # \u escapes carry any string, lone surrogates from a hostile agent included.
    body = json.dumps(payload).encode("utf-8")
    return Response(status, body, headers=headers or {})


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return json_response(status, error_body(code, message), headers)


Handler = Callable[..., Response]
Route = tuple[re.Pattern[str], dict[str, Handler]]


def dispatch(routes: list[Route], state: PlatformState, request: Request) -> Response:
    """Call the handler whose pattern matches the path, with the path's named parts.

    A handler is called as `handler(state, request, **parts)`; parts are URL-decoded.
    """
    for pattern, handlers in routes:
        match = pattern.fullmatch(request.path)
        if match is None:
            continue
        handler = handlers.get(request.method)
        if handler is None:
            allowed = ", ".join(handlers)
            return error_response(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed here",
                {"Allow": allowed},
            )
        parts = {name: unquote(value) for name, value in match.groupdict().items()}
        return handler(state, request, **parts)
    return error_response(404, "not_found", f"nothing at {request.path}")
