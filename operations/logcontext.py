"""What a log line is about: the request, user, hold, decision and task it was written for.

The request middleware (``operations.middleware``) and Celery's task signals
(``operations.signals``) set these context variables; ``ContextFilter``, on the log
handler, copies them onto every record, from any logger, so the JSON formatter can
write them. Context variables follow each request and task without being passed
around, and never leak into the next one: each is reset when its request or task ends.
"""

from __future__ import annotations

import contextvars
import logging

FIELDS = ("request_id", "user", "hold_id", "decision_id", "task_id", "task_name")

_context: dict[str, contextvars.ContextVar[str]] = {
    name: contextvars.ContextVar(f"log_{name}", default="") for name in FIELDS
}


def bind(**values) -> dict[str, contextvars.Token]:
    """Set some of ``FIELDS`` for what runs next in this context; returns the tokens that ``unbind`` takes."""
    return {name: _context[name].set(str(value)) for name, value in values.items() if value is not None}


def unbind(tokens: dict[str, contextvars.Token]) -> None:
    for name, token in tokens.items():
        _context[name].reset(token)


class ContextFilter(logging.Filter):
    """Puts the current context on each record (as attributes named like ``FIELDS``); it drops nothing.

    Django logs a request's 4xx and 5xx once the middleware has returned, and so outside
    its context, but with the request on the record: its ``log_context`` (set by the
    middleware) then stands in.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        request_context = getattr(getattr(record, "request", None), "log_context", {})
        for name in FIELDS:
            if not hasattr(record, name):
                setattr(record, name, _context[name].get() or request_context.get(name, ""))
        return True
