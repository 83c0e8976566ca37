"""Finding audit events: the list's filters, its keyset pages, and the export's walk over the same list.

Every filter is an equality or range on an indexed column, newest first on
``(at, sequence)``; each btree index ends in those columns, so a page of a
filtered list reads about one page of index, however large the table. Two
filters look inside the items: ``item`` (an item id, GIN-indexed on Postgres)
and ``q`` (any value inside item data, a trigram index when pg_trgm exists).
Nothing here counts the table: a page knows only whether another follows.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from datetime import date, datetime, time, timedelta
from urllib.parse import urlencode

from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from audit.models import AuditEvent, EventKind
from audit.payloads import ITEM_ACTIONS

PAGE_SIZE = 50
FIRST_YEAR, LAST_YEAR = 1970, 9000
EXPORT_CHUNK = 2000
LIST_COLUMNS_DEFERRED = ("search_text", "prev_hash")


@dataclasses.dataclass(frozen=True)
class Filters:
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

    @classmethod
    def from_query(cls, query) -> Filters:
        """Read the filters from a query string; a value that cannot be one is dropped, not an error."""
        values = {field.name: query.get(field.name, "").strip()[:200] for field in dataclasses.fields(cls)}
        for name in ("since", "until"):
            if parse_day(values[name]) is None:
                values[name] = ""
        if values["kind"] not in EventKind.values:
            values["kind"] = ""
        if values["action"] not in ITEM_ACTIONS:
            values["action"] = ""
        if not (values["reviewer"].isdigit() and int(values["reviewer"]) < 2**31):
            values["reviewer"] = ""
        return cls(**values)

    @property
    def active(self) -> bool:
        return any(dataclasses.astuple(self))

    def query_string(self) -> str:
        """The filters as a URL query, for the export link and the pager."""
        return urlencode({name: value for name, value in dataclasses.asdict(self).items() if value})


def parse_day(text: str) -> date | None:
    """A date from a form, or None; years far out (where a day more or less overflows) are no date."""
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        return None
    return day if FIRST_YEAR <= day.year <= LAST_YEAR else None


def day_start(day: date) -> datetime:
    """Midnight at the start of ``day`` in the site's time zone."""
    return timezone.make_aware(datetime.combine(day, time.min))


def filtered(filters: Filters) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if filters.since:
        events = events.filter(at__gte=day_start(parse_day(filters.since)))
    if filters.until:
        events = events.filter(at__lt=day_start(parse_day(filters.until) + timedelta(days=1)))
    exact = {"kind": filters.kind, "actor_id": filters.reviewer, "agent": filters.agent, "outcome": filters.outcome,
             "hold_id": filters.hold, "run_id": filters.run}
    events = events.filter(**{column: value for column, value in exact.items() if value})
    if filters.action:
        events = events.filter(actions__contains=filters.action)  # "approve", "edit", "reject": none inside another
    if filters.item:
        events = events.filter(has_item(filters.item))
    if filters.q:
        events = events.filter(search_text__contains=filters.q.lower())
    return events.order_by("-at", "-sequence")


def has_item(item_id: str) -> Q:
    """Events about the item ``item_id``: jsonb containment on Postgres (its GIN index), the JSON text elsewhere."""
    if connection.vendor == "postgresql":
        return Q(item_ids__contains=[item_id])
    return Q(item_ids__icontains=json.dumps(item_id))


def page(events: QuerySet[AuditEvent], after: str) -> tuple[list[AuditEvent], str]:
    """One page of ``events`` after the cursor ``after``, and the next page's cursor ("" on the last page)."""
    position = decode(after)
    if position:
        events = events.filter(older_than(*position))
    rows = list(events.defer(*LIST_COLUMNS_DEFERRED)[: PAGE_SIZE + 1])
    if len(rows) <= PAGE_SIZE:
        return rows, ""
    rows = rows[:PAGE_SIZE]
    return rows, encode(rows[-1].at, rows[-1].sequence)


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


def encode(at: datetime, sequence: int) -> str:
    raw = json.dumps([at.isoformat(), sequence])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(cursor: str) -> tuple[datetime, int] | None:
    if not cursor:
        return None
    try:
        at, sequence = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        at, sequence = datetime.fromisoformat(at), int(sequence)
    except (ValueError, TypeError):
        return None  # a mangled cursor shows the first page rather than an error
    return (at, sequence) if timezone.is_aware(at) else None


def timeline(hold) -> QuerySet[AuditEvent]:
    """Every event about one hold, oldest first."""
    return AuditEvent.objects.filter(hold_id=hold.hold_id, env=hold.env).order_by("at", "sequence")
