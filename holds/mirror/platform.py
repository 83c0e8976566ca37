"""The AgentOS Holds API client: the only code that knows the wire format.

Everything the rest of the app knows about the platform goes through this client
and the typed results and errors it returns and raises (``holds/mirror/platform_types.py``),
so a difference in the real platform (see the contract's "[assumed]" details) is a
change to this module alone.

The API key is sent as a bearer token and never put in a message, a log line or
an exception: errors carry the method, the path and the platform's own message.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings

from holds.mirror import json_fields
from holds.mirror.json_decoding import DECODER, TooDeep, decode_reading_apart
from holds.mirror.platform_types import (
    EXCERPT_LENGTH,
    AppliedDecision,
    CursorRefused,
    DecisionItem,
    FileDownload,
    Hold,
    HoldFile,
    HoldItem,
    HoldNotOpen,
    InvalidDecision,
    MalformedHold,
    NotFound,
    Page,
    PlatformError,
    PlatformUnavailable,
    Run,
    UnaddressableId,
    UnreadableHold,
)
from reviewqueue import readers, tls

logger = logging.getLogger(__name__)

PAGE_SIZE = 100  # the most the platform serves per page
MAX_NESTING = 64  # arrays and objects in a hold, one inside another: far above any tool call's arguments
ACTIONS = ("approve", "edit", "reject")
# Ids a request path cannot carry: a URL resolves "." and ".." against the path before it is
# sent (RFC 3986), so the request would name a parent on the platform, and "" names the listing.
UNADDRESSABLE_IDS = frozenset({"", ".", ".."})


def parse_hold(payload: Any) -> Hold:
    """Build a ``Hold`` from the platform's JSON, or raise ``MalformedHold`` saying what breaks the contract.

    Unknown fields are ignored, and optional ones may be absent or null. A field of
    the wrong type, an unreadable ``created_at`` or ``expires_at``, an item without
    an id, or arrays and objects nested deeper than ``MAX_NESTING`` make the hold
    unreadable: a reviewer must see, and a decision must answer, the hold exactly
    as the agent asked it. Unknown actions are dropped, as unknown fields are.
    """
    if not isinstance(payload, dict):
        raise MalformedHold(f"the hold is {json_fields.kind(payload)}, not an object")
    hold_id = payload.get("hold_id", json_fields.ABSENT)
    if not isinstance(hold_id, str) or not hold_id:
        raise MalformedHold(f"hold_id is {json_fields.kind(hold_id)}, not an id")
    _addressable("hold_id", hold_id)
    if readers.nested_deeper_than(payload, MAX_NESTING):
        raise MalformedHold(f"the hold nests arrays and objects more than {MAX_NESTING} levels deep")
    items = json_fields.array(payload, "items")
    if not all(isinstance(item, dict) for item in items):
        raise MalformedHold("items must all be objects")
    item_ids = [_id(item, "an item id") for item in items]
    if len(set(item_ids)) != len(item_ids):
        raise MalformedHold("two items have the same id")
    for item in items:
        if not isinstance(item.get("data"), dict | None):
            raise MalformedHold(f"the data of item {item['id']!r} is {json_fields.kind(item['data'])}, not an object")
    files = json_fields.array(payload, "files")
    if not all(isinstance(file, dict) for file in files):
        raise MalformedHold("files must all be objects")
    actions = json_fields.array(payload, "actions")
    if not all(isinstance(action, str) for action in actions):
        raise MalformedHold("actions must all be text")
    run_id = json_fields.text(payload, "run_id")
    if run_id:  # a hold may name no run: its page then shows none, and no request is made for it
        _addressable("run_id", run_id)
    for file in files:
        _addressable("a file id", _id(file, "a file id"))
    decision = payload.get("decision")
    if not isinstance(decision, dict | None):
        raise MalformedHold(f"decision is {json_fields.kind(decision)}, not an object")
    return Hold(
        hold_id=hold_id,
        run_id=run_id,
        agent=json_fields.text(payload, "agent"),
        capability=json_fields.text(payload, "capability"),
        status=json_fields.text(payload, "status") or "open",
        question=json_fields.text(payload, "question"),
        intent=json_fields.text(payload, "intent"),
        details=json_fields.text(payload, "details"),
        actions=tuple(action for action in actions if action in ACTIONS),
        items=tuple(
            HoldItem(id=item["id"], title=json_fields.text(item, "title"), data=item.get("data")) for item in items
        ),
        files=tuple(
            HoldFile(
                id=_id(file, "a file id"),
                name=json_fields.text(file, "name"),
                content_type=json_fields.text(file, "content_type") or "application/octet-stream",
                size=json_fields.size(file.get("size")),
            )
            for file in files
        ),
        created_at=json_fields.moment(payload, "created_at"),
        expires_at=json_fields.moment(payload, "expires_at"),
        decision=(
            AppliedDecision(
                items=[entry for entry in decision.get("items") or () if isinstance(entry, dict)],
                decided_by=json_fields.shown(decision.get("decided_by")),
                decided_at=json_fields.moment_or_none(decision.get("decided_at")),
                as_received=decision,
            )
            if decision is not None
            else None
        ),
        raw=payload,
    )


def _id(payload: dict, name: str) -> str:
    value = payload.get("id", json_fields.ABSENT)
    if not isinstance(value, str) or not value:
        raise MalformedHold(f"{name} is {json_fields.kind(value)}, not an id")
    return value


def _addressable(name: str, value: str) -> None:
    """Refuse an id that the platform's request paths cannot carry (see ``UNADDRESSABLE_IDS``)."""
    if value in UNADDRESSABLE_IDS:
        raise MalformedHold(f"{name} is {value!r}, which a request path cannot carry: it would name another path")


