"""What the reviewers' queue shows, in the order they should work through it.

Open holds, soonest expiry first (holds that never expire last), then oldest;
or, as the reviewer picks, oldest first or largest amount first (holds without
an amount last, holds with an unreadable one first: see holds/mirror/amounts.py). Pages are keyset-paginated on the
order, so a page costs the same however deep it is and holds arriving meanwhile do not shift the rows
under a reviewer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Expression, F, Func, Q, QuerySet
from django.utils import timezone

from approvals import rounds
from holds import assignments, heartbeat
from holds.deciding import describe
from holds.models import FilterValue, Hold, SyncState
from reviewqueue import processcache, readers, softcache
from reviewqueue.jsonvalues import AMOUNT_KEYS
from reviewqueue.sql import expressions, prepared
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
URGENT = timedelta(minutes=15)
SOON = timedelta(hours=1)
# How a page's live countdown words the time left, by its largest unit: "2d 3h", "2h 05m", "4m 09s" ({mm} and {ss}
# are the minutes and seconds in two digits).
COUNTDOWN_WORDS = {"expired": "expired", "days": "{d}d {h}h", "hours": "{h}h {mm}m", "minutes": "{m}m {ss}s"}
# What app.js needs to keep the countdowns and their urgency bands (``urgency``) current: the page carries it
# (base.html's "countdown-rules"), so that the browser keeps no copy of these rules.
COUNTDOWN = {
    "urgent_ms": URGENT // timedelta(milliseconds=1),
    "soon_ms": SOON // timedelta(milliseconds=1),
    "words": COUNTDOWN_WORDS,
}
CLAIM_CHOICES = ("mine", "unclaimed")
APPROVAL_CHOICES = ("mine",)  # "mine": holds whose open round of approvals the reviewer may join
ASSIGNED_CHOICES = ("me",)  # "me": holds assigned to the reviewer or to one of their groups


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
    q: str = ""
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
            q=readers.text(query.get("q", ""), "q"),
            min_amount=_amount(query.get("min_amount", ""), "min_amount"),
            max_amount=_amount(query.get("max_amount", ""), "max_amount"),
            sort=readers.choice(query.get("sort", ""), "sort", ORDERS) or DEFAULT_SORT,
        )

    @property
    def active(self) -> bool:
        """Whether any filter narrows the queue (an order alone does not)."""
        return any(value not in ("", None) for value in dataclasses.astuple(dataclasses.replace(self, sort="")))

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
    holds, user = _listing().waiting(now), viewer.user if viewer else None
    if viewer is not None:
        holds = scopes.visible(holds, viewer)
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
    if filters.q:
        holds = holds.filter(search_text__contains=filters.q.lower())
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


def page(holds: QuerySet, after: str, filters: Filters = Filters()) -> tuple[list[Listed], str]:
    """One page of the holds ``filtered`` by ``filters``, in their order, after the cursor ``after``; and the cursor of
    the next page ("" at the end).

    A cursor names its order; one this app did not make, or made for another order, raises ``readers.BadValue`` (a 400).

    The unfiltered queue, which nearly every request and refresh reads, runs as a prepared statement
    (reviewqueue/sql/prepared.py): one plan serves it at any time and cursor. A filter's values, a search's
    above all, may each want a plan of their own, so a filtered page is planned afresh.
    """
    sort = filters.sort
    order = ORDERS[sort]
    parts = (_order_named(sort), order.read_key, readers.moment, readers.identifier)
    position = readers.cursor(after, "after", parts, optional={1})
    if position:
        holds = holds.filter(order.after(*position[1:]))
    listing = ordered(holds, sort)[: PAGE_SIZE + 1]
    listed = [Listed(*values) for values in (listing if filters.active else prepared.rows(listing))]
    if len(listed) <= PAGE_SIZE:
        return listed, ""
    listed = listed[:PAGE_SIZE]
    return listed, cursor_of(listed[-1], sort)


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
LONGEST_FILTER_VALUE = 200


def filter_values(viewer, states: list[SyncState] | None = None) -> dict[str, list[str]]:
    """The values the filters offer ``viewer``: those of the open holds at each env's last sync that they
    may see (one small query; see ``scopes.offered_values``).

    Given the envs' ``states`` (see ``sync_states``), the values are read from the cache,
    under a key naming each env's ``filter_values_version``, which sync changes together
    with the values (``replace_filter_values``): the key changes only when they do. It
    names each state's id too, which a database restored or rolled back (as tests do)
    does not give out again, so that values cached for another database are never read.
    """
    return scopes.offered_values(viewer, [scopes.Combination(*row) for row in _filter_combinations(states)])


def _filter_combinations(states: list[SyncState] | None) -> list[tuple[str, str, str]]:
    key = _filter_values_key(states) if states else None
    if key:
        cached = softcache.get_many([key], "the filter choices", content_keyed=True)
        if key in cached:
            return cached[key]
    rows = FilterValue.objects.filter(env__in=settings.AGENTOS_ENVS).order_by()
    combinations = sorted(rows.values_list("env", "agent", "capability"))
    if key:
        softcache.set_many({key: combinations}, FILTER_VALUES_SECONDS, "the filter choices", content_keyed=True)
    return combinations


FILTER_VALUES_SECONDS = 24 * 3600  # values nobody reads again (replaced, say) leave the cache within a day


def _filter_values_key(states: list[SyncState]) -> str:
    versions = sorted((state.env, state.pk, state.filter_values_version) for state in states)
    return (
        "queue-filter-combinations:"
        + hashlib.sha256(repr((sorted(settings.AGENTOS_ENVS), versions)).encode()).hexdigest()
    )


def replace_filter_values(env: str, agents_and_capabilities: set[tuple[str, str]]) -> None:
    """Make the filters offer, for ``env``, exactly these agents with these capabilities (sync's call; writes only
    the difference). A value longer than ``LONGEST_FILTER_VALUE`` is stored blank, so never offered.

    A change also changes the env's ``filter_values_version``, in the same transaction,
    so that no reader can pair the new version with the old values.
    """
    wanted = {(_offerable(agent), _offerable(capability)) for agent, capability in agents_and_capabilities}
    stored = set(FilterValue.objects.filter(env=env).values_list("agent", "capability"))
    if wanted == stored:
        return
    with transaction.atomic():
        for agent, capability in stored - wanted:
            FilterValue.objects.filter(env=env, agent=agent, capability=capability).delete()
        FilterValue.objects.bulk_create(
            [FilterValue(env=env, agent=agent, capability=capability) for agent, capability in sorted(wanted - stored)],
            ignore_conflicts=True,
        )
        SyncState.objects.filter(env=env).update(filter_values_version=str(uuid.uuid4()))


def _offerable(value: str) -> str:
    return value if len(value) <= LONGEST_FILTER_VALUE else ""


def amounts(hold: Hold) -> list[str]:
    """The amounts the hold's items carry, as the agent wrote them (``describe.amount_text``)."""
    found = []
    for item in hold.items.all():
        if isinstance(item.data, dict):
            for key in AMOUNT_KEYS:
                if key in item.data:
                    found.append(describe.amount_text(item.data, key))
    return found


