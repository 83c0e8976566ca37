"""The links a message offers for one hold, as the holds app makes them.

Notifications is a lower layer than holds, so it cannot import the one-tap links' rules
(``holds.action_links``); the holds app registers its maker here when it is ready, and
messages ask for links through ``links_for``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime


@dataclasses.dataclass(frozen=True)
class ActionLinks:
    """What a message offers for one hold: ``open`` always; ``approve`` and ``reject`` when the hold can take them."""

    open: str
    approve: str | None = None
    reject: str | None = None


Maker = Callable[..., ActionLinks]
_makers: list[Maker] = []


def register(maker: Maker) -> None:
    """Make ``maker(hold, recipient, now)`` the one that builds a hold's links (the holds app's, at start-up)."""
    _makers[:] = [maker]


def links_for(hold, recipient, now: datetime) -> ActionLinks:
    """``hold``'s links for ``recipient`` (an email's; None for a channel message, bound to nobody) at ``now``."""
    if not _makers:
        raise RuntimeError("no app registered the links of holds: is holds in INSTALLED_APPS?")
    return _makers[0](hold, recipient, now)
