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
import json
import logging
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings

from reviewqueue import readers, tls

logger = logging.getLogger(__name__)

PAGE_SIZE = 100  # the most the platform serves per page
MAX_NESTING = 64  # arrays and objects in a hold, one inside another: far above any tool call's arguments
MAX_INTEGER_DIGITS = 4000  # Python refuses to read or write longer integers (4,300 digits)
EXCERPT_LENGTH = 2000  # characters of an unreadable hold's JSON kept to show why
ACTIONS = ("approve", "edit", "reject")
ABSENT = object()  # a field the platform left out
# Ids a request path cannot carry: a URL resolves "." and ".." against the path before it is
# sent (RFC 3986), so the request would name a parent on the platform, and "" names the listing.
UNADDRESSABLE_IDS = frozenset({"", ".", ".."})


class PlatformError(Exception):
    """The platform did not do what was asked."""


class NotFound(PlatformError):
    """No such hold, run or file (404)."""


class UnaddressableId(NotFound):
    """An id no request path can carry (``UNADDRESSABLE_IDS``): nothing was requested.

    Counted as not found: under that id the platform has nothing this app may ask for.
    """


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


class CursorRefused(PlatformError):
    """The platform no longer accepts a listing cursor it handed out (400): list from the start instead."""


class PlatformUnavailable(PlatformError):
    """The platform could not answer now (429, 5xx, timeout, refused or dropped connection).

    The only retryable failure: the same request may succeed later. A refused
    API key (401/403) is counted here too, because an operator fixing the key
    must not lose the decisions waiting to be sent.
    """


class MalformedHold(PlatformUnavailable):
    """The platform sent a hold that breaks the contract; the message says how.

    Retryable like any answer the platform got wrong: the agent or the platform
    may send the hold again, fixed.
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
    """The decision the platform applied, as read; ``as_received`` is its object as the platform sent it, which the
    mirror keeps for the audit's outcome."""

    items: list[dict]
    decided_by: str
    decided_at: datetime | None
    as_received: dict


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
class UnreadableHold:
    """A listed hold that breaks the contract: listed apart, so that it stops no other hold.

    ``hold_id`` is the id as sent when it is text, the JSON of any other value, and
    "" when there is none; ``excerpt`` is the start of the hold's JSON.
    """

    hold_id: str
    reason: str
    excerpt: str

    @classmethod
    def of(cls, payload: Any, reason: str) -> UnreadableHold:
        hold_id = payload.get("hold_id") if isinstance(payload, dict) else None
        if hold_id is not None and not isinstance(hold_id, str):
            hold_id = json.dumps(hold_id, ensure_ascii=False)[:EXCERPT_LENGTH]
        return cls(
            hold_id=hold_id or "", reason=reason, excerpt=json.dumps(payload, ensure_ascii=False)[:EXCERPT_LENGTH]
        )


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
class Page:
    """One page of the open listing: its holds, the cursor it was asked with (None: the start) and the next one.

    [assumed] A cursor names a position in the listing and stays valid over time: listing
    again from ``cursor`` answers this page's holds that are still open and every hold
    asked since, so a sync may keep the cursor of the last page and list from it later
    (the tail). The platform may still refuse one it no longer accepts: ``CursorRefused``.
    [assumed] Holds are listed oldest first, so a new hold is always listed after the
    holds already seen: on the last page, or past it.
    """

    holds: list[Hold | UnreadableHold]
    cursor: str | None
    next_cursor: str | None


@dataclasses.dataclass(frozen=True)
class FileDownload:
    content_type: str
    content_length: int | None
    chunks: Iterator[bytes]