def urgency(hold: Hold, now: datetime) -> str:
    """ "urgent" under ``URGENT`` left, "soon" under ``SOON``, else "" (app.js moves a page's bands on, see
    ``COUNTDOWN``)."""
    if hold.expires_at is None:
        return ""
    left = hold.expires_at - now
    return "urgent" if left < URGENT else "soon" if left < SOON else ""


@dataclasses.dataclass(frozen=True)
class Freshness:
    stale: bool
    failing_since: datetime | None
    last_success_at: datetime | None
    last_error: str
    periodic_last_run_at: datetime | None = None  # when beat's tasks last ran: None if never
    periodic_stopped: bool = False  # they ran, but not for three sync intervals: beat or every worker is down
    failing_here: bool = False  # the failing sync broke on an error in Review Queue, not on the platform
    quarantined: int = 0  # listed holds that sync could not mirror (see QuarantinedHold)


def sync_states() -> list[SyncState]:
    """The envs' sync states, each with ``periodic_last_run_at``: when a periodic task last ran."""
    return _sync_states()


def sync_states_and_new_count(
    new_holds: QuerySet[Hold] | None, filters: Filters = Filters()
) -> tuple[list[SyncState], int]:
    """The envs' sync states (as ``sync_states``) and how many ``new_holds`` there are (0 for None), in one query.

    ``new_holds`` are the queue's under ``filters``: the query is prepared, as ``page``'s is, only when they filter
    nothing.
    """
    if new_holds is None:
        return sync_states(), 0
    if connection.vendor != "postgresql":  # the quickstart's SQLite: the same reads, one by one
        return sync_states(), new_holds.count()
    # COUNT as a plain function, not an aggregate: one scalar subquery, without a GROUP BY.
    counted = new_holds.order_by().annotate(count=Func(F("pk"), function="COUNT")).values("count")
    states = _sync_states(counted.query.sql_with_params(), prepare=not filters.active)
    return states, states[0].new_count if states else new_holds.count()  # no env has synced yet: counted apart


