"""Reviewer and agent statistics over a period, read from the decisions and holds themselves.

A decision counts in the period it was made (``Decision.created_at``), whatever
the platform later did with it. Shares are of items, since one decision may
approve one refund and reject another. Time to decide is ``timing.to_decide``.
"Expired" means, for an agent, its holds that expired undecided in the period
(by their expiry time); for a reviewer, their decisions that reached the
platform too late. Amounts are the items' first amounts (under ``amount``, ``refund_amount``,
``total``, any amount key), summed as decimals: asked is what the agent proposed,
approved what the reviewer let through (the edited amount for an edit, none for
a reject). Currencies are not told apart.

Signs of rubber-stamping, for people's decisions only: the median *look* and the count of
*quick* decisions (both as ``rubberstamping`` defines them), and the approval rate: the
share of decisions that approved every item as the agent asked (an edit or a reject is a
sign the reviewer read it), per reviewer and for the team.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.db.models import Count
from django.db.models.functions import Coalesce

from audit import rubberstamping
from audit.queries import day_start
from holds.models import Decision, DecisionItem, Hold
from people import naming
from reviewqueue import readers
from reviewqueue.agent_numbers import amount_keys, amount_reading

DEFAULT_DAYS = 30
MAX_DAYS = 366


@dataclasses.dataclass(frozen=True)
class Period:
    start: date
    end: date  # inclusive

    @classmethod
    def from_query(cls, query, today: date) -> Period:
        """The period asked for, else the last 30 days; at most a year, and never reversed.

        A value that is not a date raises ``readers.BadValue`` (a 400).
        """
        end = readers.day(query.get("until", ""), "until") or today
        start = readers.day(query.get("since", ""), "since") or end - timedelta(days=DEFAULT_DAYS - 1)
        if start > end:
            start, end = end, start
        return cls(max(start, end - timedelta(days=MAX_DAYS - 1)), end)

    @property
    def bounds(self):
        return day_start(self.start), day_start(self.end + timedelta(days=1))


@dataclasses.dataclass
class Row:
    label: str
    decisions: int = 0
    approve: int = 0
    edit: int = 0
    reject: int = 0
    expired: int = 0
    asked: Decimal = Decimal(0)
    approved: Decimal = Decimal(0)
    seconds: list[float] = dataclasses.field(default_factory=list)
    person: object = None  # the reviewer's user, for rows per reviewer
    by_policy: bool = False
    looks: list[float] = dataclasses.field(default_factory=list)  # seconds from first opening the hold to deciding
    quick: int = 0
    approved_as_asked: int = 0

    @property
    def items(self) -> int:
        return self.approve + self.edit + self.reject

    def share(self, action: str) -> float | None:
        """The action's share of the row's items; None (shown "—") when the row has no item, as 0 % would be a lie."""
        return getattr(self, action) / self.items if self.items else None

    @property
    def approve_share(self) -> float | None:
        return self.share("approve")

    @property
    def edit_share(self) -> float | None:
        return self.share("edit")

    @property
    def reject_share(self) -> float | None:
        return self.share("reject")

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None

    @property
    def median_look_seconds(self) -> float | None:
        return statistics.median(self.looks) if self.looks else None

    @property
    def approval_rate(self) -> float | None:
        return self.approved_as_asked / self.decisions if self.decisions else None

    @property
    def p95_seconds(self) -> float | None:
        """The nearest-rank 95th percentile: the time 95 % of decisions took at most."""
        if not self.seconds:
            return None
        ordered = sorted(self.seconds)
        return ordered[math.ceil(0.95 * len(ordered)) - 1]


@dataclasses.dataclass(frozen=True)
class Statistics:
    period: Period
    reviewers: list[Row]
    agents: list[Row]

    @property
    def people(self) -> list[Row]:
        return [row for row in self.reviewers if not row.by_policy]

    @property
    def team_approval_rate(self) -> float | None:
        """The approval rate of everyone's decisions together (a policy's are not a person's)."""
        decisions = sum(row.decisions for row in self.people)
        return sum(row.approved_as_asked for row in self.people) / decisions if decisions else None


