"""The one rule of deciding a possible duplicate: whether approving a hold needs a person who checked its possible
duplicates (``holds.related.duplicates.possible_duplicates``), and the words why.

``guard`` reads a hold's possible duplicates, every one, seen or not. ``Guard.stops`` says whether a decision's
choices approve (or edit) an item that may duplicate another hold's: a reject never does. ``Guard.seen_by`` splits
the duplicates into the ids a viewer may see and how many more there are outside their teams (counted, never named),
and ``Guard.words`` says so: "possible duplicate of h_13, h_14 and 1 more outside your teams". ``Guard.covered``
says whether what a person said they checked (``duplicates_checked``: the ids, None for no confirmation at all)
covers every duplicate they may see.

Every deciding path asks it: ``holds.deciding.decisions.submit`` refuses an approval that is not covered
(``decisions.PossibleDuplicate``), so the page's summary, bulk, one-tap links, Slack and the API all wait for a
person's confirmation; the policies' own approvals (0 people, remembered approvals, a default approve) never approve
one (``holds.deciding.by_policy``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from holds.models import DecisionItem, Hold
from holds.related.duplicates import Duplicate, possible_duplicates
from reviewqueue.viewer import Viewer
from teams import scopes

APPROVING = (DecisionItem.Action.APPROVE, DecisionItem.Action.EDIT)


@dataclasses.dataclass(frozen=True)
class Seen:
    """A guard's duplicates as one viewer may see them: the ids named (sorted), and how many more there are."""

    named: tuple[str, ...]
    more: int

    def words(self, outside: str = "outside your teams") -> str:
        """ "possible duplicate of h_13, h_14 and 2 more outside your teams", "… of another hold" when none is named."""
        if not self.named and not self.more:
            return ""
        if not self.named:
            return (
                "possible duplicate of another hold"
                if self.more == 1
                else f"possible duplicate of {self.more} other holds"
            )
        more = f" and {self.more} more {outside}" if self.more else ""
        return f"possible duplicate of {', '.join(self.named)}{more}"


@dataclasses.dataclass(frozen=True)
class Guard:
    """A hold's possible duplicates (``duplicates``, every one) and its items that may duplicate them."""

    hold: Hold
    duplicates: tuple[Duplicate, ...]

    @property
    def needed(self) -> bool:
        """Whether approving the hold as a whole needs a person's confirmation."""
        return bool(self.duplicates)

    @property
    def positions(self) -> frozenset[int]:
        """The hold's items that may be duplicates."""
        return frozenset().union(*(duplicate.positions for duplicate in self.duplicates))

    @property
    def hold_ids(self) -> tuple[str, ...]:
        """Every duplicate's id, each once, sorted."""
        return tuple(sorted({duplicate.hold.hold_id for duplicate in self.duplicates}))

    def stops(self, choices: Iterable) -> bool:
        """Whether ``choices`` (``ItemChoice``s, one per item in the hold's order, or actions as text) approve or edit
        an item that may be a duplicate."""
        if not self.duplicates:
            return False
        positions = {item.item_id: item.position for item in self.hold.items.all()}
        for index, choice in enumerate(choices):
            action = choice if isinstance(choice, str) else choice.action
            position = index if isinstance(choice, str) else positions.get(choice.item_id, index)
            if action in APPROVING and position in self.positions:
                return True
        return False

    def seen_by(self, viewer: Viewer | None) -> Seen:
        """The ids ``viewer`` may see, and how many others there are (None: every one is named, for the audit)."""
        named: dict[str, None] = {}
        hidden: set[int] = set()
        for duplicate in self.duplicates:
            if viewer is None or scopes.may_see(viewer, duplicate.hold):
                named[duplicate.hold.hold_id] = None
            else:
                hidden.add(duplicate.hold.pk)
        return Seen(tuple(sorted(named)), len(hidden))

    def seen_by_its_readers(self) -> Seen:
        """The duplicates named to whoever may see the hold itself (a channel's message, bound to nobody): those of
        the same env, agent and capability, which every team scope admitting the hold admits too; the rest
        counted."""
        named: dict[str, None] = {}
        hidden: set[int] = set()
        own = (self.hold.env, self.hold.agent, self.hold.capability)
        for duplicate in self.duplicates:
            other = duplicate.hold
            if (other.env, other.agent, other.capability) == own:
                named[other.hold_id] = None
            else:
                hidden.add(other.pk)
        return Seen(tuple(sorted(named)), len(hidden))

    def words(self, viewer: Viewer | None = None) -> str:
        """Why the hold needs a person, for ``viewer``: "possible duplicate of h_13, h_14"."""
        return self.seen_by(viewer).words()

    def covered(self, viewer: Viewer, checked: Iterable[str] | None) -> bool:
        """Whether ``checked`` (the ids a person said they checked; None when they confirmed nothing) covers every
        duplicate ``viewer`` may see."""
        if checked is None:
            return not self.needed
        return set(self.seen_by(viewer).named) <= set(checked)


def guard(hold: Hold, *, now: datetime | None = None) -> Guard:
    """``hold``'s guard: its possible duplicates, every one, whoever may see them."""
    return Guard(hold, tuple(possible_duplicates(hold, now=now)))


def needs_person(hold: Hold, choices: Iterable, *, now: datetime | None = None) -> Guard | None:
    """The hold's guard when ``choices`` approve an item that may be a duplicate, else None."""
    found = guard(hold, now=now)
    return found if found.stops(choices) else None
