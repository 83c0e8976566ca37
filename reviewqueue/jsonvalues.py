"""Agent-written JSON as every app handles it: made storable in PostgreSQL, walked, compared, shown, read as amounts."""

import dataclasses
import json
import math
import re
import unicodedata
from decimal import Decimal
from enum import Enum
from typing import Any

from reviewqueue import readers
from reviewqueue.readers import UNSTORABLE

__all__ = [
    "ABSENT",
    "AMOUNT_KEYS",
    "UNSTORABLE",
    "Reading",
    "display",
    "escape_surrogates",
    "grouped",
    "grouped_number",
    "may_need_storable",
    "read_number",
    "same_json",
    "scalars",
    "showable",
    "storable",
]

EXACT_FLOAT_LIMIT = 1e16
SURROGATE = re.compile(r"[\ud800-\udfff]")
AMOUNT_KEYS = ("amount", "refund_amount", "total")  # the item data keys that carry an amount
# A number as agents write one, once its digits are ASCII (see ``read_number``): a sign, a currency
# sign or code before or after, digits with points and commas, an exponent. A code is in capitals,
# as ISO 4217 writes it: "1.5 mil" is no amount of a currency "mil", and stays unreadable.
WRITTEN_NUMBER = re.compile(
    r"(?P<sign>[+-]?)\s*(?:(?P<before>[A-Z]{3}|[^\w\s.,+-])\s*(?P<signed>[+-]?)\s*)?"
    r"(?P<body>[0-9.,]*[0-9][0-9.,]*)(?:[eE](?P<exponent>[+-]?[0-9]{1,3}))?"
    r"(?:\s*(?P<after>[A-Z]{3}|[^\w\s.,+-]))?",
    re.ASCII,
)
WRAPPER_KEYS = ("value", "amount")  # {"value": "1500.00"}: one number in an object of its own
DEEPEST_WRAPPING = 2  # [{"value": "1500.00"}]; deeper is no amount anyone means
LONGEST_NUMBER = 100  # characters: longer text is no amount anyone means
LARGEST_NUMBER = Decimal(10) ** 30  # beyond it, a number is no amount either, and would take pages to show
MINUS_SIGNS = str.maketrans({"\u2212": "-", "\ufe63": "-", "\uff0d": "-"})
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
    """A number an agent wrote, with its thousands grouped: "1200.00" as "1,200.00" (None unless read for certain)."""
    number = read_number(value).exact
    return grouped_number(number) if number is not None else None


def grouped_number(number: Decimal) -> str:
    """1200.00 as "1,200.00"."""
    return f"{number:,f}"


@dataclasses.dataclass(frozen=True)
class Reading:
    """What ``read_number`` made of a value: ``exact`` when read for certain, both ``readings`` (smaller
    first) when it could mean either, neither when it cannot be read as a number at all."""

    value: Any  # as written
    exact: Decimal | None = None
    readings: tuple[Decimal, Decimal] | None = None

    @property
    def counted(self) -> Decimal | None:
        """The number to count: the exact one, or the larger of two readings (None when unreadable)."""
        return self.exact if self.exact is not None else self.readings[1] if self.readings else None

    @property
    def doubt(self) -> str:
        """Why the value is not read for certain, after its key: "'1,500' could be 1.5 or 1,500" ("" when certain)."""
        if self.exact is not None:
            return ""
        written = f"'{_cut(display(self.value))}'"
        return f"{written} could be {self.either}" if self.readings else f"{written} could not be read"

    @property
    def either(self) -> str:
        """Both readings, "1.5 or 1,500" ("" unless there are two)."""
        return " or ".join(grouped_number(number.normalize()) for number in self.readings or ())


def read_number(value: Any, depth: int = 0) -> Reading:
    """A number the agent wrote, in whatever form: the one reader of numbers in item data.

    Besides JSON numbers and "1500.00" it reads a currency sign or code before or after ("$1500.00",
    "1500.00 USD"), a leading "+" or spaces, an exponent ("1.5e3"), digits of any script ("１５００"),
    grouping separators and decimal commas by ``readers.decimal_parts``'s rule ("1,500.00",
    "1500,00"), and one number wrapped in ``{"value": …}``, ``{"amount": …}`` or a one-element list.
    A single mark that could split thousands or decimals ("1,500", and "1.500" too: agents write
    either) gives both readings. Anything else (true, null, words, "1,5OO") is unreadable, and what
    reads it must fail closed: see approvals/policies.py, holds/deciding/rules.py and holds/mirror/amounts.py.
    """
    match value:
        case bool():
            return Reading(value)
        case int():
            return _sized(value, Decimal(value))
        case float() if math.isfinite(value):
            return _sized(value, Decimal(repr(value)))
        case str():
            return _read_text(value)
        case [nested] if depth < DEEPEST_WRAPPING:
            return dataclasses.replace(read_number(nested, depth + 1), value=value)
        case dict() if depth < DEEPEST_WRAPPING and len(wrapped := [key for key in WRAPPER_KEYS if key in value]) == 1:
            return dataclasses.replace(read_number(value[wrapped[0]], depth + 1), value=value)
    return Reading(value)


def _read_text(value: str) -> Reading:
    text = value
    if len(text) > LONGEST_NUMBER:
        return Reading(value)
    if not text.isascii():  # "１５００", "٢٠", "−5": their digits and signs in ASCII
        text = "".join(
            str(unicodedata.decimal(character)) if character.isdecimal() else character
            for character in unicodedata.normalize("NFKC", text).translate(MINUS_SIGNS)
        )
    written = WRITTEN_NUMBER.fullmatch(text.strip())
    if not written or (written["before"] and written["after"]) or (written["sign"] and written["signed"]):
        return Reading(value)
    for mark in (written["before"], written["after"]):
        if mark and not mark.isalpha() and unicodedata.category(mark) != "Sc":
            return Reading(value)
    sign = (written["sign"] or written["signed"] or "").replace("+", "")
    scale = int(written["exponent"] or 0)
    mantissa = written["exponent"] is not None  # "1.250E+1" has a decimal point, never thousands
    try:
        whole, fraction = readers.decimal_parts(sign, written["body"], "amount", point_alone_is_decimal=mantissa)
    except readers.EitherWay as either:
        return _sized(value, *(number.scaleb(scale) for number in either.readings))
    except readers.BadValue:
        return Reading(value)
    return _sized(value, Decimal(f"{sign}{whole or '0'}{'.' if fraction else ''}{fraction}").scaleb(scale))


def _sized(value: Any, *numbers: Decimal) -> Reading:
    """A reading of ``numbers`` (one, or both readings), unreadable if beyond ``LARGEST_NUMBER``."""
    if any(abs(number) >= LARGEST_NUMBER for number in numbers):
        return Reading(value)
    return Reading(value, exact=numbers[0]) if len(numbers) == 1 else Reading(value, readings=numbers)


def _cut(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
