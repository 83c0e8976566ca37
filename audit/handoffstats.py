"""Hand-offs between reviewers as they stand now: open holds assigned per assignee, the oldest open assignment,
and how many notes the open holds carry.

The statistics page and ``/metrics`` both read ``current()``, so the two never count differently. An assignment
counts while it is current (``ended_at`` empty) and its hold still open: a decision or an expiry ends it by the
hold's state (see ``holds.handover.assignments``). Notes count on open holds only, each open hold once, with or without
notes. These figures are of now, whatever period the page shows, and, like every audit page, not scoped.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Count, Min

from holds.models import Assignment, Hold, Note

# How notes per open hold are grouped: the page's bands and the Prometheus histogram's upper bounds.
NOTE_BOUNDS = (0, 1, 2, 5, 10)


@dataclasses.dataclass(frozen=True)
class Assigned:
    """Open holds assigned to one person or one group."""

    assignee: object  # a User or a Group
    holds: int

    @property
    def is_group(self) -> bool:
        return isinstance(self.assignee, Group)

    @property
    def label(self) -> str:
        """The username or the group's name: what ``/metrics`` labels a series with."""
        return self.assignee.name if self.is_group else self.assignee.get_username()


@dataclasses.dataclass(frozen=True)
class NoteBand:
    """Open holds with between ``low`` and ``high`` notes (``high`` None: no upper bound)."""

    low: int
    high: int | None
    holds: int

    @property
    def words(self) -> str:
        if self.high is None:
            return f"more than {self.low - 1}"
        return str(self.low) if self.low == self.high else f"{self.low}–{self.high}"


@dataclasses.dataclass(frozen=True)
class Handoffs:
    assigned: list[Assigned]  # most holds first, then by label
    oldest_assigned_at: datetime | None
    notes_per_hold: Counter  # notes on a hold → how many open holds have that many

    def oldest_age_seconds(self, now: datetime) -> float:
        """The oldest open assignment's age (0 with none)."""
        return max((now - self.oldest_assigned_at).total_seconds(), 0.0) if self.oldest_assigned_at else 0.0

    @property
    def open_holds(self) -> int:
        return sum(self.notes_per_hold.values())

    @property
    def notes(self) -> int:
        return sum(notes * holds for notes, holds in self.notes_per_hold.items())

    @property
    def mean_notes(self) -> float | None:
        return self.notes / self.open_holds if self.open_holds else None

    def holds_with_at_most(self, bound: int) -> int:
        return sum(holds for notes, holds in self.notes_per_hold.items() if notes <= bound)

    def note_bands(self) -> list[NoteBand]:
        """Open holds by their notes, in ``NOTE_BOUNDS``' bands and one past the last."""
        bands, low = [], 0
        for bound in NOTE_BOUNDS:
            holds = sum(n for notes, n in self.notes_per_hold.items() if low <= notes <= bound)
            bands.append(NoteBand(low, bound, holds))
            low = bound + 1
        bands.append(NoteBand(low, None, sum(n for notes, n in self.notes_per_hold.items() if notes >= low)))
        return bands


def current() -> Handoffs:
    """The figures now: six queries at most, whatever the numbers of holds, assignees and notes."""
    open_assignments = Assignment.objects.filter(ended_at__isnull=True, hold__status=Hold.Status.OPEN)
    by_assignee = list(open_assignments.values_list("user", "group").annotate(n=Count("*")).order_by())
    users = get_user_model().objects.in_bulk([user for user, _, _ in by_assignee if user is not None])
    groups = Group.objects.in_bulk([group for _, group, _ in by_assignee if group is not None])
    assigned = sorted(
        (Assigned(users[user] if user is not None else groups[group], n) for user, group, n in by_assignee),
        key=lambda row: (-row.holds, row.label),
    )
    oldest = open_assignments.aggregate(oldest=Min("assigned_at"))["oldest"]

    open_count = Hold.objects.filter(status=Hold.Status.OPEN).count()
    per_hold = Counter(
        Note.objects.filter(hold__status=Hold.Status.OPEN)
        .values("hold")
        .annotate(n=Count("*"))
        .order_by()
        .values_list("n", flat=True)
    )
    per_hold[0] += open_count - per_hold.total()
    return Handoffs(assigned, oldest, +per_hold)  # + drops a band emptied by a hold closing between the counts