def parse_run(payload: dict) -> Run:
    if not isinstance(payload, dict) or not payload.get("run_id"):
        raise PlatformUnavailable("the platform sent a run without a run_id")
    # [assumed] A run's input, when an object, carries the customer's message it started from under "message".
    message = payload["input"].get("message") if isinstance(payload.get("input"), dict) else None
    return Run(
        run_id=str(payload["run_id"]),
        agent=json_fields.shown(payload.get("agent")),
        capability=json_fields.shown(payload.get("capability")),
        status=json_fields.shown(payload.get("status")),
        input=payload.get("input"),
        output=payload.get("output"),
        created_at=json_fields.moment_or_none(payload.get("created_at")),
        customer_message=message if isinstance(message, str) else "",
        raw=payload,
    )


def _error_message(response: httpx.Response) -> str:
    try:
        error = DECODER.decode(response.text).get("error") or {}
        message = error.get("message") or error.get("code")
    except (ValueError, AttributeError, RecursionError):
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
            verify=tls.trust_store(),
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

    def open_holds(self, env: str) -> Iterator[Hold | UnreadableHold]:
        """Every open hold of ``env``, oldest first, following ``next_cursor`` page after page.

        A hold that breaks the contract comes as an ``UnreadableHold`` in its place,
        so that the rest of its page is still read.
        """
        for page in self.open_pages(env):
            yield from page.holds

    def open_pages(self, env: str, cursor: str | None = None) -> Iterator[Page]:
        """The pages of ``env``'s open listing from ``cursor`` (None: the start) to its last page.

        Raises ``CursorRefused`` when the platform refuses ``cursor`` (400), which only
        a cursor kept from an earlier listing should meet.
        """
        while True:
            page = self.open_page(env, cursor)
            yield page
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def open_page(self, env: str, cursor: str | None = None) -> Page:
        """One page of ``env``'s open listing, asked with ``cursor`` (None: the first page).

        [assumed] A cursor names a position in the listing and stays valid over time: listing
        again from ``cursor`` answers this page's holds that are still open and every hold
        asked since, so a sync may keep the cursor of the last page and list from it later
        (the tail). The platform may still refuse one it no longer accepts: ``CursorRefused``.
        [assumed] Holds are listed oldest first, so a new hold is always listed after the
        holds already seen: on the last page, or past it.
        """
        params = {"status": "open", "limit": PAGE_SIZE}
        if cursor:
            params["cursor"] = cursor
        path = _path(env, "holds")
        try:
            response = self._request("GET", path, params=params)
        except InvalidDecision as error:  # a 400 or 422: of a listing's parameters, only the cursor can be wrong
            if cursor:
                raise CursorRefused(f"GET {path}: the platform refused the listing cursor ({error.message})") from None
            raise PlatformError(f"GET {path}: the platform refused the listing ({error.message})") from None
        holds, next_cursor = _read_page(response.text, f"GET {path}")
        return Page(holds=[_listed(payload) for payload in holds], cursor=cursor, next_cursor=next_cursor)

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
    ) -> Hold | None:
        """Decide a hold. Retrying with the same ``idempotency_key`` never decides twice.

        Returns the decided hold, or None when the platform applied the decision (200) but
        answered with a hold that breaks the contract: the decision is applied all the same,
        and retrying would only get the same answer again.
        """
        body = {"items": [decision_item_json(item) for item in items], "decided_by": decided_by}
        payload = self._json(
            "POST",
            _path(env, "holds", hold_id, "decision"),
            json=body,
            headers={"Idempotency-Key": idempotency_key},
        )
        try:
            return parse_hold(payload)
        except MalformedHold:
            logger.warning("The platform applied a decision on %r but answered with a malformed hold", hold_id)
            return None

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

    def _request(self, method: str, path: str, **kwargs) -> httpx.Response:
        """The platform's 200 answer; any other answer or a network failure raises."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise PlatformUnavailable(f"{method} {path}: {_describe(error)}") from None
        if response.status_code != 200:
            self._raise_for(response, method, path)
        return response

    def _json(self, method: str, path: str, **kwargs) -> dict:
        where = f"{method} {path}"
        payload = _decode(self._request(method, path, **kwargs).text, where)
        if not isinstance(payload, dict):
            raise PlatformUnavailable(f"{where}: the platform's answer is not an object")
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
                hold_payload = DECODER.decode(response.text).get("hold")
            except (ValueError, AttributeError, RecursionError):
                hold_payload = None
            try:
                hold = parse_hold(hold_payload) if hold_payload else None
            except MalformedHold:
                hold = None  # the hold is not open whatever it says: the next sync reads how it ended
            raise HoldNotOpen(message, hold)
        if status in (400, 422):
            raise InvalidDecision(message)
        if status in (401, 403):
            raise PlatformUnavailable(f"{where}: the platform refused the API key ({status})")
        if status == 429 or status >= 500:
            raise PlatformUnavailable(f"{where}: the platform answered {status} ({message})")
        raise PlatformError(f"{where}: unexpected answer {status} ({message})")


def _decode(text: str, where: str) -> Any:
    try:
        return DECODER.decode(text)
    except ValueError:
        raise PlatformUnavailable(f"{where}: the platform did not answer JSON") from None
    except RecursionError:
        raise PlatformUnavailable(f"{where}: the platform's answer nests too deeply to read") from None


def _read_page(text: str, where: str) -> tuple[list, str | None]:
    """A listing page's holds (as decoded JSON) and its ``next_cursor``.

    A hold that nests too deeply for the decoder is read apart from the others and comes back as ``TooDeep``.
    """
    try:
        page = decode_reading_apart(text, "holds")
    except (ValueError, RecursionError):
        raise PlatformUnavailable(f"{where}: the platform did not answer JSON") from None
    if not isinstance(page, dict):
        raise PlatformUnavailable(f"{where}: the platform's answer is not an object")
    holds, cursor = page.get("holds") or [], page.get("next_cursor")
    if not isinstance(holds, list) or not isinstance(cursor, str | None):
        raise PlatformUnavailable(f"{where}: the platform's answer is not a page of holds")
    return holds, cursor


_HOLD_ID = re.compile(r'"hold_id"\s*:\s*("(?:[^"\\]|\\.)*")')


def _listed(payload: Any) -> Hold | UnreadableHold:
    """One hold of a listing, or why it cannot be read."""
    if isinstance(payload, TooDeep):
        found = _HOLD_ID.search(payload)
        try:
            hold_id = json.loads(found.group(1)) if found else ""
        except ValueError:
            hold_id = found.group(1)
        reason = f"the hold nests arrays and objects more than {MAX_NESTING} levels deep"
        return UnreadableHold(hold_id=hold_id, reason=reason, excerpt=payload[:EXCERPT_LENGTH])
    try:
        return parse_hold(payload)
    except MalformedHold as error:
        return UnreadableHold.of(payload, str(error))


def decision_item_json(item: DecisionItem) -> dict:
    entry: dict[str, Any] = {"id": item.id, "action": item.action}
    if item.action == "edit":
        entry["data"] = item.data
    if item.comment:
        entry["comment"] = item.comment
    return entry


def approved_items(decision: Any) -> dict[str, Any] | None:
    """A stored ``platform_decision``'s approved items: each approved or edited item's id with the data it was
    approved with (None: as asked); None when it cannot be read item by item (which a safeguard counts as all)."""
    entries = decision.get("items") if isinstance(decision, dict) else None
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        return None
    approved = [entry for entry in entries if entry.get("action") in ("approve", "edit")]
    return {str(entry.get("id")): entry.get("data") if entry.get("action") == "edit" else None for entry in approved}


def policy_decided_by(policy_name: str) -> str:
    """``decided_by`` for a decision an approval policy made by itself: "policy: small refunds".

    The Holds API contract only says ``decided_by`` names who decided, as a string, for the
    platform's records; naming a policy this way is our assumption.
    """
    return f"policy: {policy_name}"


def _path(*segments: str) -> str:
    """Join path segments, percent-encoding each: agent-written ids may hold any character.

    Raises ``UnaddressableId`` for a segment that encoding cannot keep one segment
    ("", "." or ".."), which would steer the request elsewhere on the platform.
    """
    for segment in segments:
        if segment in UNADDRESSABLE_IDS:
            raise UnaddressableId(f"refused to request a path with the id {segment!r}, which would name another path")
    return "/".join(quote(str(segment), safe="") for segment in segments)


def _describe(error: httpx.HTTPError) -> str:
    if isinstance(error, httpx.TimeoutException):
        return "the platform did not answer in time"
    if isinstance(error, httpx.ConnectError):
        return "could not connect to the platform"
    if isinstance(error, httpx.RemoteProtocolError):
        return "the platform dropped the connection"
    return f"network error ({type(error).__name__})"
