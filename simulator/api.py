"""The Holds API under /v0/envs/{env}, as the review queue's contract describes it."""

import hmac
import re

from simulator.exchange import Request, Response, Route, dispatch, error_response, json_response
from simulator.state import HOLD_STATUSES, InvalidCursor, PlatformState

DEFAULT_PAGE = 50


def handle_api(state: PlatformState, request: Request, api_key: str) -> Response:
    """Answer one API request; every path needs `Authorization: Bearer <api_key>`."""
    if not _authorized(request, api_key):
        return error_response(401, "unauthorized", "missing or wrong API key", {"WWW-Authenticate": "Bearer"})
    return dispatch(_ROUTES, state, request)


def _authorized(request: Request, api_key: str) -> bool:
    sent = request.headers.get("authorization", "")
    # Constant-time, so response timing says nothing about the key.
    return hmac.compare_digest(sent.encode(), f"Bearer {api_key}".encode())


def _list_holds(state: PlatformState, request: Request, env: str) -> Response:
    status = request.query.get("status", "open")
    if status not in HOLD_STATUSES:
        return _invalid_request(f"status must be one of {', '.join(HOLD_STATUSES)}")
    try:
        limit = int(request.query.get("limit", DEFAULT_PAGE))
    except ValueError:
        return _invalid_request("limit must be an integer")
    try:
        holds, next_cursor = state.list_open(env, limit, request.query.get("cursor"), status)
    except InvalidCursor as error:  # the contract: a cursor no longer accepted answers 400
        return error_response(400, "invalid_request", str(error))
    return json_response(200, {"holds": holds, "next_cursor": next_cursor})


def _get_hold(state: PlatformState, request: Request, env: str, hold_id: str) -> Response:
    hold = state.get_hold(env, hold_id)
    if hold is None:
        return _hold_not_found(env, hold_id)
    return json_response(200, hold)


def _decide(state: PlatformState, request: Request, env: str, hold_id: str) -> Response:
    idempotency_key = request.headers.get("idempotency-key")
    if not idempotency_key:
        return error_response(400, "idempotency_key_required", "a decision needs an Idempotency-Key header")
    try:
        body = request.json()
    except ValueError:
        return error_response(400, "invalid_json", "the body is not valid JSON")
    status, answer = state.decide(env, hold_id, body, idempotency_key)
    return json_response(status, answer)


def _get_file(state: PlatformState, request: Request, env: str, hold_id: str, file_id: str) -> Response:
    if state.get_hold(env, hold_id) is None:
        return _hold_not_found(env, hold_id)
    found = state.get_file(env, hold_id, file_id)
    if found is None:
        return error_response(404, "file_not_found", f"hold {hold_id} has no file {file_id}")
    content_type, content = found
    return Response(200, content, content_type)


def _get_run(state: PlatformState, request: Request, env: str, run_id: str) -> Response:
    run = state.get_run(env, run_id)
    if run is None:
        return error_response(404, "run_not_found", f"no run {run_id} in env {env}")
    return json_response(200, run)


def _hold_not_found(env: str, hold_id: str) -> Response:
    return error_response(404, "hold_not_found", f"no hold {hold_id} in env {env}")


def _invalid_request(message: str) -> Response:
    return error_response(422, "invalid_request", message)


_ENV = r"/v0/envs/(?P<env>[^/]+)"
_HOLD = _ENV + r"/holds/(?P<hold_id>[^/]+)"

_ROUTES: list[Route] = [
    (re.compile(_ENV + r"/holds"), {"GET": _list_holds}),
    (re.compile(_HOLD), {"GET": _get_hold}),
    (re.compile(_HOLD + r"/decision"), {"POST": _decide}),
    (re.compile(_HOLD + r"/files/(?P<file_id>[^/]+)"), {"GET": _get_file}),
    (re.compile(_ENV + r"/runs/(?P<run_id>[^/]+)"), {"GET": _get_run}),
]
