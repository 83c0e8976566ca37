"""What an item acts on: its *subjects*, the business objects it names (an order, a customer, an invoice), read by
the one strict reader of them, and the kind of action it asks for.

``subjects_of`` reads the top-level keys of an item's data: ``order_id``, ``order``, ``customer_id``, ``customer``,
``invoice_id``, ``account_id``, ``subscription_id`` and any other key ending ``_id`` or ``Id``, but never a tool
call's id (the keys ``id``, ``call_id``, ``tool_call_id``, ``tool_use_id`` in any spelling, nor values shaped like
one: ``call_…``, ``toolu_…``, ``fc_…``). It also reads the item's own id when that is a business id rather than a
tool call's (LlamaIndex's items are named by their order id), under the key ``ITEM_KEY``. Admins add keys or take
them away per agent and capability (``holds.models.SubjectKeys``); the reader is handed them as ``Keys``.

A value is a string or an integer (never a bool, list, object, null or float), trimmed, case-folded, with one
leading ``#`` dropped; one empty, holding a control character (NUL included) or a lone surrogate, or longer than
``VALUE_LIMIT`` once normalised is skipped. A subject's identity is its value: the key is shown, never matched, so
``order_id: A-1001`` on one hold and the item id ``A-1001`` on another name the same order.

The reader is pure: no database, no settings. It keeps only what a key reads as (``_key_reading``), the same
for every item of every hold.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from reviewqueue import processcache

VALUE_LIMIT = 200  # the width of HoldSubject.value
KIND_LIMIT = 100  # the width of HoldSubject.action_kind
SUBJECTS_PER_ITEM = 20  # an item naming more (agent text) keeps its first 20
ITEM_KEY = "item id"  # the key under which an item's own id is shown
NAMED_KEYS = ("order_id", "order", "customer_id", "customer", "invoice_id", "account_id", "subscription_id")
TOOL_CALL_KEYS = frozenset({"id", "callid", "toolcallid", "tooluseid"})  # as ``key_name`` spells them
TOOL_CALL_PREFIXES = ("call_", "toolu_", "fc_")
FILLER_WORDS = frozenset({"on", "for", "of", "the", "a", "order", "#", "·"})
_LONGEST_READ = 4 * VALUE_LIMIT  # longer raw text cannot come within the limit, whatever trimming does
_LONGEST_TITLE = 1000  # an action's kind is read from the start of its title
_INTEGER_LIMIT = 10**VALUE_LIMIT  # an integer this large has more digits than a value holds


class Subject(NamedTuple):
    """One business object an item names: ``key`` as written (shown), ``value`` normalised (matched)."""

    key: str
    value: str


def key_name(key: str) -> str:
    """How keys compare to one another and to an admin's settings: case-folded, without ``_`` or ``-``
    (``order_id``, ``orderId`` and ``Order-ID`` are one)."""
    return key.casefold().replace("_", "").replace("-", "")


_NAMED = frozenset(key_name(key) for key in NAMED_KEYS)


@dataclasses.dataclass(frozen=True)
class Keys:
    """The keys an admin added to those read, and those taken away (as ``key_name`` spells them); ``ITEM_KEY``
    taken away stops reading the item's own id."""

    added: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()


DEFAULT_KEYS = Keys()


@dataclasses.dataclass(frozen=True)
class KeySetting:
    """One admin setting (a ``holds.models.SubjectKeys`` row, read): for ``agent`` and ``capability`` ("" for
    any), the keys added and removed, as ``key_name`` spells them."""

    agent: str
    capability: str
    added: frozenset[str]
    removed: frozenset[str]


@dataclasses.dataclass(frozen=True)
class KeySettings:
    """Every admin setting of subject keys, read once and handed to the reader (``for_hold``)."""

    settings: tuple[KeySetting, ...] = ()

    def for_hold(self, agent: str, capability: str) -> Keys:
        """The keys of a hold of ``agent`` with ``capability``: every setting of the agent for that capability or
        any; a key both added and removed is removed."""
        added, removed = set(), set()
        for setting in self.settings:
            if setting.agent == agent and setting.capability in ("", capability):
                added |= setting.added
                removed |= setting.removed
        return Keys(frozenset(added - removed), frozenset(removed)) if added or removed else DEFAULT_KEYS


NO_SETTINGS = KeySettings()


