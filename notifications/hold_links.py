"""What a message offers and says about one hold that only the holds app knows: its links and its amounts.

Notifications is a lower layer than holds, so it cannot import the one-tap links' rules
(``holds.links.action_links``) nor how an item's amount reads with its currency
(``holds.deciding.describe``); the holds app registers both here when it is ready, and
messages ask through ``links_for`` and ``amounts_of``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime


@dataclasses.dataclass(frozen=True)
class ActionLinks:
    """What a message offers for one hold: ``open`` always; ``approve`` and ``reject`` when the hold can take them
    (``approve`` opens the hold's page where approving it asks for a confirmation: a possible duplicate); and a
    ``warning`` the message shows beside them ("Possible duplicate of h_13"), blank for none."""

    open: str
    approve: str | None = None
    reject: str | None = None
    warning: str = ""


Maker = Callable[..., list[ActionLinks]]
_makers: list[Maker] = []
Describer = Callable[..., list[str]]
_describers: list[Describer] = []


def register(maker: Maker) -> None:
    """Make ``maker(hold, recipients, now, for_push=False)`` the one that builds a hold's links for each recipient (the
    holds app's, at start-up)."""
    _makers[:] = [maker]


def links_for(hold, recipient, now: datetime) -> ActionLinks:
    """``hold``'s links for ``recipient`` (an email's; None for a channel message, bound to nobody) at ``now``."""
    return links_for_many(hold, [recipient], now)[0]


def links_for_many(hold, recipients: list, now: datetime, for_push: bool = False) -> list[ActionLinks]:
    """``links_for`` for each of ``recipients``, in their order, what they share read once; ``for_push``: a push's,
    whose decisions count as made through push."""
    if not _makers:
        raise RuntimeError("no app registered the links of holds: is holds in INSTALLED_APPS?")
    return _makers[0](hold, recipients, now, for_push=for_push)


def register_amounts(describer: Describer) -> None:
    """Make ``describer(hold, sure=False)`` the one that lists the amounts of holds as people read them (the holds
    app's)."""
    _describers[:] = [describer]


def amounts_of(hold, sure: bool = False) -> list[str]:
    """The amounts ``hold``'s items carry, each with its currency where the item names one ("49.90 USD"); with
    ``sure``, only those read for certain (an amount that is not shows the agent's text as written)."""
    if not _describers:
        raise RuntimeError("no app registered the amounts of holds: is holds in INSTALLED_APPS?")
    return _describers[0](hold, sure=sure)


@dataclasses.dataclass(frozen=True)
class ChatButtons:
    """The values of a Slack message's interactive Approve and Reject buttons for one hold (the Slack app's signed
    tokens), pressed inside Slack instead of opening a link; None where the hold cannot take that action."""

    approve: str | None = None
    reject: str | None = None
    undo: str | None = None  # in the undo window of a decision made in Slack


ButtonMaker = Callable[..., ChatButtons | None]
_button_makers: list[ButtonMaker] = []


def register_buttons(maker: ButtonMaker) -> None:
    """Make ``maker(hold, now)`` the one that builds a hold's interactive buttons (the Slack app's, at start-up): it
    answers None while the Slack app is off."""
    _button_makers[:] = [maker]


def buttons_for(hold, now: datetime) -> ChatButtons | None:
    """``hold``'s interactive buttons for a Slack message; None without a Slack app: the message keeps URL buttons."""
    return _button_makers[0](hold, now) if _button_makers else None
