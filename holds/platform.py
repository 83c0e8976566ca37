"""The AgentOS Holds API client: the only code that knows the wire format.

Everything the rest of the app knows about the platform goes through the typed
results and the small exception hierarchy defined here, so a difference in the
real platform (see the contract's "[assumed]" details) is a change to this
module alone.

The API key is sent as a bearer token and never put in a message, a log line or
an exception: errors carry the method, the path and the platform's own message.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings

logger = logging.getLogger(__name__)

PAGE_SIZE = 100  # the most the platform serves per page


class PlatformError(Exception):
    """The platform did not do what was asked."""


class NotFound(PlatformError):
    """No such hold, run or file (404)."""


class HoldNotOpen(PlatformError):
    """The hold is no longer open (409): ``hold`` is its current state, when the platform sent it."""

    def __init__(self, message: str, hold: Hold | None):
        super().__init__(message)
        self.hold = hold


class InvalidDecision(PlatformError):
    """The platform refused the request as invalid (422, 400): ``message`` is its reason."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class PlatformUnavailable(PlatformError):
    """The platform could not answer now (429, 5xx, timeout, refused or dropped connection).

    The only retryable failure: the same request may succeed later. A refused
    API key (401/403) is counted here too, because an operator fixing the key
    must not lose the decisions waiting to be sent.
    """


@dataclasses.dataclass(frozen=True)
class HoldItem:
    id: str
    title: str
    data: Any


@dataclasses.dataclass(frozen=True)
class HoldFile:
    id: str
    name: str
    content_type: str
    size: int | None


@dataclasses.dataclass(frozen=True)
class AppliedDecision:
    items: list[dict]
    decided_by: str
    decided_at: datetime | None


@dataclasses.dataclass(frozen=True)
class Hold:
    """One hold as the platform describes it; ``raw`` is the payload as received."""

    hold_id: str
    run_id: str
    agent: str
    capability: str
    status: str
    question: str
    intent: str
    details: str
    actions: tuple[str, ...]
    items: tuple[HoldItem, ...]
    files: tuple[HoldFile, ...]
    created_at: datetime | None
    expires_at: datetime | None
    decision: AppliedDecision | None
    raw: dict


@dataclasses.dataclass(frozen=True)
class Run:
    run_id: str
    agent: str
    capability: str
    status: str
    input: Any
    output: Any
    created_at: datetime | None
    raw: dict


@dataclasses.dataclass(frozen=True)
class DecisionItem:
    """One item of an outgoing decision: ``data`` only for an edit."""

    id: str
    action: str
    data: dict | None = None
    comment: str = ""


@dataclasses.dataclass(frozen=True)
class FileDownload:
    content_type: str
    content_length: int | None
    chunks: Iterator[bytes]


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def parse_hold(payload: dict) -> Hold:
    """Build a ``Hold`` from the platform's JSON, ignoring unknown fields and tolerating absent ones."""
    if not isinstance(payload, dict) or not payload.get("hold_id"):
        raise PlatformUnavailable("the platform sent a hold without a hold_id")
    decision = payload.get("decision")
    return Hold(
        hold_id=str(payload["hold_id"]),
        run_id=_text(payload.get("run_id")),
        agent=_text(payload.get("agent")),
        capability=_text(payload.get("capability")),
        status=_text(payload.get("status")) or "open",
        question=_text(payload.get("question")),
        intent=_text(payload.get("intent")),
        details=_text(payload.get("details")),
        actions=tuple(str(action) for action in payload.get("actions") or ()),
        items=tuple(
            HoldItem(id=_text(item.get("id")), title=_text(item.get("title")), data=item.get("data"))
            for item in payload.get("items") or ()
            if isinstance(item, dict)
        ),
        files=tuple(
            HoldFile(
                id=_text(file.get("id")),
                name=_text(file.get("name")),
                content_type=_text(file.get("content_type")) or "application/octet-stream",
                size=_int(file.get("size")),
            )
            for file in payload.get("files") or ()
            if isinstance(file, dict)
        ),
        created_at=_time(payload.get("created_at")),
        expires_at=_time(payload.get("expires_at")),
        decision=(
            AppliedDecision(
                items=list(decision.get("items") or []),
                decided_by=_text(decision.get("decided_by")),
                decided_at=_time(decision.get("decided_at")),
            )
            if isinstance(decision, dict)
            else None
        ),
        raw=payload,
    )


def parse_run(payload: dict) -> Run:
    if not isinstance(payload, dict) or not payload.get("run_id"):
        raise PlatformUnavailable("the platform sent a run without a run_id")
    return Run(
        run_id=str(payload["run_id"]),
        agent=_text(payload.get("agent")),
        capability=_text(payload.get("capability")),
        status=_text(payload.get("status")),
        input=payload.get("input"),
        output=payload.get("output"),
        created_at=_time(payload.get("created_at")),
        raw=payload,
    )


def _error_message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error") or {}
        message = error.get("message") or error.get("code")
    except (ValueError, AttributeError):
        message = None
    return str(message or response.reason_phrase or f"HTTP {response.status_code}")