def parse_hold(payload: Any) -> Hold:
    """Build a ``Hold`` from the platform's JSON, or raise ``MalformedHold`` saying what breaks the contract.

    Unknown fields are ignored, and optional ones may be absent or null. A field of
    the wrong type, an unreadable ``created_at`` or ``expires_at``, an item without
    an id, or arrays and objects nested deeper than ``MAX_NESTING`` make the hold
    unreadable: a reviewer must see, and a decision must answer, the hold exactly
    as the agent asked it. Unknown actions are dropped, as unknown fields are.
    """
    if not isinstance(payload, dict):
        raise MalformedHold(f"the hold is {_kind(payload)}, not an object")
    hold_id = payload.get("hold_id", ABSENT)
    if not isinstance(hold_id, str) or not hold_id:
        raise MalformedHold(f"hold_id is {_kind(hold_id)}, not an id")
    _addressable("hold_id", hold_id)
    if readers.nested_deeper_than(payload, MAX_NESTING):
        raise MalformedHold(f"the hold nests arrays and objects more than {MAX_NESTING} levels deep")
    items = _list(payload, "items")
    if not all(isinstance(item, dict) for item in items):
        raise MalformedHold("items must all be objects")
    item_ids = [_id(item, "an item id") for item in items]
    if len(set(item_ids)) != len(item_ids):
        raise MalformedHold("two items have the same id")
    for item in items:
        if not isinstance(item.get("data"), dict | None):
            raise MalformedHold(f"the data of item {item['id']!r} is {_kind(item['data'])}, not an object")
    files = _list(payload, "files")
    if not all(isinstance(file, dict) for file in files):
        raise MalformedHold("files must all be objects")
    actions = _list(payload, "actions")
    if not all(isinstance(action, str) for action in actions):
        raise MalformedHold("actions must all be text")
    run_id = _text(payload, "run_id")
    if run_id:  # a hold may name no run: its page then shows none, and no request is made for it
        _addressable("run_id", run_id)
    for file in files:
        _addressable("a file id", _id(file, "a file id"))
    decision = payload.get("decision")
    if not isinstance(decision, dict | None):
        raise MalformedHold(f"decision is {_kind(decision)}, not an object")
    return Hold(
        hold_id=hold_id,
        run_id=run_id,
        agent=_text(payload, "agent"),
        capability=_text(payload, "capability"),
        status=_text(payload, "status") or "open",
        question=_text(payload, "question"),
        intent=_text(payload, "intent"),
        details=_text(payload, "details"),
        actions=tuple(action for action in actions if action in ACTIONS),
        items=tuple(HoldItem(id=item["id"], title=_text(item, "title"), data=item.get("data")) for item in items),
        files=tuple(
            HoldFile(
                id=_id(file, "a file id"),
                name=_text(file, "name"),
                content_type=_text(file, "content_type") or "application/octet-stream",
                size=_size(file.get("size")),
            )
            for file in files
        ),
        created_at=_time(payload, "created_at"),
        expires_at=_time(payload, "expires_at"),
        decision=(
            AppliedDecision(
                items=[entry for entry in decision.get("items") or () if isinstance(entry, dict)],
                decided_by=_shown(decision.get("decided_by")),
                decided_at=_time_or_none(decision.get("decided_at")),
                as_received=decision,
            )
            if decision is not None
            else None
        ),
        raw=payload,
    )


def _kind(value: Any) -> str:
    """What a JSON value is, for a message: "missing", "null", "a number", "an array" …"""
    if value is ABSENT:
        return "missing"
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "empty text" if not value else "text"
        case list():
            return "an array"
        case dict():
            return "an object"
    return type(value).__name__


def _text(payload: dict, key: str) -> str:
    value = payload.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedHold(f"{key} is {_kind(value)}, not text")
    return value


def _id(payload: dict, name: str) -> str:
    value = payload.get("id", ABSENT)
    if not isinstance(value, str) or not value:
        raise MalformedHold(f"{name} is {_kind(value)}, not an id")
    return value


def _addressable(name: str, value: str) -> None:
    """Refuse an id that the platform's request paths cannot carry (see ``UNADDRESSABLE_IDS``)."""
    if value in UNADDRESSABLE_IDS:
        raise MalformedHold(f"{name} is {value!r}, which a request path cannot carry: it would name another path")


def _list(payload: dict, key: str) -> list:
    value = payload.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedHold(f"{key} is {_kind(value)}, not an array")
    return value


def _time(payload: dict, key: str) -> datetime | None:
    value = payload.get(key)
    if value is None:
        return None
    moment = _time_or_none(value)
    if moment is None:
        raise MalformedHold(f"{key} is not an ISO-8601 time: {json.dumps(value, ensure_ascii=False)[:100]}")
    return moment


def _time_or_none(value: Any) -> datetime | None:
    """An aware time from ISO-8601 text (one without an offset is UTC); None for anything else."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):  # overflow: a time whose offset moves it out of years 1 to 9999
        return None


def _size(value: Any) -> int | None:
    """A file's size in bytes; None (unknown) for anything else, as the size only informs the reviewer."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _shown(value: Any) -> str:
    """Text whatever the platform sent, for what is only shown (a run, who decided), never decided on."""
    return "" if value is None else str(value)


def parse_run(payload: dict) -> Run:
    if not isinstance(payload, dict) or not payload.get("run_id"):
        raise PlatformUnavailable("the platform sent a run without a run_id")
    return Run(
        run_id=str(payload["run_id"]),
        agent=_shown(payload.get("agent")),
        capability=_shown(payload.get("capability")),
        status=_shown(payload.get("status")),
        input=payload.get("input"),
        output=payload.get("output"),
        created_at=_time_or_none(payload.get("created_at")),
        raw=payload,
    )