def compute(period: Period) -> Statistics:
    """Three queries whatever the period: decisions, their items, and expired holds per agent."""
    start, end = period.bounds
    decisions = Decision.objects.filter(created_at__gte=start, created_at__lt=end)
    reviewers: dict[int | str, Row] = {}  # by the reviewer's pk, or "policy:NAME"
    agents: dict[str, Row] = defaultdict(lambda: Row(label=""))
    owners: dict[int, tuple[Row, Row]] = {}
    rows = rubberstamping.with_look(decisions).values_list(
        "pk",
        "reviewer_id",
        "decided_by_policy",
        "hold__agent",
        "created_at",
        "hold__first_seen_at",
        "outcome",
        "opened_at",
        "quick",
    )
    for pk, reviewer_id, policy_name, agent, created_at, first_seen_at, outcome, opened_at, quick in rows.iterator(
        chunk_size=5000
    ):
        # A policy's own decisions get a row of their own, beside the people's.
        who = reviewer_id if reviewer_id is not None else f"policy:{policy_name}"
        reviewer = reviewers.setdefault(
            who, Row(label=f"Decided by policy ‘{policy_name}’" if policy_name else "", by_policy=reviewer_id is None)
        )
        by_agent = agents[agent]
        by_agent.label = agent
        owners[pk] = (reviewer, by_agent)
        for row in (reviewer, by_agent):
            row.decisions += 1
            row.seconds.append((created_at - first_seen_at).total_seconds())
        if outcome == Decision.Outcome.EXPIRED:
            reviewer.expired += 1
        if opened_at is not None:
            reviewer.looks.append((created_at - opened_at).total_seconds())
            reviewer.quick += bool(quick)
    items = DecisionItem.objects.filter(decision__in=decisions)
    items = items.values_list("decision_id", "action", "original_data", "data")
    with_items, not_as_asked = set(), set()
    for decision_id, action, original_data, data in items.iterator(chunk_size=5000):
        with_items.add(decision_id)
        if action != DecisionItem.Action.APPROVE:
            not_as_asked.add(decision_id)
        asked, approved = amounts(action, original_data, data)
        for row in owners.get(decision_id, ()):
            setattr(row, action, getattr(row, action) + 1)
            row.asked += asked
            row.approved += approved
    for pk in with_items - not_as_asked:
        if pk in owners:
            owners[pk][0].approved_as_asked += 1
    for agent, count in _expired_holds(start, end):
        agents[agent].label = agent
        agents[agent].expired = count
    _name_reviewers(reviewers)
    return Statistics(period, sorted(reviewers.values(), key=_order), sorted(agents.values(), key=_order))


def _expired_holds(start, end):
    ended = Coalesce("expires_at", "closed_at")
    expired = Hold.objects.filter(status=Hold.Status.EXPIRED).alias(ended=ended).filter(ended__gte=start, ended__lt=end)
    return expired.values_list("agent").annotate(count=Count("pk")).order_by()


def _name_reviewers(reviewers: dict) -> None:
    for user in get_user_model().objects.filter(pk__in=[who for who in reviewers if isinstance(who, int)]):
        reviewers[user.pk].label = naming.name(user)
        reviewers[user.pk].person = user


def _order(row: Row):
    return (-row.decisions, row.label)


def amounts(action: str, original_data, data) -> tuple[Decimal, Decimal]:
    """(asked, approved) for one decided item."""
    asked = amount_of(original_data)
    if action == DecisionItem.Action.APPROVE:
        return asked, asked
    if action == DecisionItem.Action.EDIT:
        return asked, amount_of(data)
    return asked, Decimal(0)


def amount_of(data) -> Decimal:
    """The item's amount, as the agent (or reviewer) wrote it under its first amount key that reads as a number
    (``agent_numbers.amount_keys``, ``amount_reading``; the larger of two readings); 0 when it has none, as no sum can
    count what could be any amount."""
    readings = (amount_reading(key, data[key]).counted for key in amount_keys(data))
    return next((amount for amount in readings if amount is not None), Decimal(0))