def _sync_states(new_count: tuple[str, tuple] | None = None, prepare: bool = True) -> list[SyncState]:
    """The envs' states with when a periodic task last ran and, given the scalar query ``new_count``, its value as
    ``new_count``.

    On PostgreSQL in one statement, unless told otherwise prepared (reviewqueue/sql/prepared.py): every queue page
    and refresh asks, and building the queries cost the page more than running them, so their SQL is built once a
    process (``_sync_state_queries``).
    """
    if connection.vendor != "postgresql":
        last_run_at = heartbeat.last_run_at()
        states = list(_states(tuple(settings.AGENTOS_ENVS)))
        for state in states:
            state.periodic_last_run_at = last_run_at
        return states
    states_sql, last_run_sql = _sync_state_queries(tuple(settings.AGENTOS_ENVS))
    scalars = (last_run_sql, new_count) if new_count else (last_run_sql,)
    states = []
    for row in prepared.read(states_sql, scalars, prepare=prepare):
        state = SyncState.from_db(connection.alias, _STATE_FIELDS, row[: len(_STATE_FIELDS)])
        state.periodic_last_run_at, *counted = row[len(_STATE_FIELDS) :]
        state.new_count = counted[0] if counted else None
        states.append(state)
    return states


_STATE_FIELDS = [field.attname for field in SyncState._meta.concrete_fields]


def _states(envs: tuple[str, ...]) -> QuerySet[SyncState]:
    return SyncState.objects.filter(env__in=envs)


@processcache.cached
def _sync_state_queries(envs: tuple[str, ...]) -> tuple[tuple[str, tuple], tuple[str, tuple]]:
    """The SQL of the envs' states (``_STATE_FIELDS``, the columns named one by one, as a prepared statement's must
    stay as they were) and of when a periodic task last ran: the same on every call, so built once a process."""
    return (
        _states(envs).values_list(*_STATE_FIELDS).query.sql_with_params(),
        heartbeat.last_run().query.sql_with_params(),
    )


def freshness(now: datetime, states: list[SyncState] | None = None) -> Freshness:
    """Whether the mirror can be trusted: a failed last sync, none for three intervals, or a stopped beat is stale.

    ``states`` are the envs' states as ``sync_states`` reads them (read here when not given).
    """
    states = sync_states() if states is None else states
    periodic_last_run_at = states[0].periodic_last_run_at if states else heartbeat.last_run_at()
    periodic_stopped = heartbeat.stopped(periodic_last_run_at, now)
    failing = [state for state in states if state.failing]
    successes = [state.last_success_at for state in states if state.last_success_at]
    last_success = min(successes) if len(successes) == len(settings.AGENTOS_ENVS) else None
    return Freshness(
        stale=bool(failing) or last_success is None or heartbeat.overdue(last_success, now) or periodic_stopped,
        failing_since=min((state.failing_since for state in failing), default=None),
        last_success_at=last_success,
        last_error=failing[0].last_error if failing else "",
        periodic_last_run_at=periodic_last_run_at,
        periodic_stopped=periodic_stopped,
        failing_here=bool(failing) and failing[0].error_source == SyncState.ErrorSource.REVIEW_QUEUE,
        quarantined=sum(state.quarantined_count for state in states),
    )


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