def key_list(text: str) -> frozenset[str]:
    """The keys an admin wrote (separated by commas or spaces), as ``key_name`` spells them."""
    return frozenset(key_name(key) for key in re.split(r"[\s,]+", text or "") if key_name(key))


def is_subject_key(key: Any, keys: Keys = DEFAULT_KEYS) -> bool:
    """Whether a top-level key of an item's data names a subject."""
    reading = _key_reading(key) if isinstance(key, str) else None
    if reading is None:
        return False
    name, by_default = reading
    return name not in keys.removed and (by_default or name in keys.added)


@processcache.cached(maxsize=4096)  # agents write the same few keys on every item of every hold
def _key_reading(key: str) -> tuple[str, bool] | None:
    """How ``key`` reads whatever an admin set: its ``key_name``, and whether it names a subject unless taken away
    (a named key, or one ending ``_id`` or ``Id``); None for a key that never does (a tool call's id, one too long or
    holding a control character)."""
    if len(key) > _LONGEST_READ or _has_control(key):
        return None
    name = key_name(key)
    if name in TOOL_CALL_KEYS:
        return None
    return name, name in _NAMED or (len(key) > 3 and key.endswith(("_id", "Id")))


def normalised(value: Any) -> str | None:
    """A subject's value as matched (trimmed, case-folded, one leading ``#`` dropped), or None when it is none: not
    a string or an integer, empty, holding a control character, or too long."""
    if not isinstance(value, str):
        if not isinstance(value, int) or isinstance(value, bool) or not -_INTEGER_LIMIT < value < _INTEGER_LIMIT:
            return None
        value = str(value)
    if len(value) > _LONGEST_READ:
        return None
    value = value.strip()
    if value.startswith("#"):
        value = value[1:].strip()
    value = value.casefold()
    if not value or len(value) > VALUE_LIMIT or _has_control(value):
        return None
    return value


# Unicode's control characters (category Cc: U+0000-U+001F, U+007F-U+009F) and lone surrogates (Cs).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (NUL, a newline…) or a lone surrogate."""
    return _CONTROL.search(text) is not None


def is_tool_call_id(value: str) -> bool:
    """Whether a normalised value is shaped like a tool call's id, which names no business object."""
    return value.startswith(TOOL_CALL_PREFIXES)


def subjects_of(item_id: str, data: Any, keys: Keys = DEFAULT_KEYS) -> list[Subject]:
    """The subjects one item names, each once (by value), in the order of its data's keys, its own id last; at most
    ``SUBJECTS_PER_ITEM``. ``data`` other than a dict names none but the item's id."""
    found: dict[str, Subject] = {}
    named = ((key, raw) for key, raw in data.items() if is_subject_key(key, keys)) if isinstance(data, dict) else ()
    for key, raw in itertools.chain(named, [(ITEM_KEY, item_id)] if ITEM_KEY not in keys.removed else []):
        if len(found) >= SUBJECTS_PER_ITEM:
            break
        value = normalised(raw)
        if value is not None and value not in found and not is_tool_call_id(value):
            found[value] = Subject(key, value)
    return list(found.values())


_WORDS = re.compile(r"\w+|#|·")


def action_kind(title: Any, subjects: Iterable[Subject]) -> str:
    """The kind of action an item asks for: the first word of its title (case-folded) that is no subject, number,
    amount or filler word; "" when none is left (LlamaIndex's "A-1001 · 49.90"), which is unknown and matches every
    kind."""
    if not isinstance(title, str):
        return ""
    text = title[:_LONGEST_TITLE].casefold()
    for subject in sorted(subjects, key=lambda subject: -len(subject.value)):
        text = _without(text, subject.value)
    for word in _WORDS.findall(text):
        if word in FILLER_WORDS or any(map(str.isdigit, word)):
            continue
        return word[:KIND_LIMIT]
    return ""


def _without(text: str, value: str) -> str:
    """``text`` with each whole-word occurrence of ``value`` blanked: the order "e" leaves "refund" as it is. (Found
    with ``str.find``: a regular expression per value, each compiled once, took most of a sync's reading.)"""
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not _is_word(before) and not _is_word(after):
            text = text[:start] + " " + text[end:]
            start = text.find(value, start + 1)
        else:
            start = text.find(value, start + 1)
    return text


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"


def same_kind(one: str, other: str) -> bool:
    """Whether two action kinds may be the same action: equal, or either unknown ("")."""
    return not one or not other or one == other
