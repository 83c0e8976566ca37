"""Agent-written JSON made storable in PostgreSQL, walked and compared.

PostgreSQL's text and jsonb refuse what JSON allows (a NUL, a lone surrogate) and normalise some numbers, so a
value is made ``storable`` before it is kept anywhere; ``same_json`` compares as JSON does, and what an edit
changed is read by ``top_level_changes`` alone. Showing a value is ``reviewqueue.showing``'s; reading one as
an amount, ``reviewqueue.agent_numbers``'.
"""

import json
import re
from decimal import Decimal
from enum import Enum
from typing import Any

from reviewqueue.readers import UNSTORABLE

EXACT_FLOAT_LIMIT = 1e16

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
            return int(
                Decimal(repr(value))
            )  # the number JSON writes (1e+308), as jsonb reads it: not the float's binary value
    return value


def may_need_storable(json_text: str) -> bool:
    """Whether the value ``json_text`` was dumped from might change under ``storable``: a quick check sparing most
    values the walk."""
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


def top_level_pairs(original: Any, edited: Any) -> list[tuple[Any, Any, Any]]:
    """Two versions of an item's data side by side, value by top-level value: (key, before, after) in the original's
    key order then the added keys, ``ABSENT`` where a version has no such key; for data that are not both objects,
    one pair under the key ""."""
    if isinstance(original, dict) and isinstance(edited, dict):
        keys = [*original, *(key for key in edited if key not in original)]
        return [(key, original.get(key, ABSENT), edited.get(key, ABSENT)) for key in keys]
    return [("", original, edited)]


def top_level_changes(original: Any, edited: Any) -> list[tuple[Any, Any, Any]]:
    """The ``top_level_pairs`` an edit changed (``same_json``): the one rule for what an edit changed."""
    return [
        (key, before, after) for key, before, after in top_level_pairs(original, edited) if not same_json(before, after)
    ]
