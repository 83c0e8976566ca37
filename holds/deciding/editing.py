"""An item's JSON data as typed form fields, and the reviewer's submission back as JSON data.

An agent wrote the data, so every key and value is untrusted: a key is only ever shown (and
escaped by the templates), never used as a form field name or an identifier. Every value keeps
its JSON type through an edit: an amount "49.90" comes back as a string with two places, never
as the float 49.9, and a field the reviewer left alone comes back exactly as the agent wrote it.
"""

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from holds.deciding import rules
from reviewqueue import readers
from reviewqueue.agent_json import top_level_changes
from reviewqueue.showing import display, escape_surrogates, showable

DECIMAL = re.compile(r"-?[0-9]+\.[0-9]+")
SAFE_PREFIX = re.compile(r"[A-Za-z0-9_-]+")
LINE_BREAK = re.compile(r"\r\n?")
LONG_TEXT = 80  # characters; longer text gets a textarea
# Where a key's words meet: separators, and a capital after a lower-case letter or digit ("refundAmount"),
# or ending a run of capitals ("HTTPStatus").
WORD_BREAK = re.compile(r"[\s_\-.]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


class FieldKind(StrEnum):
    """The JSON type a field keeps; a decimal is a string such as "49.90"."""

    TEXT = "text"
    DECIMAL = "decimal"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    NULL = "null"
    JSON = "json"


@dataclass(frozen=True)
class Field:
    """One top-level value of an item's data, as a reviewer sees and edits it.

    ``name`` is the form field name, made from the caller's prefix and the position only.
    ``initial`` is what the input shows (a bool for a checkbox). A multiline field is a
    textarea, whose first newline browsers drop: templates start its content with a newline.
    ``whole`` marks the single field of data that is not an object (its key is "").
    """

    key: str
    name: str
    kind: FieldKind
    original: Any
    initial: str | bool
    multiline: bool
    places: int | None = None
    whole: bool = False

    @property
    def label(self) -> str:
        """The key in words, "order_id" as "Order id", safe to encode in a page."""
        return human_label(self.key)

    @property
    def raw_key(self) -> str:
        """The key exactly as the agent wrote it, safe to encode in a page."""
        return display(self.key)

    @property
    def rows(self) -> int:
        """A multiline field's height in lines, enough for all of its initial value without scrolling."""
        return max(2, str(self.initial).count("\n") + 1)


@dataclass(frozen=True)
class FieldError:
    """Why a submitted field was refused, for the field named ``name``."""

    key: str
    name: str
    message: str


@dataclass(frozen=True)
class Change:
    """A top-level value that an edit changed; ``before`` or ``after`` is ABSENT for a removed or added key."""

    key: str
    before: Any
    after: Any

    @property
    def label(self) -> str:
        """The key, safe to encode in a page."""
        return display(self.key)


class Unreadable(ValueError):
    """A submitted value that cannot become its field's JSON type; the message is for the reviewer."""


def human_label(key: str) -> str:
    """A data key as words for a label: "order_id" and "orderId" become "Order id"; "HTTPStatus" "HTTP status".

    An acronym keeps its capitals; a key with no words in it (or the key "" of data that is
    not an object) is shown as it is, or as "Value".
    """
    words = [
        word if word.isupper() and len(word) > 1 else word.lower() for word in WORD_BREAK.split(display(key)) if word
    ]
    if not words:
        return display(key) or "Value"
    words[0] = words[0][0].upper() + words[0][1:]
    return " ".join(words)


def kind_of(value: Any) -> FieldKind:
    """The field kind for a JSON value (bool before int: True is an int in Python, not in JSON)."""
    match value:
        case None:
            return FieldKind.NULL
        case bool():
            return FieldKind.BOOLEAN
        case int():
            return FieldKind.INTEGER
        case float():
            return FieldKind.NUMBER
        case str() if DECIMAL.fullmatch(value):
            return FieldKind.DECIMAL
        case str():
            return FieldKind.TEXT
        case _:
            return FieldKind.JSON


def fields_for(data: Any, prefix: str) -> list[Field]:
    """One field per top-level key of an object, in its order; any other data is one field for the whole value."""
    if not SAFE_PREFIX.fullmatch(prefix):
        raise ValueError(f"a form field prefix must be letters, digits, '-' or '_', not {prefix!r}")
    if isinstance(data, dict):
        return [_field(key, f"{prefix}-{index}", value) for index, (key, value) in enumerate(data.items())]
    return [_field("", f"{prefix}-0", data, whole=True)]


def _field(key: str, name: str, value: Any, whole: bool = False) -> Field:
    kind = kind_of(value)
    return Field(
        key=key,
        name=name,
        kind=kind,
        original=value,
        initial=_initial(kind, value),
        multiline=kind is FieldKind.JSON or (kind is FieldKind.TEXT and _is_long_text(value)),
        places=len(value.partition(".")[2]) if kind is FieldKind.DECIMAL else None,
        whole=whole,
    )


def _initial(kind: FieldKind, value: Any) -> str | bool:
    match kind:
        case FieldKind.BOOLEAN:
            return value
        case FieldKind.NULL:
            return ""
        case FieldKind.TEXT | FieldKind.DECIMAL:
            return showable(value)
        case FieldKind.JSON:
            return escape_surrogates(json.dumps(value, indent=2, ensure_ascii=False))
        case _:
            return json.dumps(value)


def _is_long_text(text: str) -> bool:
    return "\n" in text or "\r" in text or len(text) > LONG_TEXT


def _newlines(text: str) -> str:
    """Browsers send a textarea's line breaks as CRLF; the data uses LF."""
    return LINE_BREAK.sub("\n", text)


def read_fields(fields: list[Field], submitted: Mapping[str, Any]) -> tuple[Any, list[FieldError]]:
    """The full edited data, in the original key order, and the fields that could not be read.

    A field that could not be read, or is missing from the submission, keeps its original value.
    ``submitted`` is a QueryDict or a dict of strings (or of lists of strings, the last one counting).
    """
    values: dict[str, Any] = {}
    errors: list[FieldError] = []
    for field in fields:
        try:
            values[field.key] = _read(field, submitted)
        except Unreadable as problem:
            values[field.key] = field.original
            errors.append(FieldError(key=field.key, name=field.name, message=str(problem)))
    if fields and fields[0].whole:
        return values[fields[0].key], errors
    return values, errors


def _read(field: Field, submitted: Mapping[str, Any]) -> Any:
    if field.kind is FieldKind.BOOLEAN:
        return field.name in submitted  # a browser leaves out an unticked checkbox
    text = _submitted_text(submitted, field.name)
    if text is None or _newlines(text) == _newlines(field.initial):
        return field.original
    try:
        return PARSERS[field.kind](field, _newlines(text))
    except readers.BadValue as problem:
        raise Unreadable(problem.problem) from None


def _submitted_text(submitted: Mapping[str, Any], name: str) -> str | None:
    if name not in submitted:
        return None
    value = submitted[name]
    if isinstance(value, list):
        if not value:
            return None
        value = value[-1]
    return str(value)


def _read_text(field: Field, text: str) -> str:
    return text


def _read_null(field: Field, text: str) -> str | None:
    return None if text == "" else text


def _read_decimal(field: Field, text: str) -> str:
    """A decimal string with the original's places: "20" and "20,00" become "20.00" where the agent wrote "49.90"."""
    number = readers.decimal(text, field.name)
    if number is None:
        raise Unreadable("a number is needed")
    places = field.places or 0
    whole, _, fraction = format(abs(number), "f").partition(".")
    fraction = fraction.rstrip("0")
    if len(fraction) > places:
        raise Unreadable(f"use at most {places} decimal place{'' if places == 1 else 's'}")
    sign = "-" if number < 0 else ""  # -0 is not below 0: "-0" is read as "0.00"
    return f"{sign}{whole}.{fraction.ljust(places, '0')}"


def _read_integer(field: Field, text: str) -> int:
    number = readers.integer(text, field.name)
    if number is None:
        raise Unreadable("a whole number is needed")
    return number


def _read_number(field: Field, text: str) -> float:
    number = readers.number(text, field.name)
    if number is None:
        raise Unreadable("a number is needed")
    return number


def _read_json(field: Field, text: str) -> Any:
    """JSON text of the same shape as the original (an object stays an object, a list a list)."""
    value = readers.json_value(text, field.name)
    shape = dict if isinstance(field.original, dict) else list
    if not isinstance(value, shape):
        raise Unreadable(f"a JSON {'object' if shape is dict else 'list'} is needed")
    return value


PARSERS: dict[FieldKind, Callable[[Field, str], Any]] = {
    FieldKind.TEXT: _read_text,
    FieldKind.NULL: _read_null,
    FieldKind.DECIMAL: _read_decimal,
    FieldKind.INTEGER: _read_integer,
    FieldKind.NUMBER: _read_number,
    FieldKind.JSON: _read_json,
}


def changes(original: Any, edited: Any) -> list[Change]:
    """The top-level values an edit changed (``agent_json.top_level_changes``)."""
    return [Change(key, before, after) for key, before, after in top_level_changes(original, edited)]


def validate_item(data: Any, prefix: str, submitted: Mapping[str, Any]) -> tuple[Any, list[Change], list[FieldError]]:
    """Read a reviewer's edit of one item: the edited data, what changed, and every error.

    Errors from reading come first; the business rules only judge values that were read,
    since a field that could not be read keeps its original value.
    """
    fields = fields_for(data, prefix)
    edited, errors = read_fields(fields, submitted)
    errors += _rule_errors(fields, data, edited)
    return edited, changes(data, edited), errors


def _rule_errors(fields: list[Field], original: Any, edited: Any) -> list[FieldError]:
    """The business rules' refusals as errors on their fields; the rules see only keys and JSON values."""
    by_key = {field.key: field for field in fields}
    return [
        FieldError(key=key, name=by_key[key].name, message=message)
        for key, message in rules.check_edit(original, edited)
    ]


def validate_data(data: Any, edited: Any, prefix: str = "item-field") -> tuple[Any, list[Change], list[FieldError]]:
    """Read an edit given as the item's whole edited data (the API's), as the form reads the same values typed into
    its fields: the same keys (an edit changes values, never adds or removes one), each value read as its field's
    kind, then judged by the business rules (``validate_item``).

    A value of another JSON type is read from its text as the form would read it typed ("20" for "49.90" is
    "20.00"); a missing or added key is an error on that key (``FieldError.key``; ``name`` is a form name).
    """
    fields = fields_for(data, prefix)
    if isinstance(data, dict):
        if not isinstance(edited, dict):
            return data, [], [FieldError(key="", name=prefix, message="the item's data is a JSON object")]
        unknown = [FieldError(key=key, name=prefix, message="is not a key of the item's data") for key in edited]
        unknown = [error for error in unknown if error.key not in data]
        missing = [FieldError(key=f.key, name=f.name, message="is missing") for f in fields if f.key not in edited]
        if unknown or missing:
            return data, [], [*missing, *unknown]
        values = edited
    else:
        values = {"": edited}
    submitted = {
        field.name: _typed_text(field, values[field.key])
        for field in fields
        if field.kind is not FieldKind.BOOLEAN or values[field.key] is True
    }
    for field in fields:
        if field.kind is FieldKind.BOOLEAN and not isinstance(values[field.key], bool):
            return data, [], [FieldError(key=field.key, name=field.name, message="true or false is needed")]
    return validate_item(data, prefix, submitted)


def _typed_text(field: Field, value: Any) -> str:
    """What a reviewer would type into ``field`` for ``value``."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False) if field.kind is FieldKind.JSON else json.dumps(value)
