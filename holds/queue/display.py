"""How a queue row shows a hold: its amounts as the agent wrote them, and its urgency, which the page's countdown
moves on (app.js reads ``COUNTDOWN`` from the page).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from holds.deciding import describe
from holds.models import Hold
from reviewqueue.agent_numbers import amount_keys, amount_reading

URGENT = timedelta(minutes=15)


SOON = timedelta(hours=1)


COUNTDOWN_WORDS = {"expired": "expired", "days": "{d}d {h}h", "hours": "{h}h {mm}m", "minutes": "{m}m {ss}s"}


COUNTDOWN = {
    "urgent_ms": URGENT // timedelta(milliseconds=1),
    "soon_ms": SOON // timedelta(milliseconds=1),
    "words": COUNTDOWN_WORDS,
}


def amounts(hold: Hold, sure: bool = False) -> list[str]:
    """The amounts the hold's items carry at their top level (``agent_numbers.amount_keys``), as the agent wrote them
    (``describe.amount_text``); with ``sure``, only those read for certain, so that no other text of the agent's
    comes with them (a push's)."""
    return [
        describe.amount_text(item.data, key)
        for item in hold.items.all()
        for key in amount_keys(item.data)
        if not sure or amount_reading(key, item.data[key]).exact is not None
    ]


def urgency(hold: Hold, now: datetime) -> str:
    """ "urgent" under ``URGENT`` left, "soon" under ``SOON``, else "" (app.js moves a page's bands on, see
    ``COUNTDOWN``)."""
    if hold.expires_at is None:
        return ""
    left = hold.expires_at - now
    return "urgent" if left < URGENT else "soon" if left < SOON else ""
