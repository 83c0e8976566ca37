"""Possible duplicates: another hold asking for what this one asks.

An item of a hold is a possible duplicate when another hold, open or with that item approved within
``RELATED_WINDOW_DAYS`` (by a decision here or as the platform reports; a decision the platform reports but not
item by item counts as approving every item, failing closed), has an item with the same subject, the same
capability and the same action kind (an unknown kind, "", matches any). ``approved_on_subject`` says how much was
already approved on each of a hold's subjects, by whom and when.

Both read ``holds.related.related``: ``possible_duplicates`` and ``approved_on_subject`` count every related hold
(the safeguards'), ``visible_duplicates`` and a viewer passed to ``approved_on_subject`` only those the viewer may
see (the pages').

The queue asks for a page of holds at once (``flagged``, one query, which looks only at the holds marked as sharing a
subject: ``holds/related/sharing.py``) and filters by it (``flagged_q``): there a closed hold's item counts as
approved as the platform reported it (``HoldSubject.approved``, stored when the hold is mirrored), which is how every
decision, here or elsewhere, ends up; a decision here still being sent leaves its hold open, which counts anyway.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import connection
from django.db.models import Count, Exists, F, Min, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.db.models.functions import Cast, Coalesce, Concat, NullIf
from django.utils import timezone

from holds.mirror import amounts
from holds.models import Hold, HoldSubject, SharedHold
from holds.related.related import Related, Shared, every_related, same_action, visible_related, window
from reviewqueue.sql import compiled, expressions, prepared
from reviewqueue.viewer import Viewer
from teams import scopes


@dataclasses.dataclass(frozen=True)
class Duplicate:
    """Another hold this one may duplicate: the related hold, the subjects by which it does, and whether it is
    open (else an item of it was approved within the window)."""

    related: Related
    shared: tuple[Shared, ...]

    @property
    def hold(self) -> Hold:
        return self.related.hold

    @property
    def is_open(self) -> bool:
        return self.related.is_open

    @property
    def positions(self) -> frozenset[int]:
        """This hold's items that may be duplicates."""
        return frozenset(shared.position for shared in self.shared)


def duplicates_among(related: list[Related]) -> list[Duplicate]:
    """Which of ``related`` (one hold's) are possible duplicates of it."""
    found = []
    for other in related:
        matching = tuple(
            shared
            for shared in other.shared
            if same_action(shared) and (other.is_open or other.approval_of(shared.other_position) is not None)
        )
        if matching:
            found.append(Duplicate(other, matching))
    return found


def possible_duplicates(hold: Hold, *, now: datetime | None = None) -> list[Duplicate]:
    """Every possible duplicate of ``hold``, whether a viewer may see it or not: for the safeguards."""
    return duplicates_among(every_related(hold, now=now))


def visible_duplicates(hold: Hold, viewer: Viewer, *, now: datetime | None = None) -> list[Duplicate]:
    """The possible duplicates of ``hold`` that ``viewer`` may see: for the pages and the API."""
    return duplicates_among(visible_related(hold, viewer, now=now))


@dataclasses.dataclass(frozen=True)
class SubjectApproval:
    """An amount approved on one of a hold's subjects on another hold: ``amount`` as ``holds.mirror.amounts.largest``
    reads the approved item (None: it carries none; ``amounts.UNREADABLE``: not read for certain), by whom, when.
    ``certain`` is False when the platform reports a decision but not item by item."""

    value: str
    shown: str
    key: str
    hold: Hold
    position: int
    amount: Decimal | None
    by: str
    at: datetime | None
    certain: bool
    same_capability: bool

    @property
    def amount_words(self) -> str:
        """The amount as people read it: "49.90", or words for none and for one not read for certain."""
        if not self.certain or self.amount == amounts.UNREADABLE:
            return "An amount not read for certain"
        if self.amount is None:
            return "An item without an amount"
        return f"{self.amount:,.2f}"


