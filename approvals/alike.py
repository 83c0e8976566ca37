"""Which holds are like the one a reviewer approved and remembered (``approvals.remembering``): the rule itself.

A remembered approval matches a hold of exactly the same env, agent and capability (read as a
policy's globs, those values are written as literal ones, ``literal``) whose every item carries an
amount read for certain, each at most the remembered one's largest and all together at most its
total (eight items of 12.00 are not like one), all in the remembered currency.
"Read for certain" is ``certain_amounts``'s to say, through the one reader of a hold's amounts
(``agent_numbers.carried``), as the policies' fail-closed rules read them; an item with no amount at
all is not like an amount. A currency is what ``carried`` finds each amount in (a code or sign in its
text, a currency key beside it); every amount must name the same one.

Pure functions of their arguments, so ``policies.requirement`` and the replay ask them alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

from reviewqueue.agent_numbers import amounts_in, carried, grouped_number

_GLOB_SPECIAL = re.compile(r"([*?\[])")


def literal(value: str) -> str:
    """``value`` as a glob matching exactly it: ``*``, ``?`` and ``[`` each inside brackets."""
    return _GLOB_SPECIAL.sub(r"[\1]", value)


def certain_amounts(item_data: Iterable) -> list[Decimal] | None:
    """Every amount the hold carries (``agent_numbers.carried``: every amount key, nested, in any spelling), each read
    for certain; None when one is in doubt (``Amount.doubt``: unreadable, two readings, negative, too deep), or
    when an item carries none: the one check of "the hold's amount is read for certain"."""
    items = list(item_data)
    if not items or any(not amounts_in(data) for data in items):
        return None
    found = carried(items)
    if found.doubtful():
        return None
    return [amount.reading.exact for amount in found.amounts]


def currency(item_data: Iterable) -> str | None:
    """The one currency every amount names ("" for none named), or None when they name different ones or one
    could be several ("$")."""
    named = set()
    for amount in carried(list(item_data)).amounts:
        if amount.currencies is not None and len(amount.currencies) != 1:
            return None
        named.add(next(iter(amount.currencies)) if amount.currencies else "")
    return named.pop() if len(named) == 1 else None


def fits(remembered, hold, item_data: Iterable) -> bool:
    """Whether ``remembered`` (a ``RememberedApproval``) matches ``hold`` (its ``item_data``): see the module's
    docstring."""
    if (remembered.env, remembered.agent, remembered.capability) != (hold.env, hold.agent, hold.capability):
        return False
    item_data = list(item_data)
    amounts = certain_amounts(item_data)
    if amounts is None:
        return False
    return (
        max(amounts) <= remembered.amount_at_most
        and sum(amounts) <= remembered.total_at_most
        and currency(item_data) == remembered.currency
    )


def why(remembered) -> str:
    """What a remembered approval approves, in words: "each amount at most 12.00 USD, all together at most 24.00
    USD"."""
    currency = f" {remembered.currency}" if remembered.currency else ""
    return (
        f"each amount at most {written(remembered.amount_at_most)}{currency}, "
        f"all together at most {written(remembered.total_at_most)}{currency}"
    )


def written(amount: Decimal) -> str:
    """12.0000 as "12.00", 12.3456 as written."""
    cents = amount.quantize(Decimal("0.01"))
    return grouped_number(cents if amount == cents else amount)
