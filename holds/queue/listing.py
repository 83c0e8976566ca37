"""What the reviewers' queue shows, in the order they should work through it.

Open holds, soonest expiry first (holds that never expire last), then oldest;
or, as the reviewer picks, oldest first or largest amount first (holds without
an amount last, holds with an unreadable one first: see holds/mirror/amounts.py). Pages are keyset-paginated on the
order, so a page costs the same however deep it is and holds arriving meanwhile do not shift the rows
under a reviewer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from django.core.exceptions import EmptyResultSet
from django.db.models import Expression, F, Q, QuerySet
from django.utils import timezone

from approvals import rounds
from holds.handover import assignments
from holds.models import Hold
from holds.related import duplicates
from reviewqueue import processcache, readers
from reviewqueue.sql import compiled, expressions, prepared
from reviewqueue.sql.expressions import RowSQL
from reviewqueue.viewer import Viewer
from teams import scopes

PAGE_SIZE = 50
EXPIRING_WITHIN = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "4h": timedelta(hours=4),
    "24h": timedelta(days=1),
}
# How a page's live countdown words the time left, by its largest unit: "2d 3h", "2h 05m", "4m 09s" ({mm} and {ss}
# are the minutes and seconds in two digits).
# What app.js needs to keep the countdowns and their urgency bands (``urgency``) current: the page carries it
# (base.html's "countdown-rules"), so that the browser keeps no copy of these rules.
CLAIM_CHOICES = ("mine", "unclaimed")
APPROVAL_CHOICES = ("mine",)  # "mine": holds whose open round of approvals the reviewer may join
ASSIGNED_CHOICES = ("me",)  # "me": holds assigned to the reviewer or to one of their groups
DUPLICATE_CHOICES = ("possible",)  # "possible": possible duplicates (holds/related/duplicates.py)


def _no_key(value: str, name: str) -> None:
    """The cursor's key of an order by age alone, which has none."""
    if value:
        raise readers.BadValue(name, "is not a page link made by this app")


def _amount(value: str, name: str) -> Decimal | None:
    """An amount of the size the ``Hold.amount`` column holds."""
    field = Hold._meta.get_field("amount")
    return readers.decimal(value, name, field.max_digits, field.decimal_places)


def _order_named(sort: str) -> Callable[[str, str], str]:
    """Reads a cursor's first part, the order it was made for, which must be ``sort`` (read first, before the key)."""

    def read(value: str, name: str) -> str:
        if value != sort:
            raise readers.BadValue(name, "is a page link for another order of the queue")
        return value

    return read


@dataclasses.dataclass(frozen=True)
class Order:
    """One order of the queue: by a column, ascending or largest first, with NULLs last; then oldest first, then id."""

    label: str
    caption: str
    field: str | None  # the column the order leads with; None orders by age alone
    read_key: Callable[[str, str], Any]  # reads the field's value back from a page cursor
    largest_first: bool = False

    def keys(self) -> list:
        leading = []
        if self.field:
            # Largest first is the negated value ascending: Postgres' default NULLS LAST for
            # ascending index columns then serves it (see the "hold_queue_largest" index).
            key: Expression = negated(self.field) if self.largest_first else F(self.field)
            leading = [key.asc(nulls_last=True)]
        return [*leading, F("created_at").asc(), "id"]

    def after(self, key, created_at: datetime, pk: int) -> Q:
        """The holds that come after the one with this key, creation time and id."""
        later_in_same_key = Q(created_at__gt=created_at) | Q(created_at=created_at, pk__gt=pk)
        if not self.field:
            return later_in_same_key
        if key is None:
            return Q(**{f"{self.field}__isnull": True}) & later_in_same_key
        beyond = "lt" if self.largest_first else "gt"
        return (
            Q(**{f"{self.field}__{beyond}": key})
            | Q(**{self.field: key}) & later_in_same_key
            | Q(**{f"{self.field}__isnull": True})
        )


def negated(field: str) -> RowSQL:
    """The hold's ``field`` times -1, as the "largest first" index's expression is written (reviewqueue/sql/)."""
    return expressions.negated(Hold, field)