def approved_on_subject(
    hold: Hold,
    window: timedelta | None = None,
    *,
    viewer: Viewer | None = None,
    now: datetime | None = None,
    related: list[Related] | None = None,
) -> list[SubjectApproval]:
    """The amounts already approved on ``hold``'s subjects within ``window`` (by default ``RELATED_WINDOW_DAYS``),
    on other holds, newest first: every one, or those ``viewer`` may see. ``related``, when the caller has read it
    already (with the same window and viewer), saves reading it again."""
    now = now or timezone.now()
    if related is None:
        lister = every_related if viewer is None else lambda hold, **kwargs: visible_related(hold, viewer, **kwargs)
        related = lister(hold, now=now, within=window)
    found = []
    for other in related:
        items = {item.position: item for item in other.hold.items.all()}
        for shared in other.shared:
            approval = other.approval_of(shared.other_position)
            item = items.get(shared.other_position)
            if approval is None or item is None:
                continue
            data = approval.data if approval.data is not None else item.data
            amount = amounts.largest([data]) if approval.certain else amounts.UNREADABLE
            found.append(
                SubjectApproval(
                    value=shared.value,
                    shown=shared.shown,
                    key=shared.key,
                    hold=other.hold,
                    position=shared.other_position,
                    amount=amount,
                    by=approval.by,
                    at=approval.at,
                    certain=approval.certain,
                    same_capability=shared.same_capability,
                )
            )
    return sorted(found, key=lambda approval: approval.at or now, reverse=True)


@dataclasses.dataclass(frozen=True)
class Flag:
    """What the queue's row says of a possible duplicate: the hold ids of some of the others, and how many more."""

    others: tuple[str, ...]
    more: int


def _others(seen: tuple | None, since: datetime) -> QuerySet[HoldSubject]:
    """The subject rows of other holds making the outer ``HoldSubject`` row's item a possible duplicate: the same
    value and capability, the same kind or either unknown (""), open or approved since ``since``; only those in the
    team scopes ``seen`` (a viewer's ``scopes``; None: all)."""
    # An unknown outer kind, made NULL, leaves each row's own kind to compare with: any kind matches it.
    outer_kind = Coalesce(NullIf(OuterRef("action_kind"), Value("")), F("action_kind"))
    others = (
        HoldSubject.objects.filter(value=OuterRef("value"), capability=OuterRef("capability"))
        .exclude(hold=OuterRef("hold"))
        .filter(Q(action_kind="") | Q(action_kind=outer_kind))
        .filter(Q(hold__status=Hold.Status.OPEN) | Q(approved=True, hold__closed_at__gte=since))
    )
    condition = scopes.scopes_q(seen, "hold__")
    return others if condition is None else others.filter(condition)


def _count_and_first(others: QuerySet[HoldSubject]) -> Subquery:
    """How many holds ``others`` are on, and the first of them by hold id, as "COUNT:HOLD_ID" text (``_joined``): one
    pass over the matching rows where a subquery each read them twice, and text, which both the ORM and a prepared
    read give as it is."""
    pair = _joined(Count("hold", distinct=True), Min("hold__hold_id"))
    return Subquery(others.order_by().values("value").annotate(pair=pair).values("pair"))


def _joined(number, text) -> Concat:
    """``number`` and ``text`` as "NUMBER:TEXT": the number has no colon, so ``_split`` finds both again, whatever
    the text holds."""
    return Concat(Cast(number, TextField()), Value(":"), text, output_field=TextField())


def _split(joined: str) -> tuple[int, str]:
    """``_joined``'s text read back."""
    number, _, text = joined.partition(":")
    return int(number), text


