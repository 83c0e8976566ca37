"""Which holds are like the one a reviewer approved and remembered (``approvals.remembering``): the rule itself.

A remembered approval matches a hold of exactly the same env, agent and capability (its
patterns are those values written as literal globs, ``literal``) whose every item carries an
amount read for certain, each at most the remembered one's, all in the remembered currency.
"Read for certain" is ``certain_amounts``'s to say, the one place that decides it: every amount
key an item has (``AMOUNT_KEYS``) must read as one exact number (``read_number``), not negative,
and an item with no amount at all is not like an amount. A currency is whatever the items say of
one: the value at a ``CURRENCY_KEYS`` key, and any sign or code written in the amount itself
("$12.00", "12.00 USD"); every item must say the same.

Pure functions of their arguments, so ``policies.requirement`` and the replay ask them alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

from django.conf import settings

from reviewqueue.jsonvalues import AMOUNT_KEYS, grouped_number, read_number

_GLOB_SPECIAL = re.compile(r"([*?\[])")
# What is left of an amount written as text once its number is taken out: a currency sign or code.
_NUMBER_PARTS = re.compile(r"[\d\s.,+\-'’_]")


def literal(value: str) -> str:
    """``value`` as a glob matching exactly it: ``*``, ``?`` and ``[`` each inside brackets."""
    return _GLOB_SPECIAL.sub(r"[\1]", value)


def certain_amounts(item_data: Iterable) -> list[Decimal] | None:
    """Every amount of every item, each read for certain; None when one is not (doubtful, unreadable, negative), or
    when an item carries none: the one check of "the hold's amount is read for certain"."""
    found = []
    items = list(item_data)
    if not items:
        return None
    for data in items:
        if not isinstance(data, dict):
            return None
        keys = [key for key in AMOUNT_KEYS if key in data]
        if not keys:
            return None
        for key in keys:
            exact = read_number(data[key]).exact
            if exact is None or exact < 0:
                return None
            found.append(exact)
    return found


def currency(item_data: Iterable) -> str | None:
    """The one currency all the items name ("" for none named), or None when they name different ones."""
    named = {_currency_of(data) for data in item_data}
    return named.pop() if len(named) == 1 else None


def _currency_of(data) -> str:
    if not isinstance(data, dict):
        return ""
    marks = []
    for key in getattr(settings, "CURRENCY_KEYS", ["currency"]):
        if isinstance(data.get(key), str):
            marks.append(data[key].strip().upper())
    for key in AMOUNT_KEYS:
        if isinstance(data.get(key), str):
            marks.append(_NUMBER_PARTS.sub("", data[key]).upper())
    return " ".join(mark for mark in marks if mark)


def fits(policy, hold, item_data: Iterable) -> bool:
    """Whether remembered ``policy`` matches ``hold`` (its ``item_data``): see the module's docstring."""
    if (policy.env_pattern, policy.agent_pattern, policy.capability_pattern) != (
        literal(hold.env),
        literal(hold.agent),
        literal(hold.capability),
    ):
        return False
    item_data = list(item_data)
    amounts = certain_amounts(item_data)
    if amounts is None or policy.remembered_amount is None:
        return False
    return max(amounts) <= policy.remembered_amount and currency(item_data) == policy.remembered_currency


def why(policy) -> str:
    """What a remembered approval approves, in words: "each amount at most 12.00 USD"."""
    amount = policy.remembered_amount
    limit = grouped_number(amount.quantize(Decimal("0.01")) if amount == amount.quantize(Decimal("0.01")) else amount)
    return f"each amount at most {limit}{' ' + policy.remembered_currency if policy.remembered_currency else ''}"