ORDERS = {
    "expiry": Order("Expiry (soonest first)", "soonest expiry first", "expires_at", readers.moment),
    "age": Order("Age (oldest first)", "oldest first", None, _no_key),
    "amount": Order("Amount (largest first)", "largest amount first", "amount", _amount, largest_first=True),
}
DEFAULT_SORT = "expiry"


@dataclasses.dataclass(frozen=True)
class Filters:
    agent: str = ""
    capability: str = ""
    env: str = ""
    expiring: str = ""
    claim: str = ""  # one of CLAIM_CHOICES
    approval: str = ""  # one of APPROVAL_CHOICES
    assigned: str = ""  # one of ASSIGNED_CHOICES
    duplicates: str = ""  # one of DUPLICATE_CHOICES
    q: str = ""
    hold_id: str = ""  # the platform's id of one hold (the API's filter; the page links to holds by ours)
    min_amount: Decimal | None = None  # a range over a hold's largest amount, both ends included
    max_amount: Decimal | None = None
    sort: str = DEFAULT_SORT  # one of ORDERS: an order, not a filter

    @classmethod
    def from_query(cls, query) -> Filters:
        """Read the filters from a query string; a value that cannot be one raises ``readers.BadValue`` (a 400)."""
        return cls(
            agent=readers.text(query.get("agent", ""), "agent"),
            capability=readers.text(query.get("capability", ""), "capability"),
            env=readers.text(query.get("env", ""), "env"),
            expiring=readers.choice(query.get("expiring", ""), "expiring", EXPIRING_WITHIN),
            claim=readers.choice(query.get("claim", ""), "claim", CLAIM_CHOICES),
            approval=readers.choice(query.get("approval", ""), "approval", APPROVAL_CHOICES),
            assigned=readers.choice(query.get("assigned", ""), "assigned", ASSIGNED_CHOICES),
            duplicates=readers.choice(query.get("duplicates", ""), "duplicates", DUPLICATE_CHOICES),
            q=readers.text(query.get("q", ""), "q"),
            hold_id=readers.text(query.get("hold_id", ""), "hold_id"),
            min_amount=_amount(query.get("min_amount", ""), "min_amount"),
            max_amount=_amount(query.get("max_amount", ""), "max_amount"),
            sort=readers.choice(query.get("sort", ""), "sort", ORDERS) or DEFAULT_SORT,
        )

    @property
    def active(self) -> bool:
        """Whether any filter narrows the queue (an order alone does not)."""
        return bool(self.active_count)

    @property
    def active_count(self) -> int:
        """How many filters narrow the queue (an order is not one), as the folded filter form says."""
        return sum(value not in ("", None) for value in dataclasses.astuple(dataclasses.replace(self, sort="")))

    @property
    def order(self) -> Order:
        return ORDERS[self.sort]


def ordered(queryset: QuerySet[Hold], sort: str = DEFAULT_SORT) -> QuerySet[Hold]:
    return queryset.order_by(*ORDERS[sort].keys())


def open_holds(now: datetime | None = None) -> QuerySet[Hold]:
    """The waiting holds (``HoldQuerySet.waiting``), in the queue's order."""
    return ordered(Hold.objects.waiting(now or timezone.now()))


