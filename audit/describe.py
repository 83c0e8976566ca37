"""One line saying what an audit event was, for the list, the timeline and the export.

Plain text only: the templates escape it, and the payload's text (written by
agents, reviewers or whoever typed a username) is never trusted as markup.
Payloads are read with defaults, so an event missing a key still reads well.
"""

from __future__ import annotations

from audit.models import AuditEvent, EventKind
from audit.payloads import item_id, items_of
from holds.models import ACTION_WORDS

LIMIT = 200


def summary(event: AuditEvent) -> str:
    text = _summaries.get(event.kind, _message)(event.payload or {})
    text = " ".join(str(text).split())
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"


def _message(payload: dict) -> str:
    return str(payload.get("message") or "")


def _hold_seen(payload: dict) -> str:
    items = items_of(payload)
    question = payload.get("question") or ""
    return f"{question} ({len(items)} item{'s' if len(items) != 1 else ''})" if items else question


def _taken_over(payload: dict) -> str:
    previous = payload.get("from") or payload.get("previous") or ""
    return f"from {previous}" if previous else ""


def _submitted(payload: dict) -> str:
    return ", ".join(f"{_action_word(item.get('action'))} {item_id(item)}" for item in items_of(payload))


def _action_word(action) -> str:
    return ACTION_WORDS.get(str(action), str(action)) if action else "?"


def _withdrawn(payload: dict) -> str:
    undone = _submitted(payload)
    return f"undone before sending, nothing reached the platform: {undone}" if undone else "undone before sending"


def _delivery(payload: dict) -> str:
    attempt = payload.get("attempt")
    outcome = payload.get("outcome") or ""
    message = payload.get("message") or ""
    head = f"attempt {attempt}: {outcome}" if attempt else outcome
    return f"{head}: {message}" if message else head


def _platform_said(payload: dict) -> str:
    outcome = str(payload.get("outcome") or "").replace("_", " ")
    message = payload.get("message") or ""
    return f"{outcome}: {message}" if outcome and message else outcome or message


def _closed(payload: dict) -> str:
    decided_by = payload.get("decided_by") or ""
    return f"by {decided_by}" if decided_by else _message(payload)


def _notification(payload: dict) -> str:
    parts = [payload.get("channel"), payload.get("recipient"), payload.get("title"), payload.get("error")]
    return " · ".join(str(part) for part in parts if part) or _message(payload)


def _signed_in(payload: dict) -> str:
    return f"from {payload['ip']}" if payload.get("ip") else ""


def _sign_in_failed(payload: dict) -> str:
    origin = f" from {payload['ip']}" if payload.get("ip") else ""
    return f"as {payload.get('username') or '(no username)'}{origin}"


def _locked_out(payload: dict) -> str:
    return f"{_sign_in_failed(payload)} after {payload.get('failures', '?')} failed sign-ins"


def _admin_change(payload: dict) -> str:
    head = f"{payload.get('action', 'changed')} {payload.get('model', '')} {payload.get('object', '')}".strip()
    message = payload.get("message") or ""
    return f"{head}: {message}" if message else head


_summaries = {
    EventKind.HOLD_SEEN: _hold_seen,
    EventKind.TAKEN_OVER: _taken_over,
    EventKind.DECISION_SUBMITTED: _submitted,
    EventKind.WITHDRAWN: _withdrawn,
    EventKind.DELIVERY_ATTEMPT: _delivery,
    EventKind.APPLIED: _platform_said,
    EventKind.NOT_APPLIED: _platform_said,
    EventKind.EXPIRED: _closed,
    EventKind.DECIDED_ELSEWHERE: _closed,
    EventKind.NOTIFICATION_SENT: _notification,
    EventKind.NOTIFICATION_FAILED: _notification,
    EventKind.SIGNED_IN: _signed_in,
    EventKind.SIGN_IN_FAILED: _sign_in_failed,
    EventKind.LOCKED_OUT: _locked_out,
    EventKind.ROLE_CHANGED: _admin_change,
    EventKind.SETTING_CHANGED: _admin_change,
}
