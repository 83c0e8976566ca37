"""Numbers and amounts in agent-written data, read failing closed.

The one reader of agent numbers is ``read_number``; the one walk of the amounts a hold carries is
``carried`` (``amounts_in`` for one item). Every rule that lets a hold through with fewer people
(approvals.policies, holds.deciding.rules) and the queue's stored amount (holds.mirror.amounts) read
amounts through these, so they agree on which keys carry an amount (``is_amount_key``), which name a
currency (``is_currency_key``) or what the agent acts on (``is_identifying_key``), and on what is in
doubt (``Amount.doubt``): unreadable, two readings, below zero, nested too deep, more than an amount
column holds (alone or all together), or not certainly in the currency asked for.
"""

import dataclasses
import functools
import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from django.conf import settings  # read when asked (lazily): this module stays importable without Django set up

from reviewqueue import processcache, readers
from reviewqueue.showing import display, shortened

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

# Every column an amount is kept in (a hold's largest for the queue, a policy's decision counted in its daily cap, a
# remembered approval's bounds) is a DecimalField of this size, declared with these; an amount none could hold is in
# doubt (``amount_reading``), so it goes to people rather than fail the write that would store it.
AMOUNT_DIGITS, AMOUNT_PLACES = 20, 4

AMOUNT_LIMIT = Decimal(10) ** (AMOUNT_DIGITS - AMOUNT_PLACES)  # the first amount no amount column holds

AMOUNT_STEP = Decimal(1).scaleb(-AMOUNT_PLACES)  # what an amount column rounds to

MINUS_SIGNS = str.maketrans({"\u2212": "-", "\ufe63": "-", "\uff0d": "-"})


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
    mark: str = ""  # the currency code or sign written with the number ("USD", "$"), "" without one
    too_large: bool = False  # read as an amount beyond ``AMOUNT_LIMIT``: no number is kept of it

    @property
    def counted(self) -> Decimal | None:
        """The number to count: the exact one, or the larger of two readings (None when unreadable)."""
        return self.exact if self.exact is not None else self.readings[1] if self.readings else None

    @property
    def doubt(self) -> str:
        """Why the value is not read for certain, after its key: "'1,500' could be 1.5 or 1,500" ("" when certain)."""
        if self.exact is not None:
            return ""
        written = f"'{_written(display(self.value))}'"
        if self.too_large:
            return f"{written} is more than an amount can be"
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
    A single mark that could split thousands or decimals gives both readings: "1,500", and "1.500" too
    (agents write either), a leading mark (",1500": 0.15 or 1500) and more than three digits after a
    mark that follows one to three ("1,5000": 1.5 or 15000, a group mistyped or a decimal).
    A number below zero is read as written: whether that is in doubt is ``Amount.doubt``'s to say.
    Anything else (true, null, words, "1,5OO") is unreadable, and what
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
    mark = written["before"] or written["after"] or ""
    sign = (written["sign"] or written["signed"] or "").replace("+", "")
    scale = int(written["exponent"] or 0)
    mantissa = written["exponent"] is not None  # "1.250E+1" has a decimal point, never thousands
    try:
        whole, fraction = readers.decimal_parts(sign, written["body"], "amount", habits_known=mantissa)
    except readers.EitherWay as either:
        return _sized(value, *(number.scaleb(scale) for number in either.readings), mark=mark)
    except readers.BadValue:
        return Reading(value)
    return _sized(value, Decimal(f"{sign}{whole or '0'}{'.' if fraction else ''}{fraction}").scaleb(scale), mark=mark)


def _sized(value: Any, *numbers: Decimal, mark: str = "") -> Reading:
    """A reading of ``numbers`` (one, or both readings), unreadable if beyond ``LARGEST_NUMBER``."""
    if any(abs(number) >= LARGEST_NUMBER for number in numbers):
        return Reading(value)
    if len(numbers) == 1:
        return Reading(value, exact=numbers[0], mark=mark)
    return Reading(value, readings=numbers, mark=mark)


WRITTEN_LIMIT = 40  # characters of an unreadable value a doubt quotes


def _written(text: str) -> str:
    return shortened(text, WRITTEN_LIMIT)


