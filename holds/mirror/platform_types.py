"""What the platform answers and how it fails, typed: the results ``holds.mirror.platform`` returns and raises.

The rest of the app knows the platform only through these and the client; the wire format they are read from, and
every [assumed] detail of it, stays in ``holds/mirror/platform.py``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

EXCERPT_LENGTH = 2000  # characters of an unreadable hold's JSON kept to show why


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
    customer_message: str
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

    What a cursor promises is the platform's, written down in ``holds.mirror.platform.PlatformClient.open_page``.
    """

    holds: list[Hold | UnreadableHold]
    cursor: str | None
    next_cursor: str | None


@dataclasses.dataclass(frozen=True)
class FileDownload:
    content_type: str
    content_length: int | None
    chunks: Iterator[bytes]
