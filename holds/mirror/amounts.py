"""A hold's amount, which the queue sorts and filters by: the largest amount any of its items carries.

The largest, not the total: each item is approved or rejected on its own, so the
largest says what one decision can cost at most; and a total would add up amounts
in different currencies, or count twice an item that gives both an ``amount`` and
its order's ``total``.

The amounts are every amount the items carry, as approval policies read them
(``agent_numbers.carried``: every amount key in any case, one level of nesting, hundredths
scaled). An amount that cannot be read, is below zero, is nested too deep to be read or is
too large for the column could be any amount, so it counts as the largest there is: the
hold stores ``UNREADABLE``, the largest value the column holds, and so comes first in
"largest first" and passes every ``min_amount``, through the same index and page cursors
as any other amount. An amount with two readings counts as the larger.
"""

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from reviewqueue.agent_numbers import AMOUNT_LIMIT, AMOUNT_STEP, carried, fits_amount_columns

UNREADABLE = AMOUNT_LIMIT - AMOUNT_STEP  # 9999999999999999.9999, the largest the column holds


def largest(item_data: Iterable[Any]) -> Decimal | None:
    """The largest amount in the items' data as the ``amount`` column stores it; None when they carry none."""
    found = carried(item_data).amounts
    if not found:
        return None
    if any(amount.too_deep or amount.reading.counted is None or amount.reading.counted < 0 for amount in found):
        return UNREADABLE
    return fitting(max(amount.reading.counted for amount in found))


def fitting(amount: Decimal) -> Decimal:
    """``amount`` rounded to the column's places, or ``UNREADABLE`` when the column cannot hold it."""
    return amount.quantize(AMOUNT_STEP) if fits_amount_columns(amount) else UNREADABLE
