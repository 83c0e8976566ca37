"""Time to a decision: from the agent's ask to the decision, by the channel it came through and by agent.

Each decision made in the statistics page's period is read with its "decision submitted" event,
which names its channel and its policy's target (``target_minutes``, the policy's
``decide_within_minutes`` when it was decided). From the agent's ask (the hold's ``created_at``)
the times run to the hold first mirrored (``first_seen_at``), first opened by anyone before the
decision (``HoldFirstOpened``), decided (the decision's ``created_at``) and delivered
(``finished_at``, for a decision the platform applied). Percentiles are nearest-rank, as the
other statistics'. A decision is *late* when it came after its target. One query whatever the
period; the rows are read in chunks.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import defaultdict

from django.db.models import OuterRef, Subquery

from audit import charts, timing
from audit.models import AuditEvent, EventKind
from holds.models import Decision, DecisionChannel, HoldFirstOpened

UNKNOWN_CHANNEL = DecisionChannel.PAGE  # events recorded before they named a channel came from the hold page
TIMES = [charts.Series("p50", "median"), charts.Series("p90", "p95"), charts.Series("p99", "reject")]


def _rank(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile: the time ``share`` of the values are at most."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(share * len(ordered)) - 1, 0)]


@dataclasses.dataclass
class Row:
    """One channel's or one agent's decisions: the seconds from the ask to each step, and how many were late."""

    label: str
    decided: list[float] = dataclasses.field(default_factory=list)
    mirrored: list[float] = dataclasses.field(default_factory=list)
    opened: list[float] = dataclasses.field(default_factory=list)
    delivered: list[float] = dataclasses.field(default_factory=list)
    late: int = 0

    @property
    def count(self) -> int:
        return len(self.decided)

    @property
    def p50(self) -> float | None:
        return _rank(self.decided, 0.5)

    @property
    def p90(self) -> float | None:
        return _rank(self.decided, 0.9)

    @property
    def p99(self) -> float | None:
        return _rank(self.decided, 0.99)

    @property
    def median_mirrored(self) -> float | None:
        return statistics.median(self.mirrored) if self.mirrored else None

    @property
    def median_opened(self) -> float | None:
        return statistics.median(self.opened) if self.opened else None

    @property
    def median_delivered(self) -> float | None:
        return statistics.median(self.delivered) if self.delivered else None


@dataclasses.dataclass(frozen=True)
class DecisionTimes:
    channels: list[Row]
    agents: list[Row]

    @property
    def late(self) -> int:
        return sum(row.late for row in self.channels)

    @property
    def count(self) -> int:
        return sum(row.count for row in self.channels)

    def chart(self) -> charts.Chart:
        rows = [(row.label, [row.p50, row.p90, row.p99]) for row in self.channels]
        return charts.grouped("Time to a decision per channel", TIMES, rows, timing.humanize)


def channel_label(channel) -> str:
    """How the page names a channel: "email link", "Slack link", "remembered approval"…"""
    return DecisionChannel(channel).label if channel in DecisionChannel.values else str(channel)


def compute(period) -> DecisionTimes:
    """The time to a decision of the decisions made in ``period`` (``stats.Period``)."""
    start, end = period.bounds
    first_opened = HoldFirstOpened.objects.filter(
        hold=OuterRef("decision__hold"), opened_at__lte=OuterRef("decision__created_at")
    ).order_by("opened_at")
    rows = (
        AuditEvent.objects.filter(kind=EventKind.DECISION_SUBMITTED, at__gte=start, at__lt=end, decision__isnull=False)
        .annotate(opened=Subquery(first_opened.values("opened_at")[:1]))
        .order_by()
        .values_list(
            "payload__channel",
            "payload__target_minutes",
            "decision__hold__agent",
            "decision__hold__created_at",
            "decision__hold__first_seen_at",
            "decision__created_at",
            "decision__finished_at",
            "decision__state",
            "opened",
        )
    )
    channels: dict[str, Row] = {}
    agents: dict[str, Row] = defaultdict(lambda: Row(""))
    for channel, target, agent, asked, mirrored, decided, finished, state, opened in rows.iterator(chunk_size=5000):
        channel = channel if isinstance(channel, str) and channel else UNKNOWN_CHANNEL
        by_channel = channels.setdefault(channel, Row(channel_label(channel)))
        by_agent = agents[agent]
        by_agent.label = agent
        seconds = (decided - asked).total_seconds()
        late = isinstance(target, int) and target > 0 and seconds > target * 60
        for row in (by_channel, by_agent):
            row.decided.append(seconds)
            row.mirrored.append((mirrored - asked).total_seconds())
            if opened is not None:
                row.opened.append((opened - asked).total_seconds())
            if state == Decision.State.APPLIED and finished is not None:
                row.delivered.append((finished - asked).total_seconds())
            row.late += late
    order = {channel: position for position, channel in enumerate(DecisionChannel.values)}
    ordered = sorted(channels.items(), key=lambda found: (order.get(found[0], len(order)), found[0]))
    return DecisionTimes([row for _, row in ordered], sorted(agents.values(), key=lambda row: (-row.count, row.label)))