def filtered(filters: Filters, viewer: Viewer | None, now: datetime) -> QuerySet[Hold]:
    """The open holds in ``viewer``'s team scopes that pass ``filters``: the queue, its search and its new-holds count.

    Rows of ``Listed``'s columns, not model instances (see ``_listing_columns``): for ``page`` and counting.

    ``viewer`` None reads every open hold, as no reviewer does: for query plans and benchmarks.
    """
    holds, user = _waiting_in(_seen_by(viewer), now), viewer.user if viewer else None
    if filters.agent:
        holds = holds.filter(agent=filters.agent)
    if filters.capability:
        holds = holds.filter(capability=filters.capability)
    if filters.env:
        holds = holds.filter(env=filters.env)
    if filters.expiring:
        holds = holds.filter(expires_at__lte=now + EXPIRING_WITHIN[filters.expiring])
    if filters.claim == "mine":
        holds = holds.filter(claimed_by=user, claim_expires_at__gt=now)
    elif filters.claim == "unclaimed":
        holds = holds.filter(Q(claimed_by__isnull=True) | Q(claim_expires_at__lte=now))
    if filters.approval == "mine":
        holds = rounds.joinable_by(user, holds)
    if filters.assigned == "me":
        holds = holds.filter(assignments.assigned_to(viewer))
    if filters.duplicates == "possible":
        holds = holds.filter(duplicates.flagged_q(viewer, now))
    if filters.q:
        holds = holds.filter(search_text__contains=filters.q.lower())
    if filters.hold_id:
        holds = holds.filter(hold_id=filters.hold_id)
    if filters.sort == "amount":
        # Bounds on the negated amount, the "largest first" index's own expression, let it seek
        # to the range: bounds on the amount would have it read every larger amount first.
        holds = holds.alias(negated_amount=negated("amount"))
        if filters.min_amount is not None:
            holds = holds.filter(negated_amount__lte=-filters.min_amount)
        if filters.max_amount is not None:
            holds = holds.filter(negated_amount__gte=-filters.max_amount)
        return holds
    if filters.min_amount is not None:
        holds = holds.filter(amount__gte=filters.min_amount)
    if filters.max_amount is not None:
        holds = holds.filter(amount__lte=filters.max_amount)
    return holds


def page(filters: Filters, viewer: Viewer | None, now: datetime, after: str) -> tuple[list[Listed], str]:
    """One page of the holds ``filtered`` by ``filters`` for ``viewer`` at ``now``, in their order, after the cursor
    ``after``; and the cursor of the next page ("" at the end).

    A cursor names its order; one this app did not make, or made for another order, raises ``readers.BadValue`` (a 400).

    The unfiltered queue, which nearly every request and refresh reads, is compiled once a process for each order and
    team scope (reviewqueue/sql/compiled.py) and runs as a prepared statement (reviewqueue/sql/prepared.py): one plan
    serves it at any time and cursor. A filter's values, a search's above all, may each want a plan of their own, so
    a filtered page is built and planned afresh.
    """
    sort = filters.sort
    order = ORDERS[sort]
    parts = (_order_named(sort), order.read_key, readers.moment, readers.identifier)
    position = readers.cursor(after, "after", parts, optional={1})
    key, created_at, pk = position[1:] if position else (None, None, None)
    if filters.active or not prepared.preparing():
        rows = list(_page_of(filtered(filters, viewer, now), sort, key, created_at, pk))
    else:
        try:
            query = compiled.sql(
                _unfiltered_page, (sort, _seen_by(viewer)), now=now, key=key, created_at=created_at, pk=pk
            )
            rows = prepared.read(query)
        except EmptyResultSet:  # a viewer who may see no hold (signed out, or inactive: an API token's owner, say)
            rows = []
    listed = [Listed(*values) for values in rows]
    if len(listed) <= PAGE_SIZE:
        return listed, ""
    listed = listed[:PAGE_SIZE]
    return listed, cursor_of(listed[-1], sort)


def _unfiltered_page(sort: str, seen: tuple | None, *, now: datetime, key, created_at, pk) -> QuerySet:
    """``page``'s query of the unfiltered queue for a viewer with the team scopes ``seen``."""
    return _page_of(_waiting_in(seen, now), sort, key, created_at, pk)


def _page_of(holds: QuerySet, sort: str, key, created_at: datetime | None, pk: int | None) -> QuerySet:
    """A page of ``holds`` in the order ``sort``, after the hold with this key, creation time and id (none: the
    first page), and the first hold of the next page if there is one."""
    if created_at is not None:
        holds = holds.filter(ORDERS[sort].after(key, created_at, pk))
    return ordered(holds, sort)[: PAGE_SIZE + 1]


def _seen_by(viewer: Viewer | None) -> tuple | None:
    """The team scopes of ``viewer``'s holds; None, every hold, for no viewer (``filtered``'s plans and benches)."""
    return viewer.scopes if viewer else None


def _waiting_in(seen: tuple | None, now: datetime) -> QuerySet:
    """The waiting holds as the queue lists them, in the team scopes ``seen`` (None: every hold)."""
    return scopes.within(_listing().waiting(now), seen)


