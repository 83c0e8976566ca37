"""The run's story: the holds a run asked before this one, each with what was decided here and what the platform
reported after the run resumed.

A run that asks again after a decision (LlamaIndex's refund loop, an agent retrying after a timeout) is read as one
story on the hold page, beside the customer's message it started from. The holds come from the mirror, narrowed to
the viewer's team scopes like every other list of holds.
"""

from __future__ import annotations

import dataclasses

from django.db.models import Prefetch

from holds.deciding.deciders import decider_name
from holds.models import ACTION_WORDS, Decision, Hold
from reviewqueue.viewer import Viewer
from teams import scopes

MOST_SHOWN = 20  # the earliest holds of a very long run stay on the audit's timeline


@dataclasses.dataclass(frozen=True)
class EarlierHold:
    """A hold the run asked before: ``decision``, the last one made here (None: decided elsewhere, expired, or still
    open), and who made it."""

    hold: Hold
    decision: Decision | None

    @property
    def decided_here_by(self) -> str:
        return decider_name(self.decision) if self.decision else ""

    @property
    def actions(self) -> str:
        """What the decision made here did to the items, in the form's words: "Approve", "Reject" or, for a hold
        decided item by item, "Approve 1 · Reject 1"."""
        counts: dict[str, int] = {}
        for item in self.decision.items.all() if self.decision else ():
            counts[item.action] = counts.get(item.action, 0) + 1
        if len(counts) == 1:
            return ACTION_WORDS[next(iter(counts))]
        return " · ".join(f"{ACTION_WORDS[action]} {count}" for action, count in counts.items())


def earlier_in_run(hold: Hold, viewer: Viewer) -> tuple[list[EarlierHold], int]:
    """The holds of ``hold``'s run asked before it that ``viewer`` may see, oldest first, at most ``MOST_SHOWN`` (the
    latest of them), and how many earlier ones were left out."""
    earlier = scopes.visible(
        Hold.objects.filter(env=hold.env, run_id=hold.run_id, created_at__lte=hold.created_at).exclude(pk=hold.pk),
        viewer,
    )
    latest_first = list(
        earlier.order_by("-created_at", "-pk").prefetch_related(
            "items",
            Prefetch(
                "decisions",
                queryset=Decision.objects.select_related("reviewer")
                .prefetch_related("items")
                .order_by("-created_at", "-pk"),
                to_attr="decisions_newest_first",
            ),
        )[: MOST_SHOWN + 1]
    )
    left_out = 0
    if len(latest_first) > MOST_SHOWN:
        left_out = earlier.count() - MOST_SHOWN
        latest_first = latest_first[:MOST_SHOWN]
    shown = [EarlierHold(one, next(iter(one.decisions_newest_first), None)) for one in reversed(latest_first)]
    return shown, left_out
