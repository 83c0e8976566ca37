"""Errors as RFC 9457 problem documents (``application/problem+json``): the only error body the API sends.

A problem has a ``type`` (a URN naming the kind of problem, or ``about:blank`` when the status says it all), a
``title``, the ``status``, a ``detail`` for the person reading it and, for bad input, ``errors``: one per field,
named as the request named it (``items[0].data.amount``, ``sort``).
"""

from __future__ import annotations

import json
from http import HTTPStatus

from django.http import HttpResponse

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:reviewqueue:problem:"
# Headers an error answer keeps when it is rewritten as a problem document: they tell the client what to do next.
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate", "Location")


class Problem(Exception):
    """An error answer, raised by the API's operations and turned into its document (``response``)."""

    def __init__(
        self,
        status: int,
        detail: str,
        kind: str = "",
        errors: list[dict] | None = None,
        headers: dict[str, str] | None = None,
        **extra,
    ):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.kind = kind
        self.errors = errors or []
        self.headers = headers or {}
        self.extra = extra

    def document(self, instance: str = "") -> dict:
        found = {
            "type": TYPE_PREFIX + self.kind if self.kind else "about:blank",
            "title": _title(self.status, self.kind),
            "status": self.status,
            "detail": self.detail,
        }
        if instance:
            found["instance"] = instance
        if self.errors:
            found["errors"] = self.errors
        return found | self.extra

    def response(self, instance: str = "") -> HttpResponse:
        response = HttpResponse(
            json.dumps(self.document(instance), ensure_ascii=False), status=self.status, content_type=MEDIA_TYPE
        )
        for name, value in self.headers.items():
            response[name] = value
        return response


def field_error(field: str, message: str) -> dict:
    return {"field": field, "message": message}


def bad_input(errors: list[dict], status: int = 400, detail: str = "") -> Problem:
    """400 (malformed) or 422 (well formed, but the hold refuses it) with one error per field."""
    detail = detail or "; ".join(f"{error['field']}: {error['message']}" for error in errors)
    return Problem(status, detail, "invalid-input" if status == 400 else "refused-input", errors)


def not_found(what: str = "Nothing is here.") -> Problem:
    return Problem(404, what)


def unauthenticated(detail: str, invalid: bool = True) -> Problem:
    """401 with the challenge RFC 6750 asks for: ``invalid_token`` when a token was sent."""
    challenge = 'Bearer realm="api", error="invalid_token"' if invalid else 'Bearer realm="api"'
    return Problem(401, detail, "unauthenticated", headers={"WWW-Authenticate": challenge})


def forbidden(detail: str, scope: str = "") -> Problem:
    """403: the token lacks the scope (RFC 6750's ``insufficient_scope``), or its user the role."""
    headers = {"WWW-Authenticate": f'Bearer realm="api", error="insufficient_scope", scope="{scope}"'} if scope else {}
    return Problem(403, detail, "forbidden", headers=headers)


def conflict(detail: str, kind: str = "conflict", **extra) -> Problem:
    return Problem(409, detail, kind, **extra)


def of_status(status: int, detail: str = "") -> Problem:
    """A problem that only its HTTP status names, for answers that were not the API's own (a 404 of no route, a 405)."""
    return Problem(status, detail or _phrase(status))


def _title(status: int, kind: str) -> str:
    return TITLES.get(kind) or _phrase(status)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


TITLES = {
    "invalid-input": "The request is malformed",
    "refused-input": "The hold cannot take this request",
    "unauthenticated": "A valid token is needed",
    "forbidden": "Not allowed",
    "already-decided": "The hold is decided already",
    "changed-meanwhile": "The hold changed meanwhile",
    "refused": "Refused in the hold's present state",
    "possible-duplicate": "The hold may duplicate another: say which you checked",
    "too-late": "Too late",
    "rate-limited": "Too many requests",
    "idempotency-key-reused": "This Idempotency-Key was used for another request",
    "idempotency-key-in-use": "A request with this Idempotency-Key is still running",
}
