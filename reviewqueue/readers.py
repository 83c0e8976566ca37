"""Strict readers for the values a request carries: one per kind of value, shared by every app.

Every query parameter, cursor, form field and id that a view takes from a request is read
here. A value that is not of its kind raises ``BadValue``, whose message says in plain words
what was wrong; ``reviewqueue.input_guard.HostileInputMiddleware`` answers it with a 400, and
the review form shows it as a field error. Nothing that passes a reader can make the
database refuse a query or a row. A blank value means "not given": readers return None (or
"") for it and the caller picks the default.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Collection
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any
from zoneinfo import available_timezones

from reviewqueue import processcache

# PostgreSQL refuses NUL in text and jsonb, and lone surrogates cannot be encoded as UTF-8.
UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
MAX_TEXT = 1000  # characters of a filter or search value: far above any id, short of a slow query
FIRST_YEAR, LAST_YEAR = 1970, 9000  # a day's span: a day or two either way cannot overflow a date
ID_MAX = 2**63 - 1  # PostgreSQL's bigint
# Python refuses to convert more than 4,300 digits (sys.get_int_max_str_digits); PostgreSQL's
# numeric takes far more. A whole number keeps a margin below Python's limit.
MAX_INTEGER_DIGITS = 4000
TYPED_INTEGER = re.compile(r"[+-]?[0-9]+")
TIME_OF_DAY = re.compile(r"[0-9]{2}:[0-9]{2}(?::[0-9]{2})?")
TYPED_DECIMAL = re.compile(r"(?P<sign>[+-]?)(?P<body>[0-9.,]*)")
# Thousands in groups of three after a first group of one to three digits that does not start with 0.
THOUSANDS = {mark: re.compile(rf"[1-9][0-9]{{0,2}}(?:{re.escape(mark)}[0-9]{{3}})+") for mark in ",."}
# "1,234": these digits could be read with the comma as a thousands separator or as a decimal comma.
EITHER_WAY = re.compile(r"[1-9][0-9]{0,2}")
NOT_A_DECIMAL = "a number such as 20.00 is needed"
TYPED_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class BadValue(ValueError):
    """A request value that is not of its kind. ``problem`` is for the person who sent it."""

    def __init__(self, name: str, problem: str):
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


class EitherWay(BadValue):
    """Digits that one mark splits either as thousands or as decimals ("1,234"): ``readings`` holds both, smaller
    first."""

    def __init__(self, name: str, sign: str, whole: str, fraction: str):
        super().__init__(
            name,
            f"write {sign}{whole}{fraction} or {sign}{whole}.{fraction}: "
            "a comma can't tell thousands from decimals here",
        )
        self.readings = tuple(sorted((Decimal(f"{sign}{whole}.{fraction}"), Decimal(f"{sign}{whole}{fraction}"))))


def text(value: str, name: str, max_length: int = MAX_TEXT) -> str:
    """Free text such as a search or an id to match, without surrounding spaces ("" when blank)."""
    value = value.strip()
    if UNSTORABLE.search(value):
        raise BadValue(name, "NUL characters and unpaired surrogates are not allowed")
    if len(value) > max_length:
        raise BadValue(name, f"use at most {max_length} characters")
    return value


def choice(value: str, name: str, choices: Collection[str]) -> str:
    """One of ``choices`` ("" when blank)."""
    value = value.strip()
    if value and value not in choices:
        raise BadValue(name, "is not one of the values offered")
    return value


def integer(value: str, name: str, minimum: int | None = None, maximum: int | None = None) -> int | None:
    """A whole number in ASCII digits (Unicode digits such as "²" are refused), within the bounds given."""
    value = value.strip()
    if not value:
        return None
    if not TYPED_INTEGER.fullmatch(value):
        raise BadValue(name, "a whole number is needed")
    if len(value.lstrip("+-")) > MAX_INTEGER_DIGITS:
        raise BadValue(name, "the number is too long")
    number = int(value)
    if minimum is not None and number < minimum:
        raise BadValue(name, f"must be at least {minimum}")
    if maximum is not None and number > maximum:
        raise BadValue(name, f"must be at most {maximum}")
    return number


def identifier(value: str, name: str, maximum: int = ID_MAX) -> int | None:
    """A database id: a whole number from 1 to ``maximum``."""
    return integer(value, name, minimum=1, maximum=maximum)


def number(value: str, name: str) -> float | None:
    """A finite number written the JSON way ("1.5", "-2e3"); "inf" and "nan" are no number."""
    value = value.strip()
    if not value:
        return None
    if not TYPED_NUMBER.fullmatch(value):
        raise BadValue(name, "a number is needed")
    return _finite(float(value), name)


def decimal(value: str, name: str, max_digits: int | None = None, decimal_places: int | None = None) -> Decimal | None:
    """An exact decimal number, with the digits a ``DecimalField`` of that size holds when a size is given.

    People write decimals their own way, so besides "20" and "-7.50" this reads:

    - a decimal comma: "20,00" is 20.00, "1234,5" is 1234.5, ",5" is 0.5;
    - thousands separators beside the other mark: "1,234.56" and "1.234,56" are 1234.56 (the
      mark written last is the decimal one, and appears once);
    - thousands separators alone, used at least twice: "1,234,567" and "1.234.567".

    A point alone is always the decimal point ("1.234" is 1.234). A single comma followed by
    exactly three digits, after one to three digits not starting with 0 ("1,234", "-12,500"),
    could mean either, and is refused with both readings spelt out.
    """
    value = value.strip()
    if not value:
        return None
    typed = TYPED_DECIMAL.fullmatch(value)
    if not typed:
        raise BadValue(name, NOT_A_DECIMAL)
    whole, fraction = decimal_parts(typed["sign"], typed["body"], name)
    if (
        max_digits is not None
        and decimal_places is not None
        and (len(whole.lstrip("0")) > max_digits - decimal_places or len(fraction) > decimal_places)
    ):
        raise BadValue(
            name, f"use at most {max_digits - decimal_places} digits before the point and {decimal_places} after"
        )
    return Decimal(f"{typed['sign']}{whole or '0'}{'.' if fraction else ''}{fraction}")


def decimal_parts(sign: str, body: str, name: str, habits_known: bool = True) -> tuple[str, str]:
    """The digits before and after the decimal mark of ``body`` (digits, points and commas) signed ``sign``.

    The rule of ``decimal``, for whatever reads a decimal written by hand. ``habits_known=False`` is for text
    whose writer's habits are unknown (``reviewqueue.agent_numbers.read_number``): a mark alone could then be
    either a decimal mark or a thousands separator whenever both readings make sense, so it gives both
    (``EitherWay``) where a point alone would be "1.500" (1.5 or 1500), where a mark leads (",1500": 0.15 or
    1500), and where more than three digits follow a mark after one to three digits ("1,5000": 1.5 or 15000,
    a thousands group mistyped or a decimal).
    """
    commas, points = body.count(","), body.count(".")
    if commas and points:
        decimal_mark = body[max(body.rfind(","), body.rfind("."))]
        thousands_mark = "." if decimal_mark == "," else ","
        if body.count(decimal_mark) > 1:
            raise BadValue(name, f"write the decimal mark once, as in 1{thousands_mark}234{decimal_mark}56")
        grouped, fraction = body.split(decimal_mark)
        return _ungrouped(grouped, thousands_mark, name), fraction
    if commas > 1 or points > 1:
        return _ungrouped(body, "," if commas else ".", name), ""
    whole, _, fraction = body.replace(",", ".").partition(".")
    thousands_looking = EITHER_WAY.fullmatch(whole) is not None
    if ((commas or not habits_known) and len(fraction) == 3 and thousands_looking) or (
        not habits_known and fraction and (not whole or (len(fraction) > 3 and thousands_looking))
    ):
        raise EitherWay(name, sign, whole, fraction)
    if not (whole or fraction):
        raise BadValue(name, NOT_A_DECIMAL)
    return whole, fraction


def _ungrouped(grouped: str, mark: str, name: str) -> str:
    if not THOUSANDS[mark].fullmatch(grouped):
        raise BadValue(name, f"write thousands in groups of three, as in 1{mark}234{mark}567, or without separators")
    return grouped.replace(mark, "")


def day(value: str, name: str) -> date | None:
    """A calendar date, YYYY-MM-DD, between the years 1970 and 9000."""
    value = value.strip()
    if not value:
        return None
    try:
        parsed = date.fromisoformat(value)
    except ValueError:
        raise BadValue(name, "a date such as 2026-01-31 is needed") from None
    if not FIRST_YEAR <= parsed.year <= LAST_YEAR:
        raise BadValue(name, f"must fall between the years {FIRST_YEAR} and {LAST_YEAR}")
    return parsed


def time_of_day(value: str, name: str) -> time | None:
    """A time of day as a time input sends it, "HH:MM" on the 24-hour clock (seconds allowed); None when blank."""
    value = value.strip()
    if not value:
        return None
    if not TIME_OF_DAY.fullmatch(value):
        raise BadValue(name, "a time such as 22:00 is needed")
    try:
        return time.fromisoformat(value)
    except ValueError:
        raise BadValue(name, "a time such as 22:00 is needed") from None


def moment(value: str, name: str) -> datetime | None:
    """An ISO 8601 date and time, in UTC: one without an offset is taken as UTC already."""
    value = value.strip()
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except ValueError:
        raise BadValue(name, "a date and time such as 2026-01-31T12:00:00+00:00 is needed") from None
    except OverflowError:  # an offset that moves it out of years 1 to 9999
        raise BadValue(name, "is out of the range of dates") from None


@processcache.kept_for_the_process
def time_zone_names() -> frozenset[str]:
    """Every IANA zone name ``zoneinfo`` knows here: it reads the zone files, so once a process."""
    return frozenset(available_timezones())


def time_zone(value: str, name: str) -> str:
    """An IANA time zone name that ``zoneinfo`` knows, such as "Europe/Paris" ("" when blank)."""
    value = value.strip()
    if value and value not in time_zone_names():
        raise BadValue(name, 'is not a time zone; pick one from the list, such as "Europe/Paris" or "UTC"')
    return value


def write_cursor(*parts: datetime | Decimal | int | str | None) -> str:
    """A page cursor: URL-safe base64 of a JSON list of strings, one per part ("" for None)."""
    raw = json.dumps(
        ["" if part is None else part.isoformat() if isinstance(part, datetime) else str(part) for part in parts]
    )
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def cursor(
    value: str, name: str, parts: tuple[Callable[[str, str], Any], ...], optional: Collection[int] = ()
) -> tuple | None:
    """A cursor made by ``write_cursor``, each part read by its kind's reader; None when blank.

    Only the parts at the positions in ``optional`` may be blank (None).
    """
    if not value:
        return None
    try:
        raw = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    except (ValueError, binascii.Error, RecursionError):
        raw = None
    if not (isinstance(raw, list) and len(raw) == len(parts) and all(isinstance(part, str) for part in raw)):
        raise BadValue(name, "is not a page link made by this app")
    read = tuple(reader(part, name) for reader, part in zip(parts, raw, strict=True))
    if any(part is None and position not in optional for position, part in enumerate(read)):
        raise BadValue(name, "is not a page link made by this app")
    return read


def json_value(value: str, name: str, deepest: int | None = None) -> Any:
    """JSON text whose every value PostgreSQL's jsonb can store, and Python can read back.

    Refused: NaN and Infinity (not JSON), numbers out of a double's range or with too many
    digits, strings holding NUL or unpaired surrogates (\\u0000, \\ud800) and, with ``deepest``,
    arrays and objects nested more than ``deepest`` levels.
    """
    try:
        parsed = json.loads(
            value,
            parse_constant=lambda constant: _refuse(name, f"{constant} is not valid JSON"),
            parse_int=lambda digits: integer(digits, name),
            parse_float=lambda digits: _finite(float(digits), name),
        )
    except json.JSONDecodeError as problem:
        raise BadValue(name, f"line {problem.lineno} column {problem.colno}: {problem.msg}") from None
    except RecursionError:
        raise BadValue(name, "the JSON is nested too deeply") from None
    if deepest is not None and nested_deeper_than(parsed, deepest):
        raise BadValue(name, f"the JSON nests arrays and objects more than {deepest} levels deep")
    _check_strings(parsed, name)
    return parsed


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels (an object of scalars is one level); walked level by
    level, as recursion could run out."""
    level, depth = ([value] if isinstance(value, dict | list) else []), 1
    while level:
        if depth > limit:
            return True
        level = [
            child
            for container in level
            for child in (container.values() if isinstance(container, dict) else container)
            if isinstance(child, (dict, list))
        ]
        depth += 1
    return False


def _check_strings(value: Any, name: str) -> None:
    strings: list[str] = []
    pending = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            strings += current.keys()
            pending += current.values()
        elif isinstance(current, list):
            pending += current
        elif isinstance(current, str):
            strings.append(current)
    if any(UNSTORABLE.search(string) for string in strings):
        raise BadValue(name, "text in JSON cannot hold \\u0000 or an unpaired surrogate")


def _finite(value: float, name: str) -> float:
    if not math.isfinite(value):
        raise BadValue(name, "the number is too large")
    return value


def _refuse(name: str, problem: str):
    raise BadValue(name, problem)