def _error_message(response: httpx.Response) -> str:
    try:
        error = _DECODER.decode(response.text).get("error") or {}
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
        """One page of ``env``'s open listing, asked with ``cursor`` (None: the first page)."""
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
                hold_payload = _DECODER.decode(response.text).get("hold")
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


def _number_kept_as_text(read):
    """A JSON number reader that keeps, as the text sent, a number Python or PostgreSQL cannot hold.

    That is NaN and ±Infinity (which JSON does not even allow), a float beyond
    ±1.8e308, and an integer longer than ``MAX_INTEGER_DIGITS``: the reviewer still
    sees what the agent wrote, and the hold is stored.
    """

    def number(text: str):
        if read is None or (read is int and len(text) > MAX_INTEGER_DIGITS):
            return text
        value = read(text)
        return value if read is int or math.isfinite(value) else text

    return number


_DECODER = json.JSONDecoder(
    parse_int=_number_kept_as_text(int),
    parse_float=_number_kept_as_text(float),
    parse_constant=_number_kept_as_text(None),
)
_SPACE = re.compile(r"[ \t\n\r]*")
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _decode(text: str, where: str) -> Any:
    try:
        return _DECODER.decode(text)
    except ValueError:
        raise PlatformUnavailable(f"{where}: the platform did not answer JSON") from None
    except RecursionError:
        raise PlatformUnavailable(f"{where}: the platform's answer nests too deeply to read") from None


class _TooDeep(str):
    """The JSON text of one listed hold that nests too deeply for the decoder."""


def _read_page(text: str, where: str) -> tuple[list, str | None]:
    """A listing page's holds (as decoded JSON) and its ``next_cursor``.

    A hold that nests too deeply for the decoder fails the whole page's decoding;
    the page is then read hold by hold, and that hold comes back as ``_TooDeep``.
    """
    try:
        page = _DECODER.decode(text)
    except RecursionError:
        page = _read_page_hold_by_hold(text, where)
    except ValueError:
        raise PlatformUnavailable(f"{where}: the platform did not answer JSON") from None
    if not isinstance(page, dict):
        raise PlatformUnavailable(f"{where}: the platform's answer is not an object")
    holds, cursor = page.get("holds") or [], page.get("next_cursor")
    if not isinstance(holds, list) or not isinstance(cursor, str | None):
        raise PlatformUnavailable(f"{where}: the platform's answer is not a page of holds")
    return holds, cursor


def _read_page_hold_by_hold(text: str, where: str) -> dict:
    """The page's top-level object, its ``holds`` decoded one by one (too deep ones as ``_TooDeep``)."""
    page = {}
    try:
        position = _expect(text, _SPACE.match(text).end(), "{")
        while text[position] != "}":
            key, position = _DECODER.raw_decode(text, position)
            position = _expect(text, position, ":")
            if key == "holds" and text[position] == "[":
                page[key], position = _read_holds(text, position + 1)
            else:
                page[key], position = _DECODER.raw_decode(text, position)
            position = _SPACE.match(text, position).end()
            if text[position] == ",":
                position = _SPACE.match(text, position + 1).end()
    except (ValueError, IndexError, RecursionError):
        raise PlatformUnavailable(f"{where}: the platform did not answer JSON") from None
    return page


def _read_holds(text: str, position: int) -> tuple[list, int]:
    holds = []
    position = _SPACE.match(text, position).end()
    while text[position] != "]":
        try:
            hold, position = _DECODER.raw_decode(text, position)
        except RecursionError:
            end = _end_of_container(text, position)
            hold, position = _TooDeep(text[position:end]), end
        holds.append(hold)
        position = _SPACE.match(text, position).end()
        if text[position] == ",":
            position = _SPACE.match(text, position + 1).end()
    return holds, position + 1


def _expect(text: str, position: int, token: str) -> int:
    """The position after ``token`` (and the spaces around it) at ``position``; ValueError when it is not there."""
    position = _SPACE.match(text, position).end()
    if not text.startswith(token, position):
        raise ValueError(f"expected {token!r} at {position}")
    return _SPACE.match(text, position + 1).end()


def _end_of_container(text: str, start: int) -> int:
    """Where the array or object starting at ``start`` ends, found by counting brackets outside strings."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text, start):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
        elif bracket in "]}":
            depth -= 1
            if depth == 0:
                return match.end()
    raise ValueError("an array or object that never ends")


_HOLD_ID = re.compile(r'"hold_id"\s*:\s*("(?:[^"\\]|\\.)*")')


def _listed(payload: Any) -> Hold | UnreadableHold:
    """One hold of a listing, or why it cannot be read."""
    if isinstance(payload, _TooDeep):
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
