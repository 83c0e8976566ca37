"""What approving an item does, in one plain sentence built from its title and data.

"Refunds 20.00 USD on order A-1001" for a refund, "Calls send_replacement with order_id A-1008,
quantity 1" for any other tool. The title and data are the agent's: the sentence is plain
text that the templates escape, and a long value is cut short rather than trusted to fit.
Amounts carry their currency when the item's data names one, under a key of the setting
``CURRENCY_KEYS`` (``["currency"]`` by default).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from holds.deciding import editing
from holds.models import ACTION_WORDS, Decision, DecisionItem
from reviewqueue.agent_numbers import amount_keys, amount_reading, grouped_number, in_hundredths, is_amount_key
from reviewqueue.showing import display, on_one_line

TOOL_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", re.ASCII)  # refund, issueRefund, orders.refund; not A-1001
WORD_SEPARATORS = re.compile(r"[_.\-\s]+")
CURRENCY = re.compile(r"[A-Za-z]{3}|[$€£¥₹₩₽₺₪฿₫₴₦₱]")  # an ISO 4217 code ("USD", "eur") or a symbol
ORDER_KEYS = ("order_id", "order")
VALUE_LIMIT = 60
SENTENCE_LIMIT = 300


def sentence(title: str, data: Any, item_id: str = "") -> str:
    """What approving an item with this title and data does; a title that only repeats the item's id names no tool."""
    title = (title or "").strip()
    if title == item_id:
        title = ""
    tool = title if TOOL_NAME.fullmatch(title) else ""
    if _names_a_refund(title) and isinstance(data, dict) and (key := _amount_key(data)):
        text = _refund(data, key)
    elif tool:
        text = f"Calls {tool} with {_arguments(data)}" if data not in ({}, None) else f"Calls {tool} with no arguments"
    else:
        text = f"Goes ahead with {_arguments(data)}" if data not in ({}, None) else "Goes ahead as the agent asked"
    return on_one_line(text, SENTENCE_LIMIT)


def amount_text(data: dict, key: str) -> str:
    """The amount under ``key`` as the agent wrote it (hundredths as the amount they make: 1500 cents as 15.00), with
    the item's currency when its data names one, and "(unreadable)" after it when it is not read for certain
    (``agent_numbers.amount_reading``), with both readings if any."""
    currency = currency_of(data)
    reading = amount_reading(key, data[key])
    scaled = in_hundredths(key) and reading.exact is not None
    shown = grouped_number(reading.exact) if scaled else on_one_line(display(data[key]), VALUE_LIMIT)
    shown = f"{shown} {currency}" if currency else shown
    if reading.readings:
        return f"{shown} (unreadable: {reading.either})"
    return f"{shown} (unreadable)" if reading.exact is None else shown


def item_amount(data: Any) -> str:
    """The item's amount with its currency ("49.90 USD"), or "" when its data carries none."""
    key = _amount_key(data) if isinstance(data, dict) else ""
    return amount_text(data, key) if key else ""


def currency_of(data: Any) -> str:
    """The currency the item's data names under one of ``CURRENCY_KEYS``, or ""; anything but a short code is
    ignored."""
    if not isinstance(data, dict):
        return ""
    for key in currency_keys():
        value = data.get(key)
        if isinstance(value, str) and CURRENCY.fullmatch(value.strip()):
            return value.strip().upper()
    return ""


def currency_keys() -> list[str]:
    keys = getattr(settings, "CURRENCY_KEYS", ["currency"])
    if not isinstance(keys, list | tuple) or not all(isinstance(key, str) for key in keys):
        raise ImproperlyConfigured("CURRENCY_KEYS must be a list of item data keys")
    return list(keys)


def _names_a_refund(title: str) -> bool:
    """A tool named for a refund ("refund", "issue_refund"), or a title that starts with "Refund"."""
    words = [word.lower() for word in WORD_SEPARATORS.split(title) if word]
    return "refund" in words if TOOL_NAME.fullmatch(title) else bool(words) and words[0] == "refund"


def _amount_key(data: dict) -> str:
    return next(iter(amount_keys(data)), "")


def _refund(data: dict, key: str) -> str:
    order_key = next(
        (order for order in ORDER_KEYS if isinstance(data.get(order), str | int) and data[order] != ""), ""
    )
    text = f"Refunds {amount_text(data, key)}"
    if order_key:
        text += f" on order {_value(data[order_key])}"
    rest = {other: value for other, value in data.items() if other not in (key, order_key, *currency_keys())}
    return f"{text} ({_pairs(rest, data, ': ')})" if rest else text


def _arguments(data: Any) -> str:
    if isinstance(data, dict):
        shown = {key: value for key, value in data.items() if not (key in currency_keys() and _amount_key(data))}
        return _pairs(shown, data, " ")
    return _value(data)


def _pairs(values: dict, data: dict, separator: str) -> str:
    """ "key value" pairs, amounts with the currency of ``data``."""
    return ", ".join(
        f"{on_one_line(display(key), VALUE_LIMIT)}{separator}"
        + (amount_text(data, key) if is_amount_key(key) else _value(value))
        for key, value in values.items()
    )


def _value(value: Any) -> str:
    return on_one_line(display(value), VALUE_LIMIT)


@dataclasses.dataclass(frozen=True)
class SentItem:
    """One item of a decision as sent: its action's word, what it does, and the reviewer's changes."""

    item: DecisionItem
    word: str
    sentence: str  # "" for a rejected item: the agent does nothing
    changes: list[editing.Change]


def sent_items(decision: Decision) -> list[SentItem]:
    titles = {item.item_id: item.title for item in decision.hold.items.all()}  # the hold page has them prefetched
    return [_sent(item, titles.get(item.item_id, "")) for item in decision.items.all()]


def _sent(item: DecisionItem, title: str) -> SentItem:
    edited = item.action == DecisionItem.Action.EDIT
    data = item.data if edited else item.original_data
    return SentItem(
        item=item,
        word=ACTION_WORDS.get(item.action, item.action),
        sentence="" if item.action == DecisionItem.Action.REJECT else sentence(title, data, item.item_id),
        changes=editing.changes(item.original_data, item.data) if edited else [],
    )
