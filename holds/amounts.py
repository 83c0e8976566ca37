"""A hold's amount, which the queue sorts and filters by: the largest amount any of its items carries.

The largest, not the total: each item is approved or rejected on its own, so the
largest says what one decision can cost at most; and a total would add up amounts
in different currencies, or count twice an item that gives both an ``amount`` and
its order's ``total``.
"""

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from holds.models import Hold
from reviewqueue.jsonvalues import AMOUNT_KEYS, as_decimal

_COLUMN = Hold._meta.get_field("amount")
LIMIT = Decimal(10) ** (_COLUMN.max_digits - _COLUMN.decimal_places)  # the first amount the column cannot hold
PLACES = Decimal(1).scaleb(-_COLUMN.decimal_places)


def largest(item_data: Iterable[Any]) -> Decimal | None:
    """The largest amount in the items' data as the ``amount`` column stores it, or None.

    None too for an amount the column cannot hold, so that such a hold is still mirrored.
    """
    found = [as_decimal(data[key]) for data in item_data if isinstance(data, dict) for key in AMOUNT_KEYS if key in data]
    return fitting(max((amount for amount in found if amount is not None), default=None))


def fitting(amount: Decimal | None) -> Decimal | None:
    """``amount`` rounded to the column's places, or None when it has too many digits before the point."""
    if amount is None:
        return None
    if abs(amount) >= LIMIT:  # checked before rounding, which would overflow on a huge exponent
        return None
    rounded = amount.quantize(PLACES)
    return rounded if abs(rounded) < LIMIT else None