def _flagged_rows(seen: tuple | None, *, since: datetime, pks: list[int]) -> QuerySet:
    """For each subject of those of the holds ``pks`` marked as sharing one (``holds/related/sharing.py``: the others
    cannot be possible duplicates), how many other holds make it a possible duplicate and the first of them by hold id
    (``_count_and_first``; NULL for none): ``flagged``'s query. On PostgreSQL the pks are one array parameter
    (``expressions.among``), so that the statement has a dozen parameters whatever the page's size, few enough for
    psycopg to keep its conversion of the statement (it keeps none with over 50)."""
    marked = SharedHold.objects.filter(expressions.among(SharedHold, "hold", pks)).values("hold")
    return (
        HoldSubject.objects.filter(hold__in=marked)
        .order_by()
        .annotate(found=_count_and_first(_others(seen, since)))
        .values_list("hold_id", "found")
    )


def flags_query(pks: list[int], viewer: Viewer | None, now: datetime) -> tuple[str, tuple] | None:
    """``flagged``'s query as the SQL and parameters of one scalar (every subject row of the holds ``pks`` as text,
    ``_flag_texts``), for a page that reads it in a statement it makes anyway: the queue, with its sync states. None
    where the database has no arrays (the quickstart's SQLite), or for no holds: ask ``flagged`` then."""
    if connection.vendor != "postgresql" or not pks:
        return None
    seen = viewer.scopes if viewer is not None else None
    return compiled.sql(_flag_texts, (seen,), since=now - window(), pks=list(pks))


def _flag_texts(seen: tuple | None, *, since: datetime, pks: list[int]) -> QuerySet:
    """``_flagged_rows`` gathered into one array of "PK:COUNT:HOLD_ID" texts ("PK:" for a subject no other hold
    shares): ``flags_query``'s query."""
    rows = _flagged_rows(seen, since=since, pks=pks)
    return expressions.array_of(rows.values("hold_id"), _joined("hold_id", "found"))


def flags_from(texts: list[str] | None) -> dict[int, Flag]:
    """The flags of ``flags_query``'s value: its texts read back."""
    rows = []
    for text in texts or ():
        pk, found = _split(text)
        rows.append((pk, found or None))
    return _flags(rows)


def flagged(pks: list[int], viewer: Viewer | None, now: datetime | None = None) -> dict[int, Flag]:
    """Which of the holds ``pks`` are possible duplicates, naming others ``viewer`` may see (None: any): one query.
    On PostgreSQL its SQL is the ORM's, compiled once a process (``reviewqueue/sql/compiled.py``) and prepared:
    building it took longer than running it."""
    now = now or timezone.now()
    query = flags_query(pks, viewer, now)
    if query is not None:
        [(texts,)] = prepared.read(query)
        return flags_from(texts)
    seen = viewer.scopes if viewer is not None else None
    return _flags(list(_flagged_rows(seen, since=now - window(), pks=list(pks))) if pks else [])


def _flags(rows: list[tuple[int, str | None]]) -> dict[int, Flag]:
    """The flags of ``_flagged_rows``' rows: (hold pk, ``_count_and_first``'s text or None)."""
    names: dict[int, set[str]] = {}
    counts: dict[int, int] = {}
    for pk, found in rows:
        if found is None:  # a subject no other hold shares: skipped here, as a WHERE would run its subquery again
            continue
        count, first = _split(found)
        names.setdefault(pk, set()).add(first)
        counts[pk] = max(counts.get(pk, 0), count)
    return {pk: Flag(tuple(sorted(found)), max(counts[pk] - len(found), 0)) for pk, found in names.items()}


def flagged_q(viewer: Viewer | None, now: datetime | None = None) -> Q:
    """A filter on holds keeping the possible duplicates (of others ``viewer`` may see) among the marked holds, as
    ``flagged`` finds them: the queue's filter."""
    since = (now or timezone.now()) - window()
    seen = viewer.scopes if viewer is not None else None
    subjects = HoldSubject.objects.filter(hold=OuterRef("pk")).filter(Exists(_others(seen, since)))
    return Q(Exists(SharedHold.objects.filter(hold=OuterRef("pk")))) & Q(Exists(subjects))
