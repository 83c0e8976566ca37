"""Agent-written JSON as every app handles it: made storable in PostgreSQL, walked, compared, shown, read as amounts."""

import json
import math
import re
from decimal import Decimal
from enum import Enum
from typing import Any

from reviewqueue.readers import UNSTORABLE

__all__ = [
    "ABSENT",
    "AMOUNT_KEYS",
    "UNSTORABLE",
    "as_decimal",
    "display",
    "escape_surrogates",
    "grouped",
    "may_need_storable",
    "same_json",
    "scalars",
    "showable",
    "storable",
]

EXACT_FLOAT_LIMIT = 1e16
SURROGATE = re.compile(r"[\ud800-\udfff]")
NUMBER_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
AMOUNT_KEYS = ("amount", "refund_amount", "total")  # the item data keys that carry an amount
# What JSON text shows of a value ``storable`` would change: a NUL or a surrogate, escaped (ASCII-only
# JSON; a surrogate may be half of a pair such as an emoji's) or as itself; -0.0; or a float of 1e16 or
# more, which Python writes with "e+". Text may match by chance; then ``storable`` merely changes nothing.
MAYBE_UNSTORABLE = re.compile(r"\\u0000|\\u[dD][89a-fA-F]|-0\.0|[eE]\+|[\x00\ud800-\udfff]")


class Absent(Enum):
    """The value of a key that one side of a comparison does not have."""

    ABSENT = "absent"


ABSENT = Absent.ABSENT


def storable(value):
    """``value`` as PostgreSQL's text and jsonb will store it and give it back.

    They refuse NUL and lone surrogates, which carry no meaning a reviewer needs
    but would fail the whole transaction: those become U+FFFD (dict keys too).
    jsonb also prints a float such as 1e16 as the integer 10000000000000000 and
    -0.0 as 0.0, so those are normalised the same way, and a hash made over the
    value before storing still matches what is read back.
    """
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {storable(key): storable(nested) for key, nested in value.items()}
    if isinstance(value, list):
        return [storable(nested) for nested in value]
    if isinstance(value, float):
        if value == 0:
            return 0.0
        if abs(value) >= EXACT_FLOAT_LIMIT and value.is_integer():
            return int(Decimal(repr(value)))  # the number JSON writes (1e+308), as jsonb reads it: not the float's binary value
    return value


def may_need_storable(json_text: str) -> bool:
    """Whether the value ``json_text`` was dumped from might change under ``storable``: a quick check sparing most values the walk."""
    if "-0.0" in json_text or "e+" in json_text or "E+" in json_text or "\x00" in json_text:
        return True
    # Substring tests take a fifth of the pattern's time: it runs only on text with an escape or beyond ASCII.
    return ("\\u" in json_text or not json_text.isascii()) and MAYBE_UNSTORABLE.search(json_text) is not None


def scalars(value) -> list:
    """Every number, string, boolean and null inside ``value``, depth first."""
    found = []
    _add_scalars(value, found)
    return found


def _add_scalars(value, found: list) -> None:
    # Appending to one list costs a third of what nested generators do: sync walks every item's data.
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list):
        found.append(value)
        return
    for nested in value:
        if isinstance(nested, dict | list):
            _add_scalars(nested, found)
        else:
            found.append(nested)


def same_json(first: Any, second: Any) -> bool:
    """Equal as JSON: "49.90" differs from "49.9" and 1 from true or 1.0, but an object's key order does not count."""
    if first is ABSENT or second is ABSENT:
        return first is second
    return _canonical(first) == _canonical(second)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def display(value: Any) -> str:
    """A value as a summary shows it: text as written, anything else as one line of JSON."""
    if value is ABSENT:
        return "(absent)"
    if isinstance(value, str):
        return showable(value)
    return escape_surrogates(json.dumps(value, ensure_ascii=False))


def showable(text: str) -> str:
    """Text a page can carry unchanged: NUL and lone surrogates (valid in JSON strings) become U+FFFD.

    Browsers would replace a NUL themselves, and a lone surrogate cannot be encoded as UTF-8:
    the same characters PostgreSQL refuses, so one pattern serves both.
    """
    return UNSTORABLE.sub("\ufffd", text)


def escape_surrogates(json_text: str) -> str:
    """JSON text with lone surrogates written as \\u escapes, so that it reads back to the same strings."""
    return SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", json_text)


def grouped(value: Any) -> str | None:
    """A JSON number or decimal string with its thousands grouped, as written: "1200.00" as "1,200.00" (None if no number)."""
    number = as_decimal(value)
    return f"{number:,f}" if number is not None and number.is_finite() else None


def as_decimal(value: Any) -> Decimal | None:
    """A JSON number or decimal string as an exact Decimal; None for anything else (including true)."""
    match value:
        case bool():
            return None
        case int():
            return Decimal(value)
        case float() if math.isfinite(value):
            return Decimal(repr(value))
        case str() if NUMBER_TEXT.fullmatch(value):
            return Decimal(value)
    return None
