"""The words for an approval: who approved, and what they changed or rejected."""

from __future__ import annotations

from approvals.models import Approval
from holds.models import DecisionItem
from reviewqueue.agent_json import ABSENT, top_level_changes
from reviewqueue.agent_numbers import grouped
from reviewqueue.showing import display


def approval_words(approval: Approval) -> str:
    """ "alice approved 1,200.00 → 1,000.00": who, and what they changed or rejected."""
    edits, rejected = [], []
    for item in approval.items:
        if item.get("action") == DecisionItem.Action.REJECT:
            rejected.append(str(item.get("item_id")))
        elif item.get("action") == DecisionItem.Action.EDIT:
            edits.extend(_changes(item.get("original_data"), item.get("data")))
    words = f"{approval.approver.get_username()} approved"
    if len(edits) == 1:
        words += f" {edits[0][1]}"
    elif edits:
        words += " " + ", ".join(f"{key} {change}" for key, change in edits)
    if rejected:
        words += f", rejected {', '.join(rejected)}"
    return words


def _changes(original, edited) -> list[tuple[str, str]]:
    """Each changed top-level value of an item's data (``agent_json.top_level_changes``), as (key, "before → after");
    data that are not objects under the key "value"."""
    return [
        (str(key) if key != "" else "value", f"{_shown(before)} → {_shown(after)}")
        for key, before, after in top_level_changes(original, edited)
    ]


def _shown(value) -> str:
    return grouped(value) or ("(absent)" if value is None or value is ABSENT else display(value))
