"""Finding audit events: the list's filters, its keyset pages, and the export's walk over the same list.

Every filter is an equality or range on an indexed column, newest first on
``(at, sequence)``; each btree index ends in those columns, so a page of a
filtered list reads about one page of index, however large the table. Two
filters look inside the items: ``item`` (an item id, GIN-indexed on Postgres)
and ``q`` (any value inside item data, a trigram index when pg_trgm exists).
``quick`` keeps the decisions ``rubberstamping`` calls quick, read through the decisions table.
Nothing here counts the table: a page knows only whether another follows.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime, time, timedelta
from urllib.parse import urlencode

from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from audit import rubberstamping
from audit.models import DECISION_KINDS, AuditEvent, EventKind
from audit.payloads import ITEM_ACTIONS
from reviewqueue import readers

PAGE_SIZE = 50
USER_ID_MAX = 2**31 - 1  # auth's users have 32-bit ids
EXPORT_CHUNK = 2000
LIST_COLUMNS_DEFERRED = ("search_text", "prev_hash")
DECISIONS, ALL_EVENTS = "decisions", "all"
VIEWS = (DECISIONS, ALL_EVENTS)


@dataclasses.dataclass(frozen=True)
class Filters:
    view: str = DECISIONS
    since: str = ""
    until: str = ""
    kind: str = ""
    reviewer: str = ""
    agent: str = ""
    action: str = ""
    outcome: str = ""
    hold: str = ""
    run: str = ""
    item: str = ""
    q: str = ""
    quick: str = ""  # "1": only decisions made in under ``rubberstamping.QUICK_SECONDS`` of opening the hold

    @classmethod
    def from_query(cls, query, default_view: str = DECISIONS) -> Filters:
        """Read the filters from a query string, each as text a form shows again.

        The list opens on decisions; the CSV export, which scripts pull, keeps every event
        unless asked otherwise. A value that cannot be read raises ``readers.BadValue`` (a 400).
        """
        since, until = (readers.day(query.get(name, ""), name) for name in ("since", "until"))
        reviewer = readers.identifier(query.get("reviewer", ""), "reviewer", maximum=USER_ID_MAX)
        texts = {
            name: readers.text(query.get(name, ""), name) for name in ("agent", "outcome", "hold", "run", "item", "q")
        }
        return cls(
            view=readers.choice(query.get("view", ""), "view", VIEWS) or default_view,
            since=since.isoformat() if since else "",
            until=until.isoformat() if until else "",
            kind=readers.choice(query.get("kind", ""), "kind", EventKind.values),
            reviewer=str(reviewer) if reviewer else "",
            action=readers.choice(query.get("action", ""), "action", ITEM_ACTIONS),
            quick=readers.choice(query.get("quick", ""), "quick", ("1",)),
            **texts,
        )

    @property
    def active(self) -> bool:
        """Whether any filter narrows the view (the view itself is not a filter)."""
        return any(value for name, value in dataclasses.asdict(self).items() if name != "view")

    @property
    def kinds(self) -> list[tuple[str, str]]:
        """The event kinds the kind filter offers in this view."""
        if self.view == DECISIONS:
            return [(kind.value, kind.label) for kind in DECISION_KINDS]
        return EventKind.choices

    def query_string(self, keep_view: bool = False, **changes: str) -> str:
        """The filters as a URL query, for the pager and the view switch; the list's default view is left out
        unless ``keep_view`` (the export link, whose own default is every event)."""
        values = dataclasses.asdict(dataclasses.replace(self, **changes))
        return urlencode(
            {
                name: value
                for name, value in values.items()
                if value and (keep_view or (name, value) != ("view", DECISIONS))
            }
        )


def day_start(day: date) -> datetime:
    """Midnight at the start of ``day`` in the site's time zone."""
    return timezone.make_aware(datetime.combine(day, time.min))


def filtered(filters: Filters) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if filters.view == DECISIONS and not filters.kind:  # a kind asked for by name is shown in either view
        events = events.filter(kind__in=DECISION_KINDS)
    if filters.since:
        events = events.filter(at__gte=day_start(date.fromisoformat(filters.since)))
    if filters.until:
        events = events.filter(at__lt=day_start(date.fromisoformat(filters.until) + timedelta(days=1)))
    exact = {
        "kind": filters.kind,
        "actor_id": filters.reviewer,
        "agent": filters.agent,
        "outcome": filters.outcome,
        "hold_id": filters.hold,
        "run_id": filters.run,
    }
    events = events.filter(**{column: value for column, value in exact.items() if value})
    if filters.action:
        events = events.filter(actions__contains=filters.action)  # "approve", "edit", "reject": none inside another
    if filters.item:
        events = events.filter(has_item(filters.item))
    if filters.q:
        events = events.filter(search_text__contains=filters.q.lower())
    if filters.quick:
        events = events.filter(kind=EventKind.DECISION_SUBMITTED, decision__in=rubberstamping.quick_decisions())
    return events.order_by("-at", "-sequence")


def has_item(item_id: str) -> Q:
    """Events about the item ``item_id``: jsonb containment on Postgres (its GIN index), the JSON text elsewhere."""
    if connection.vendor == "postgresql":
        return Q(item_ids__contains=[item_id])
    return Q(item_ids__icontains=json.dumps(item_id))


def page(events: QuerySet[AuditEvent], after: str) -> tuple[list[AuditEvent], str]:
    """One page of ``events`` after the cursor ``after``, and the next page's cursor ("" on the last page).

    A cursor this app did not make raises ``readers.BadValue`` (a 400).
    """
    position = decode(after)
    if position:
        events = events.filter(older_than(*position))
    rows = list(events.defer(*LIST_COLUMNS_DEFERRED)[: PAGE_SIZE + 1])
    if len(rows) <= PAGE_SIZE:
        return rows, ""
    rows = rows[:PAGE_SIZE]
    return rows, readers.write_cursor(rows[-1].at, rows[-1].sequence)


def older_than(at: datetime, sequence: int) -> Q:
    """Rows after (at, sequence) in newest-first order.

    ``at <= cursor`` comes first, on its own, so that Postgres starts the index
    scan at the cursor instead of filtering every newer row on the way there.
    """
    return Q(at__lte=at) & (Q(at__lt=at) | Q(sequence__lt=sequence))


def each(events: QuerySet[AuditEvent], chunk: int = EXPORT_CHUNK):
    """Every event of a filtered list in its order, fetched in keyset chunks: flat memory, no open cursor."""
    position = None
    while True:
        batch = events.filter(older_than(*position)) if position else events
        rows = list(batch.defer("search_text")[:chunk])
        yield from rows
        if len(rows) < chunk:
            return
        position = (rows[-1].at, rows[-1].sequence)


def decode(after: str) -> tuple[datetime, int] | None:
    """The (at, sequence) a page cursor points after, None for none; a cursor this app did not make raises BadValue."""
    return readers.cursor(after, "after", (readers.moment, readers.identifier))


def timeline(hold) -> QuerySet[AuditEvent]:
    """Every event about one hold, oldest first."""
    return AuditEvent.objects.filter(hold_id=hold.hold_id, env=hold.env).order_by("at", "sequence")


def of_decision(decision, approval_pks: list[int]) -> QuerySet[AuditEvent]:
    """The events naming a decision, and the approvals that led to it (recorded before it existed, so named by pk)."""
    hold = decision.hold
    approvals = Q(kind=EventKind.APPROVAL_GIVEN, hold_id=hold.hold_id, env=hold.env, payload__approval__in=approval_pks)
    return AuditEvent.objects.filter(Q(decision=decision) | approvals) if approval_pks else decision.audit_events.all()
