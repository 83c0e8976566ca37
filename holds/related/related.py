"""A hold's related holds: the other holds sharing a subject with it (``holds.models.HoldSubject``), open or closed
within ``RELATED_WINDOW_DAYS``, each with what a reviewer needs to weigh it (agent, items, amount, status, who
decided, when, what the platform reported).

Two listings: ``visible_related`` for a viewer (only holds in their team scopes, for the pages and the API) and
``every_related`` for the safeguards, which count every related hold, seen or not. Each is a few index reads,
whatever the number of open holds: the hold's subjects with the rows sharing their values (one query), and when
there are any, the holds with their live decisions, their items, and the decisions' items.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Case, FilteredRelation, Prefetch, Q, QuerySet, Value, When, prefetch_related_objects
from django.utils import timezone

from holds.deciding.deciders import decider_name
from holds.mirror import platform
from holds.models import Decision, Hold, HoldItem, HoldSubject
from holds.related.subjects import ITEM_KEY, Subject, same_kind
from reviewqueue.sql import compiled, prepared
from reviewqueue.viewer import Viewer
from teams import scopes

MOST_ROWS = 500  # subject rows read per hold: a value shared by more (agent text) shows the most recent 500


def window() -> timedelta:
    """How far back closed holds count as related: ``RELATED_WINDOW_DAYS``."""
    return timedelta(days=settings.RELATED_WINDOW_DAYS)


@dataclasses.dataclass(frozen=True)
class Shared:
    """A subject two holds share: the value matched, and where each names it (its item's position and key)."""

    value: str
    shown: str  # the value as this hold's item writes it (trimmed), for people
    key: str  # this hold's key
    position: int  # this hold's item
    other_key: str
    other_position: int
    other_kind: str
    kind: str
    same_capability: bool


@dataclasses.dataclass(frozen=True)
class Approval:
    """An item of a related hold approved (here or as the platform reports): by whom, when, with which data (None:
    as asked), and whether it was read for certain (False: a decision the platform reports but not item by item)."""

    position: int
    by: str
    at: datetime | None
    data: object
    certain: bool


@dataclasses.dataclass(frozen=True)
class Related:
    """One related hold, with its items prefetched (``hold.items.all()``), the subjects it shares, its decision here
    if any, who decided and when, what the platform reported, and its items approved."""

    hold: Hold
    shared: tuple[Shared, ...]
    decision: Decision | None
    decided_by: str
    decided_at: datetime | None
    reported: str
    approvals: tuple[Approval, ...]

    @property
    def is_open(self) -> bool:
        return self.hold.status == Hold.Status.OPEN

    @property
    def amount(self) -> Decimal | None:
        return self.hold.amount

    def approval_of(self, position: int) -> Approval | None:
        return next((approval for approval in self.approvals if approval.position == position), None)


def subjects_of_hold(hold: Hold) -> list[HoldSubject]:
    """The hold's stored subjects, item by item."""
    return list(HoldSubject.objects.filter(hold=hold).order_by("position", "pk"))


def every_related(hold: Hold, *, now: datetime | None = None, within: timedelta | None = None) -> list[Related]:
    """Every hold related to ``hold``, whether a viewer may see it or not: for the safeguards. ``within`` (by default
    ``window()``) is how long ago a closed hold may have closed."""
    return _related(hold, None, now or timezone.now(), within or window())


def visible_related(
    hold: Hold, viewer: Viewer, *, now: datetime | None = None, within: timedelta | None = None
) -> list[Related]:
    """The holds related to ``hold`` that ``viewer`` may see: for the pages and the API."""
    return _related(hold, viewer, now or timezone.now(), within or window())


def _related(hold: Hold, viewer: Viewer | None, now: datetime, within: timedelta) -> list[Related]:
    shared = _shared(hold, now - within)
    if not shared:
        return []
    # With its live decision (at most one a hold: a partial unique constraint) and that decision's reviewer.
    holds = (
        Hold.objects.filter(pk__in=list(shared))
        .annotate(live=FilteredRelation("decisions", condition=~Q(decisions__state__in=Decision.NOT_LIVE)))
        .select_related("live__reviewer")
    )
    holds = with_items(holds if viewer is None else scopes.visible(holds, viewer))
    decisions = {hold.pk: hold.live for hold in holds if getattr(hold, "live", None) is not None}
    prefetch_related_objects(list(decisions.values()), "items")
    found = [_described(other, shared[other.pk], decisions.get(other.pk)) for other in holds]
    return sorted(found, key=lambda related: (not related.is_open, -(related.hold.closed_at or now).timestamp()))


def _shared(hold: Hold, since: datetime) -> dict[int, tuple[Shared, ...]]:
    """The subjects each related hold (by pk) shares with ``hold``, open or closed since ``since``: read with the
    hold's own subjects, in one query."""
    rows = prepared.read(compiled.sql(_subject_rows, (), hold=hold.pk, since=since))
    own = [
        HoldSubject(hold_id=pk, position=p, key=k, value=v, capability=c, action_kind=a)
        for pk, p, k, v, c, a in rows
        if pk == hold.pk
    ]
    shown = _shown_values(hold, own)
    found: dict[int, list[Shared]] = {}
    for other_pk, position, key, value, capability, kind in rows:
        if other_pk == hold.pk:
            continue
        for subject in own:
            if subject.value == value:
                other = (position, key, value, capability, kind)
                found.setdefault(other_pk, []).append(
                    _shared_by(subject, other, shown.get((subject.position, subject.key), value))
                )
    return {pk: tuple(subjects) for pk, subjects in found.items()}


def _shared_by(subject: HoldSubject, other: tuple, shown: str) -> Shared:
    """What ``subject`` (a row of the hold's own) shares with another hold's row ``other``: its position, key,
    value, capability and kind."""
    position, key, value, capability, kind = other
    return Shared(
        value=value,
        shown=shown,
        key=subject.key,
        position=subject.position,
        other_key=key,
        other_position=position,
        other_kind=kind,
        kind=subject.action_kind,
        same_capability=subject.capability == capability,
    )


def _in_window(since: datetime) -> Q:
    """Subject rows of holds open, or closed since ``since``."""
    return Q(hold__status=Hold.Status.OPEN) | Q(hold__closed_at__gte=since)


def with_items(holds) -> list[Hold]:
    """``holds`` (a queryset) read with their items in order, without the columns no related hold shows."""
    items = Prefetch("items", queryset=HoldItem.objects.order_by("position"))
    return list(holds.prefetch_related(items).defer("payload", "search_text", "run_snapshot"))


def _subject_rows(*, hold: int, since: datetime) -> QuerySet:
    """The subject rows of the hold ``hold`` (a pk) first, then those of the holds sharing a value with it, open or
    closed since ``since``: ``_shared``'s query, its SQL the ORM's compiled once a process
    (``reviewqueue/sql/compiled.py``) and prepared, as every hold page, decision and message link reads it."""
    values = HoldSubject.objects.filter(hold=hold).values("value")
    return (
        HoldSubject.objects.filter(value__in=values)
        .filter(Q(hold=hold) | _in_window(since))
        .annotate(own=Case(When(hold=hold, then=Value(0)), default=Value(1)))
        .order_by("own", "-hold_id", "position", "pk")
        .values_list("hold_id", "position", "key", "value", "capability", "action_kind")[:MOST_ROWS]
    )


def _shown_values(hold: Hold, own: list[HoldSubject]) -> dict[tuple[int, str], str]:
    """Each subject's value as the hold's item writes it, trimmed (by position and key)."""
    items = {item.position: item for item in hold.items.all()}
    shown = {}
    for subject in own:
        item = items.get(subject.position)
        if item is None:
            continue
        raw = item.item_id if subject.key == ITEM_KEY else (item.data or {}).get(subject.key)
        if isinstance(raw, str | int) and not isinstance(raw, bool):
            shown[subject.position, subject.key] = str(raw).strip()
    return shown


def _described(hold: Hold, shared: tuple[Shared, ...], decision: Decision | None) -> Related:
    if decision is not None:
        by, at = decider_name(decision), decision.created_at
    else:
        by, at = hold.decided_by, hold.decided_at
    return Related(
        hold=hold,
        shared=shared,
        decision=decision,
        decided_by=by,
        decided_at=at,
        reported=_reported(hold, decision),
        approvals=tuple(_approvals(hold, decision, by, at)),
    )


def _reported(hold: Hold, decision: Decision | None) -> str:
    """What the platform reported of the hold: its answer to our decision, else how the hold ended there."""
    if decision is not None and decision.outcome:
        words = decision.get_outcome_display()
        return f"{words}: {decision.outcome_message}" if decision.outcome_message else words
    if hold.status == Hold.Status.OPEN:
        return "Sending the decision" if decision is not None else "Open"
    who = f" by {hold.decided_by}" if hold.decided_by else ""
    return f"{hold.get_status_display()}{who}"


def _approvals(hold: Hold, decision: Decision | None, by: str, at: datetime | None) -> list[Approval]:
    """The hold's items approved: by its live decision here, else as the platform reports (all of them, uncertain,
    for a decision it reports but not item by item)."""
    if decision is not None:
        return [
            Approval(item.position, by, at, item.data if item.action == "edit" else None, True)
            for item in decision.items.all()
            if item.action in ("approve", "edit")
        ]
    if hold.status != Hold.Status.DECIDED:
        return []
    approved = platform.approved_items(hold.platform_decision)
    items = hold.items.all()
    if approved is None:
        return [Approval(item.position, by, at, None, False) for item in items]
    return [Approval(item.position, by, at, approved[item.item_id], True) for item in items if item.item_id in approved]


def related_of_many(
    holds: list[Hold], own: dict[int, list[HoldSubject]], since: datetime
) -> dict[int, list[Related]] | None:
    """Each of ``holds``' related holds of the same capability (by pk; ``own``: their subjects), open or closed since
    ``since``, described as ``holds.related.related.every_related`` describes them, in five queries for all; None
    when more than ``MOST_ROWS`` rows a hold share their subjects."""
    values = {subject.value for subjects in own.values() for subject in subjects}
    most = MOST_ROWS * len(holds)
    rows = list(
        HoldSubject.objects.filter(value__in=values)
        .filter(_in_window(since))
        .order_by("-hold_id")
        .values_list("hold_id", "position", "key", "value", "capability", "action_kind")[: most + 1]
    )
    if len(rows) > most:
        return None
    by_value: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_value[row[3]].append(row)
    shared: dict[int, dict[int, list[Shared]]] = {hold.pk: defaultdict(list) for hold in holds}
    for hold in holds:
        for subject in own[hold.pk]:
            for other_pk, position, key, value, capability, kind in by_value[subject.value]:
                if other_pk != hold.pk and capability == subject.capability:
                    shared[hold.pk][other_pk].append(
                        _shared_by(subject, (position, key, value, capability, kind), value)
                    )
    other_pks = {pk for by_hold in shared.values() for pk in by_hold}
    others = {other.pk: other for other in with_items(Hold.objects.filter(pk__in=other_pks))}
    live = Decision.objects.filter(hold__in=other_pks).exclude(state__in=Decision.NOT_LIVE)
    decisions = {one.hold_id: one for one in live.select_related("reviewer").prefetch_related("items")}
    return {
        pk: [
            _described(others[other_pk], tuple(found), decisions.get(other_pk))
            for other_pk, found in by_hold.items()
            if other_pk in others
        ]
        for pk, by_hold in shared.items()
    }


def same_action(shared: Shared) -> bool:
    """Whether the two items sharing ``shared`` may ask for the same action: same capability and same kind."""
    return shared.same_capability and same_kind(shared.kind, shared.other_kind)


__all__ = [
    "Approval",
    "Related",
    "Shared",
    "Subject",
    "every_related",
    "related_of_many",
    "visible_related",
    "window",
    "with_items",
]