# Which keys of item data carry what. A key is read as words, whatever its case and spelling ("refundAmount",
# "Refund_Amount ", "AMOUNT" are all amounts): see ``key_words``.
WORD_BREAK = re.compile(r"[\s_\-.]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

AMOUNT_WORDS = frozenset(
    {"amount", "amounts", "total", "totals", "subtotal", "price", "prices", "cents"}
)  # a key ending in one is an amount

CURRENCY_WORDS = frozenset({"currency", "ccy"})

TOTAL = "all amounts together"  # how a verdict names the hold's total

CENTS_WORD = "cents"  # "amount_cents": hundredths, scaled to the amount they make

NESTED_KEYS_LOOKED_AT = 1000  # keys of deeper nesting searched for an amount nobody reads, before giving up (doubt)

# The currencies a sign may stand for: "$" alone names no currency for certain.
CURRENCY_SIGNS = {
    "$": frozenset({"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN", "ARS", "CLP", "COP", "TWD"}),
    "¥": frozenset({"JPY", "CNY"}),
    "€": frozenset({"EUR"}),
    "£": frozenset({"GBP"}),
    "₹": frozenset({"INR"}),
    "₩": frozenset({"KRW"}),
    "₽": frozenset({"RUB"}),
    "₺": frozenset({"TRY"}),
    "₪": frozenset({"ILS"}),
    "฿": frozenset({"THB"}),
    "₫": frozenset({"VND"}),
    "₴": frozenset({"UAH"}),
    "₦": frozenset({"NGN"}),
    "₱": frozenset({"PHP"}),
}

CURRENCY_CODE = re.compile(r"[A-Za-z]{3}", re.ASCII)


def key_words(key: Any) -> tuple[str, ...]:
    """A data key's words in lower case: "refundAmount" and " Refund_amount" are ("refund", "amount")."""
    if not isinstance(key, str):
        return ()
    return _words(key)


@processcache.cached(maxsize=4096)  # agents reuse a few keys over and over: every policy reads every one of them
def _words(key: str) -> tuple[str, ...]:
    return tuple(word.casefold() for word in WORD_BREAK.split(key.strip()) if word)


def is_currency_key(key: Any) -> bool:
    """Whether ``key`` names a currency: "currency", "currency_code", "amountCurrency", "ccy", or one of the
    setting ``CURRENCY_KEYS``."""
    return _kind(key, tuple(getattr(settings, "CURRENCY_KEYS", ())))[0] if isinstance(key, str) else False


def is_amount_key(key: Any) -> bool:
    """Whether ``key`` carries an amount: ``amount``, ``total``, ``price``, ``*_amount``, ``amount_*``, ``*_total``,
    ``*_price``, ``*_cents``, in any case and spelling; never a currency's key or an id (``amount_id``)."""
    return _kind(key, tuple(getattr(settings, "CURRENCY_KEYS", ())))[1] if isinstance(key, str) else False


def amount_keys(data: Any) -> list:
    """The keys of one item's data that carry an amount (``is_amount_key``), at its top level, in its order."""
    return [key for key in data if is_amount_key(key)] if isinstance(data, dict) else []


def in_hundredths(key: Any) -> bool:
    """Whether amount key ``key`` counts hundredths ("amount_cents")."""
    return key_words(key)[-1:] == (CENTS_WORD,)


def amount_reading(key: Any, value: Any) -> Reading:
    """``read_number`` of ``value``, found under amount key ``key``: hundredths scaled to the amount they make, and
    no number at all (``too_large``) when one reading is beyond what an amount column holds."""
    reading = read_number(value)
    if in_hundredths(key):
        reading = dataclasses.replace(
            reading,
            exact=None if reading.exact is None else reading.exact.scaleb(-2),
            readings=None if reading.readings is None else tuple(number.scaleb(-2) for number in reading.readings),
        )
    numbers = (reading.exact,) if reading.exact is not None else reading.readings or ()
    if all(fits_amount_columns(number) for number in numbers):
        return reading
    return Reading(value, mark=reading.mark, too_large=True)


def fits_amount_columns(number: Decimal) -> bool:
    """Whether an amount column (``AMOUNT_DIGITS``, ``AMOUNT_PLACES``) holds ``number``, once rounded to its places."""
    # Compared before rounding, which would overflow on a huge exponent.
    return abs(number) < AMOUNT_LIMIT and abs(number.quantize(AMOUNT_STEP)) < AMOUNT_LIMIT


def is_identifying_key(key: Any) -> bool:
    """Whether ``key`` names what the agent acts on (``*_id``, ``order*``), rather than an amount of it."""
    words = key_words(key)
    return bool(words) and not is_amount_key(key) and (words[-1] == "id" or words[0].startswith("order"))


@processcache.cached(maxsize=4096)
def _kind(key: str, currency_keys: tuple) -> tuple[bool, bool]:
    """(is a currency key, is an amount key) of ``key``, the setting ``CURRENCY_KEYS`` being ``currency_keys``."""
    words = _words(key)
    currency = bool(CURRENCY_WORDS & set(words)) or key in currency_keys
    amount = bool(words) and not currency and words[-1] != "id" and (words[0] == "amount" or words[-1] in AMOUNT_WORDS)
    return currency, amount


def currency_named(value: Any) -> frozenset[str] | None:
    """The currencies a currency key's value or a number's mark may name: {"EUR"} for "eur" or "€", every dollar
    for "$", an empty set for something no currency is ("dollars", 7); None for nothing ("", null)."""
    if value in (None, ""):
        return None
    if isinstance(value, str):
        text = unicodedata.normalize("NFKC", value).strip()
        if CURRENCY_CODE.fullmatch(text):
            return frozenset({text.upper()})
        if text in CURRENCY_SIGNS:
            return CURRENCY_SIGNS[text]
    return frozenset()


@dataclasses.dataclass(frozen=True)
class Amount:
    """One amount an item's data carries: where (``path``: "amount", "refund.amount", "lines[1].price"), what
    ``read_number`` made of it (hundredths already scaled), and the currencies it may be in (``currencies``: None
    when nothing names one; several for "$"; none at all when its mark and its currency key disagree)."""

    path: str
    reading: Reading
    currencies: frozenset[str] | None = None
    too_deep: bool = False
    key: Any = ""  # the key it was found under
    top: Any = ""  # the top-level key of the item's data it is in

    def doubt(self, currency: str = "") -> str:
        """Why this amount is not certain enough to let a hold through with fewer people ("" when it is), after its
        path: "'1,5OO' could not be read", "'-1500' is below zero", "'900' names no currency, and the policy is for
        USD". ``currency`` is the one the asking policy is for ("" for any)."""
        certain = not (self.too_deep or self.reading.exact is None or self.reading.exact < 0)
        if certain and (not currency or self.currencies == frozenset({currency})):
            return ""  # the common case, said without writing the value out
        written = f"'{_written(display(self.reading.value))}'"
        if self.too_deep:
            return f"{written} is nested too deep to be read"
        if self.reading.exact is None:
            return self.reading.doubt
        if self.reading.exact < 0:
            return f"{written} is below zero"
        if self.currencies is None:
            return f"{written} names no currency, and the policy is for {currency}"
        if len(self.currencies) > 1:
            return f"{written} could be in another currency than {currency}"
        return f"{written} is not in {currency}, which the policy is for"


@dataclasses.dataclass(frozen=True)
class Carried:
    """Every amount a hold carries (``carried``), and what may be concluded from them all.

    ``total`` is the sum of every amount read for certain (None when there is no amount): an item giving
    both a refund and its order's total counts both, so the total errs high, never low. ``totalled`` is
    False for the values of another key than an amount (a quantity, a score), which have no total.
    """

    amounts: tuple[Amount, ...] = ()
    totalled: bool = True

    @functools.cached_property
    def total(self) -> Decimal | None:
        counted = [amount.reading.exact for amount in self.amounts if amount.reading.exact is not None]
        return sum(counted, Decimal(0)) if self.amounts else None

    def doubtful(self, currency: str = "") -> Amount | None:
        """The first amount in doubt (``Amount.doubt``), or None; else their total (``TOTAL``) when it is more than
        an amount column holds."""
        found = next((amount for amount in self.amounts if amount.doubt(currency)), None)
        if found is None and self.totalled and self.total is not None and not fits_amount_columns(self.total):
            return Amount(TOTAL, Reading(grouped_number(self.total), too_large=True))
        return found

    def sure_total(self, currency: str = "") -> Decimal | None:
        """The total when no amount is in doubt for a policy for ``currency`` (0 without amounts), else None."""
        return None if self.doubtful(currency) else (self.total or Decimal(0))


def carried(item_data: Iterable[Any], key: str | None = None) -> Carried:
    """Every amount the items' data carry (``amounts_in``), or with ``key`` every value under that key, as
    ``amounts_in`` finds amounts: what a condition on another key reads."""
    found = tuple(amount for data in item_data for amount in amounts_in(data, key))
    return Carried(found, totalled=key is None or is_amount_key(key))


def amounts_in(data: Any, key: str | None = None) -> list[Amount]:
    """Every amount one item's data carries: under every amount key (``is_amount_key``), at its top level and one
    level down (an object, or a list of objects), each with the currency its text or a currency key beside it
    (or above it) names. An amount key found deeper still is returned as an amount in doubt: the hold carries an
    amount nobody reads. With ``key``, the values under keys spelt as ``key`` is instead ("Quantity" for
    "quantity")."""
    found: list[Amount] = []
    if isinstance(data, dict):
        wanted = _key_test(key)
        _collect(data, "", None, wanted, found, nested=True)
    return found


def _key_test(key: str | None) -> Callable[[Any], bool]:
    if key is None or is_amount_key(key):
        return is_amount_key
    words = key_words(key)
    return lambda other: key_words(other) == words


def _collect(data: dict, prefix: str, outer: frozenset[str] | None, wanted, found: list, nested: bool, top=None):
    here = _both(outer, _currency_beside(data))
    for key, value in data.items():
        path = f"{prefix}{key}"
        if wanted(key):
            found.append(_amount(path, key, value, here, top=key if nested else top))
        elif isinstance(value, dict | list):
            children = value if isinstance(value, list) else [value]
            for index, child in enumerate(children):
                child_path = f"{path}[{index}]." if isinstance(value, list) else f"{path}."
                if nested and isinstance(child, dict):
                    _collect(child, child_path, here, wanted, found, nested=False, top=key)
                elif isinstance(child, dict | list) and _holds_wanted(child, wanted):
                    found.append(
                        Amount(child_path.rstrip("."), Reading(child), here, True, key, key if nested else top)
                    )


def _amount(path: str, key: str, value: Any, currencies: frozenset[str] | None, top: Any) -> Amount:
    reading = amount_reading(key, value)
    mark = currency_named(reading.mark) if reading.mark else None
    wrapper = _currency_beside(value) if isinstance(value, dict) else None
    return Amount(path, reading, _both(_both(currencies, wrapper), mark), key=key, top=top)


def _currency_beside(data: dict) -> frozenset[str] | None:
    """The currencies named by the currency keys of ``data`` (None when it has none)."""
    named = None
    for key, value in data.items():
        if is_currency_key(key):
            named = _both(named, currency_named(value) if currency_named(value) is not None else frozenset())
    return named


def _both(first: frozenset[str] | None, second: frozenset[str] | None) -> frozenset[str] | None:
    """The currencies both name (either alone when the other names none): disagreeing, they name none."""
    if first is None:
        return second
    if second is None:
        return first
    return first & second


def _holds_wanted(value: Any, wanted) -> bool:
    """Whether ``value`` (nested too deep to be read) holds a key ``wanted`` anywhere, or more keys than are looked
    at: either way, an amount may hide in it."""
    pending, looked = [value], 0
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            looked += len(current)
            if looked > NESTED_KEYS_LOOKED_AT or any(wanted(key) for key in current):
                return True
            pending.extend(current.values())
        elif isinstance(current, list):
            looked += 1
            if looked > NESTED_KEYS_LOOKED_AT:
                return True
            pending.extend(current)
    return False
