"""Each decided item's original data against the data decided, key by key, for the decision page.

An approved item is sent as the agent proposed it, an edited one with the
reviewer's full data, and a rejected one with nothing: the agent does not act,
so a rejected item lists its original data with nothing decided beside it.
"""

from __future__ import annotations

import dataclasses

from holds.models import DecisionItem
from reviewqueue.agent_json import same_json, top_level_pairs
from reviewqueue.showing import display


@dataclasses.dataclass(frozen=True)
class Line:
    key: str
    before: str
    after: str
    changed: bool


@dataclasses.dataclass(frozen=True)
class ItemDiff:
    item: DecisionItem
    rejected: bool
    lines: list[Line]

    @property
    def changed(self) -> int:
        return sum(line.changed for line in self.lines)


def item_diff(item: DecisionItem) -> ItemDiff:
    rejected = item.action == DecisionItem.Action.REJECT
    original = item.original_data
    decided = item.data if item.action == DecisionItem.Action.EDIT else original
    pairs = top_level_pairs(original, decided)
    return ItemDiff(item, rejected, [_line(key, before, after, rejected) for key, before, after in pairs])


def _line(key: str, before, after, rejected: bool) -> Line:
    return Line(
        key=display(key) if key else "(value)",
        before=display(before),
        after="" if rejected else display(after),
        changed=not rejected and not same_json(before, after),
    )
