"""Agent-written values as pages, messages and the API show them: JSON on one line, text a page can carry, nesting
cut at ``MAX_NESTING`` levels with a marker, long text cut with an ellipsis (``shortened``, ``on_one_line``).
"""

import json
import re
from typing import Any

from reviewqueue import readers
from reviewqueue.agent_json import ABSENT
from reviewqueue.readers import UNSTORABLE

# Arrays and objects one inside another: the most the API reads in a body, and shows of agent JSON. Deeper
# nesting is no tool call's arguments; serializers and recursive walks cannot take any depth (pydantic stops at 255).
MAX_NESTING = 32

TOO_DEEP = f"(nested more than {MAX_NESTING} levels deep: not shown)"  # what stands for the deeper part

SURROGATE = re.compile(r"[\ud800-\udfff]")


def nested_within(value: Any) -> Any:
    """``value`` as it is shown: each array or object nested more than ``MAX_NESTING`` levels replaced by the marker
    ``TOO_DEEP`` (``value`` itself, uncopied, when it nests no deeper)."""
    if not readers.nested_deeper_than(value, MAX_NESTING):
        return value
    return _cut_below(value, MAX_NESTING)


def _cut_below(value: Any, levels: int) -> Any:
    # Recursion no deeper than MAX_NESTING: the value's deeper containers are never entered.
    if not isinstance(value, dict | list):
        return value
    if levels == 0:
        return TOO_DEEP
    if isinstance(value, dict):
        return {key: _cut_below(nested, levels - 1) for key, nested in value.items()}
    return [_cut_below(nested, levels - 1) for nested in value]


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


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis standing for what was cut: the one way text is cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def on_one_line(text: str, limit: int) -> str:
    """``text`` with its runs of white space (line breaks too) as single spaces, ``shortened`` to ``limit``."""
    return shortened(" ".join(text.split()), limit)
