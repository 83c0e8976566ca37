"""Strict readers of one field of the platform's JSON, each raising ``MalformedHold`` that names the field and says
what it was instead. Which fields a hold has is the platform module's; these only read the one they are given.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from holds.mirror.platform_types import MalformedHold

ABSENT = object()  # a field the platform left out


def kind(value: Any) -> str:
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


def text(payload: dict, key: str) -> str:
    value = payload.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedHold(f"{key} is {kind(value)}, not text")
    return value


def array(payload: dict, key: str) -> list:
    value = payload.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedHold(f"{key} is {kind(value)}, not an array")
    return value


def moment(payload: dict, key: str) -> datetime | None:
    value = payload.get(key)
    if value is None:
        return None
    found = moment_or_none(value)
    if found is None:
        raise MalformedHold(f"{key} is not an ISO-8601 time: {json.dumps(value, ensure_ascii=False)[:100]}")
    return found


def moment_or_none(value: Any) -> datetime | None:
    """An aware time from ISO-8601 text (one without an offset is UTC); None for anything else."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # overflow: a time whose offset moves it out of years 1 to 9999
        return None


def size(value: Any) -> int | None:
    """A file's size in bytes; None (unknown) for anything else, as the size only informs the reviewer."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def shown(value: Any) -> str:
    """Text whatever the platform sent, for what is only shown (a run, who decided), never decided on."""
    return "" if value is None else str(value)