def new_count_query(filters: Filters, viewer: Viewer | None, now: datetime, loaded_at: datetime) -> tuple[str, tuple]:
    """The SQL of how many of the holds ``filtered`` by ``filters`` were first seen after ``loaded_at``: one scalar,
    for the queue's refresh to say how many arrived since the reviewer opened it. Compiled once a process for the
    unfiltered queue, as ``page``'s query is; a filtered one is built afresh (and should not be prepared)."""
    if filters.active:
        return _counted(filtered(filters, viewer, now), loaded_at).query.sql_with_params()
    return compiled.sql(_new_in_unfiltered, (_seen_by(viewer),), now=now, loaded_at=loaded_at)


def _new_in_unfiltered(seen: tuple | None, *, now: datetime, loaded_at: datetime) -> QuerySet:
    return _counted(_waiting_in(seen, now), loaded_at)


def _counted(holds: QuerySet, loaded_at: datetime) -> QuerySet:
    """How many of ``holds`` were first seen after ``loaded_at``, as one scalar query."""
    return expressions.count_of(holds.filter(first_seen_at__gt=loaded_at))


@dataclasses.dataclass(slots=True)
class Listed:
    """A hold as a queue page lists it: what a row's cache key names, its approval badge needs and the cursor reads."""

    COLUMNS: ClassVar = (
        "pk",
        "hold_id",
        "env",
        "agent",
        "capability",
        "payload_digest",
        "created_at",
        "expires_at",
        "first_seen_at",
        "amount",
        "claimed_by_id",
        "claim_expires_at",
        "claimed_by__username",
        "claimed_by__first_name",
        "claimed_by__last_name",
        "claimed_by__email",
        "open_approvals",
        "assigned_to",
    )

    pk: int
    hold_id: str
    env: str
    agent: str
    capability: str
    payload_digest: str
    created_at: datetime
    expires_at: datetime | None
    first_seen_at: datetime
    amount: Decimal | None
    claimed_by_id: int | None
    claim_expires_at: datetime | None
    claimant_username: str | None
    claimant_first_name: str | None
    claimant_last_name: str | None
    claimant_email: str | None
    open_approvals: int  # how many approvals the hold's open round has
    assigned_to: str  # the current assignee's name ("" for nobody: ``assignments.current_label``)


@processcache.cached
def _listing_columns() -> QuerySet[Hold]:
    """All holds as the queue lists them: ``Listed``'s columns, built once a process, as setting up the columns and
    their join took longer than building the rest of the page's query. Never evaluated itself: see ``_listing``.

    Plain values, no model instances: most rows come from the cache, and holds/queue/rows.py reads
    the holds whole (with their items) only for the rows it has to render.
    """
    return Hold.objects.annotate(
        open_approvals=rounds.open_round_size(), assigned_to=assignments.current_label()
    ).values_list(*Listed.COLUMNS)


def _listing() -> QuerySet[Hold]:
    """``_listing_columns``, copied, so that whatever the caller does with it leaves the process's copy unevaluated."""
    return _listing_columns().all()


def cursor_of(hold: Listed | Hold, sort: str = DEFAULT_SORT) -> str:
    """The cursor of the page that follows ``hold`` in the order ``sort``."""
    field = ORDERS[sort].field
    return readers.write_cursor(sort, getattr(hold, field) if field else None, hold.created_at, hold.pk)


# A longer value is never offered (the filter still takes it from a link): the unique index on
# FilterValue holds an env, agent and capability together, in a few thousand bytes at most.


def next_for(viewer: Viewer, now: datetime) -> Hold | None:
    """The hold a reviewer should open next: the first in queue order that nobody else is deciding (a live claim).

    Holds assigned to the reviewer (or to one of their groups) come first, then holds waiting for
    an approval the reviewer may give (someone else approved, and the decision waits on a second
    pair of eyes); holds they approved already are skipped: it is someone else's turn. Holds others
    merely have open (presence) are not skipped: looking locks nothing.
    """
    user = viewer.user
    unclaimed = Q(claimed_by__isnull=True) | Q(claim_expires_at__lte=now) | Q(claimed_by=user)
    free = scopes.visible(open_holds(now), viewer).filter(unclaimed)
    return (
        rounds.not_approved_by(user, free.filter(assignments.assigned_to(viewer))).first()
        or rounds.joinable_by(user, free).first()
        or rounds.not_approved_by(user, free).first()
    )
