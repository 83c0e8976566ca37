"""Control endpoints under /_control/: set the scene for a test or a demo.

They need no API key and are never faulted or logged, so a test can arrange and inspect
the platform without disturbing what it is checking.
"""

import re

from simulator.exchange import Request, Response, Route, dispatch, error_response, json_response
from simulator.state import DEFAULT_ENV, HoldNotFound, HoldNotOpen, PlatformState, error_body
from simulator.times import iso

MAX_GENERATED = 10_000


def handle_control(state: PlatformState, request: Request) -> Response:
    """Answer one control request."""
    try:
        return dispatch(_ROUTES, state, request)
    except _InvalidJson:
        return error_response(400, "invalid_json", "the body is not valid JSON")
    except HoldNotFound as error:
        return error_response(404, "hold_not_found", f"no hold {error.args[0]}")
    except HoldNotOpen as error:
        return json_response(409, error_body("hold_not_open", str(error)) | {"hold": error.hold})
    except ValueError as error:  # a body that makes no sense, from here or from the state
        return error_response(422, "invalid_request", str(error))


class _InvalidJson(Exception):
    """The control request's body is not JSON."""


def _body(request: Request) -> dict:
    """The JSON object sent, {} when nothing was sent."""
    if not request.body:
        return {}
    try:
        body = request.json()
    except ValueError as error:
        raise _InvalidJson from error
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object")
    return body


def _env(body: dict) -> str:
    env = body.get("env", DEFAULT_ENV)
    if not isinstance(env, str) or not env:
        raise ValueError("env must be a non-empty string")
    return env


def _add_holds(state: PlatformState, request: Request) -> Response:
    body = _body(request)
    env = _env(body)
    partial_holds = body.get("holds", [])
    count = body.get("generate", 0)
    if not isinstance(partial_holds, list):
        raise ValueError("holds must be a list of (partial) holds")
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_GENERATED:
        raise ValueError(f"generate must be a whole number up to {MAX_GENERATED}")
    if not partial_holds and not count:
        raise ValueError("send holds, generate, or both")
    added = [state.add_hold(env, partial) for partial in partial_holds]
    added += state.generate(env, count) if count else []
    return json_response(201, {"holds": added})


def _decide_elsewhere(state: PlatformState, request: Request, hold_id: str) -> Response:
    body = _body(request)
    decided_by = body.get("decided_by", "someone-else@example.com")
    if not isinstance(decided_by, str):
        raise ValueError("decided_by must be a string")
    return json_response(200, state.decide_elsewhere(_env(body), hold_id, decided_by))


def _cancel(state: PlatformState, request: Request, hold_id: str) -> Response:
    return json_response(200, state.cancel(_env(_body(request)), hold_id))


def _expire(state: PlatformState, request: Request, hold_id: str) -> Response:
    return json_response(200, state.expire(_env(_body(request)), hold_id))


def _push_faults(state: PlatformState, request: Request) -> Response:
    faults = _body(request).get("faults")
    if not isinstance(faults, list):
        raise ValueError("faults must be a list")
    return json_response(200, {"pending": state.push_faults(faults)})


def _clear_faults(state: PlatformState, request: Request) -> Response:
    state.clear_faults()
    return json_response(200, {"pending": 0})


def _read_clock(state: PlatformState, request: Request) -> Response:
    return json_response(200, {"now": iso(state.now())})


def _advance_clock(state: PlatformState, request: Request) -> Response:
    seconds = _body(request).get("advance_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ValueError("advance_seconds must be a number")
    return json_response(200, {"now": iso(state.advance_clock(seconds))})


def _list_requests(state: PlatformState, request: Request) -> Response:
    return json_response(200, {"requests": state.requests})


def _clear_requests(state: PlatformState, request: Request) -> Response:
    state.clear_requests()
    return json_response(200, {"requests": []})


def _reset(state: PlatformState, request: Request) -> Response:
    with_samples = _body(request).get("samples", False)
    if not isinstance(with_samples, bool):
        raise ValueError("samples must be true or false")
    state.reset(with_samples)
    return json_response(200, {"holds": state.count_holds(DEFAULT_ENV)})


_HOLD = r"/_control/holds/(?P<hold_id>[^/]+)"

_ROUTES: list[Route] = [
    (re.compile(r"/_control/holds"), {"POST": _add_holds}),
    (re.compile(_HOLD + r"/decide"), {"POST": _decide_elsewhere}),
    (re.compile(_HOLD + r"/cancel"), {"POST": _cancel}),
    (re.compile(_HOLD + r"/expire"), {"POST": _expire}),
    (re.compile(r"/_control/faults"), {"POST": _push_faults, "DELETE": _clear_faults}),
    (re.compile(r"/_control/clock"), {"GET": _read_clock, "POST": _advance_clock}),
    (re.compile(r"/_control/requests"), {"GET": _list_requests, "DELETE": _clear_requests}),
    (re.compile(r"/_control/reset"), {"POST": _reset}),
]