class PlatformClient:
    """A synchronous client for one platform: use it as a context manager, or call ``close()``."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        connect_timeout: float = 5.0,
        read_timeout: float = 15.0,
        transport: httpx.BaseTransport | None = None,
    ):
        timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + "/v0/envs/",
            headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )

    @classmethod
    def from_settings(cls) -> PlatformClient:
        return cls(
            settings.AGENTOS_URL,
            settings.AGENTOS_API_KEY,
            connect_timeout=settings.AGENTOS_CONNECT_TIMEOUT,
            read_timeout=settings.AGENTOS_READ_TIMEOUT,
        )

    def __enter__(self) -> PlatformClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def open_holds(self, env: str) -> Iterator[Hold]:
        """Every open hold of ``env``, oldest first, following ``next_cursor`` page after page."""
        cursor = None
        while True:
            params = {"status": "open", "limit": PAGE_SIZE}
            if cursor:
                params["cursor"] = cursor
            page = self._json("GET", _path(env, "holds"), params=params)
            for payload in page.get("holds") or ():
                yield parse_hold(payload)
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def get_hold(self, env: str, hold_id: str) -> Hold:
        return parse_hold(self._json("GET", _path(env, "holds", hold_id)))

    def get_run(self, env: str, run_id: str) -> Run:
        return parse_run(self._json("GET", _path(env, "runs", run_id)))

    def post_decision(
        self,
        env: str,
        hold_id: str,
        items: list[DecisionItem],
        decided_by: str,
        idempotency_key: str,
    ) -> Hold:
        """Decide a hold. Retrying with the same ``idempotency_key`` never decides twice."""
        body = {"items": [decision_item_json(item) for item in items], "decided_by": decided_by}
        payload = self._json(
            "POST",
            _path(env, "holds", hold_id, "decision"),
            json=body,
            headers={"Idempotency-Key": idempotency_key},
        )
        return parse_hold(payload)

    @contextlib.contextmanager
    def stream_file(self, env: str, hold_id: str, file_id: str) -> Iterator[FileDownload]:
        """Stream a file attached to a hold without holding it in memory."""
        path = _path(env, "holds", hold_id, "files", file_id)
        try:
            with self._http.stream("GET", path) as response:
                if response.status_code != 200:
                    response.read()
                    self._raise_for(response, "GET", path)
                length = response.headers.get("Content-Length")
                yield FileDownload(
                    content_type=response.headers.get("Content-Type", "application/octet-stream"),
                    content_length=int(length) if length and length.isdigit() else None,
                    chunks=response.iter_bytes(),
                )
        except httpx.HTTPError as error:
            raise PlatformUnavailable(f"GET {path}: {_describe(error)}") from None

    def _json(self, method: str, path: str, **kwargs) -> dict:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise PlatformUnavailable(f"{method} {path}: {_describe(error)}") from None
        if response.status_code != 200:
            self._raise_for(response, method, path)
        try:
            payload = response.json()
        except ValueError:
            raise PlatformUnavailable(f"{method} {path}: the platform did not answer JSON") from None
        if not isinstance(payload, dict):
            raise PlatformUnavailable(f"{method} {path}: the platform's answer is not an object")
        return payload

    @staticmethod
    def _raise_for(response: httpx.Response, method: str, path: str) -> None:
        status = response.status_code
        message = _error_message(response)
        where = f"{method} {path}"
        logger.info("platform answered %s to %s: %s", status, where, message)
        if status == 404:
            raise NotFound(f"{where}: {message}")
        if status == 409:
            try:
                hold_payload = response.json().get("hold")
            except (ValueError, AttributeError):
                hold_payload = None
            hold = parse_hold(hold_payload) if hold_payload else None
            raise HoldNotOpen(message, hold)
        if status in (400, 422):
            raise InvalidDecision(message)
        if status in (401, 403):
            raise PlatformUnavailable(f"{where}: the platform refused the API key ({status})")
        if status == 429 or status >= 500:
            raise PlatformUnavailable(f"{where}: the platform answered {status} ({message})")
        raise PlatformError(f"{where}: unexpected answer {status} ({message})")


def decision_item_json(item: DecisionItem) -> dict:
    entry: dict[str, Any] = {"id": item.id, "action": item.action}
    if item.action == "edit":
        entry["data"] = item.data
    if item.comment:
        entry["comment"] = item.comment
    return entry


def _path(*segments: str) -> str:
    """Join path segments, percent-encoding each: agent-written ids may hold any character."""
    return "/".join(quote(str(segment), safe="") for segment in segments)


def _describe(error: httpx.HTTPError) -> str:
    if isinstance(error, httpx.TimeoutException):
        return "the platform did not answer in time"
    if isinstance(error, httpx.ConnectError):
        return "could not connect to the platform"
    if isinstance(error, httpx.RemoteProtocolError):
        return "the platform dropped the connection"
    return f"network error ({type(error).__name__})"
