"""What the reviewers' queue shows, in the order they should work through it.

Open holds, soonest expiry first (holds that never expire last), then oldest.
Pages are keyset-paginated on that order, so a page costs the same however deep
it is and holds arriving meanwhile do not shift the rows under a reviewer.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from holds import heartbeat
from holds.models import Decision, Hold, SyncState
from reviewqueue import readers
from reviewqueue.jsonvalues import AMOUNT_KEYS, as_decimal

PAGE_SIZE = 50
EXPIRING_WITHIN = {"15m": timedelta(minutes=15), "1h": timedelta(hours=1), "4h": timedelta(hours=4), "24h": timedelta(days=1)}
URGENT = timedelta(minutes=15)
SOON = timedelta(hours=1)
CLAIM_CHOICES = ("mine", "unclaimed")


@dataclasses.dataclass(frozen=True)
class Filters:
    agent: str = ""
    capability: str = ""
    env: str = ""
    expiring: str = ""
    claim: str = ""  # one of CLAIM_CHOICES
    q: str = ""

    @classmethod
    def from_query(cls, query) -> Filters:
        """Read the filters from a query string; a value that cannot be one raises ``readers.BadValue`` (a 400)."""
        return cls(
            agent=readers.text(query.get("agent", ""), "agent"),
            capability=readers.text(query.get("capability", ""), "capability"),
            env=readers.text(query.get("env", ""), "env"),
            expiring=readers.choice(query.get("expiring", ""), "expiring", EXPIRING_WITHIN),
            claim=readers.choice(query.get("claim", ""), "claim", CLAIM_CHOICES),
            q=readers.text(query.get("q", ""), "q"),
        )

    @property
    def active(self) -> bool:
        return any(dataclasses.astuple(self))


def ordered(queryset: QuerySet[Hold]) -> QuerySet[Hold]:
    return queryset.order_by(F("expires_at").asc(nulls_last=True), F("created_at").asc(), "id")


def open_holds(now: datetime | None = None) -> QuerySet[Hold]:
    """Open holds nobody here has decided yet and whose time is not up.

    A decision being sent, or an expiry the sweep has not closed yet, takes a
    hold out of the queue at once.
    """
    now = now or timezone.now()
    live = Decision.objects.filter(hold=OuterRef("pk")).exclude(state=Decision.State.NOT_APPLIED)
    return ordered(
        Hold.objects.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now), status=Hold.Status.OPEN).exclude(
            Exists(live)
        )
    )


def filtered(filters: Filters, user, now: datetime) -> QuerySet[Hold]:
    holds = open_holds(now)
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
    if filters.q:
        holds = holds.filter(search_text__contains=filters.q.lower())
    return holds


def page(holds: QuerySet[Hold], after: str) -> tuple[list[Hold], str]:
    """One page of ``holds`` after the cursor ``after``, and the cursor of the next page ("" at the end).

    A cursor this app did not make raises ``readers.BadValue`` (a 400).
    """
    position = readers.cursor(after, "after", (readers.moment, readers.moment, readers.identifier), optional={0})
    if position:
        holds = holds.filter(_after(*position))
    rows = list(
        holds.select_related("claimed_by")
        .prefetch_related("items")
        .defer("payload", "search_text", "run_snapshot", "platform_decision")[: PAGE_SIZE + 1]
    )
    if len(rows) <= PAGE_SIZE:
        return rows, ""
    rows = rows[:PAGE_SIZE]
    last = rows[-1]
    return rows, readers.write_cursor(last.expires_at, last.created_at, last.pk)


def _after(expires_at: datetime | None, created_at: datetime, pk: int) -> Q:
    later_in_same_expiry = Q(created_at__gt=created_at) | Q(created_at=created_at, pk__gt=pk)
    if expires_at is None:
        return Q(expires_at__isnull=True) & later_in_same_expiry
    return (
        Q(expires_at__gt=expires_at)
        | Q(expires_at=expires_at) & later_in_same_expiry
        | Q(expires_at__isnull=True)
    )


def filter_values() -> dict[str, list[str]]:
    """The values the filters offer, from the open holds (one query for all three)."""
    combinations = Hold.objects.filter(status=Hold.Status.OPEN).values_list("agent", "capability", "env").distinct()
    agents, capabilities, envs = (set(values) for values in zip(*combinations)) if combinations else (set(), set(), set())
    return {"agent": sorted(agents), "capability": sorted(capabilities), "env": sorted(envs)}


def amounts(hold: Hold) -> list[str]:
    """The amounts the hold's items carry, as the agent wrote them."""
    found = []
    for item in hold.items.all():
        if isinstance(item.data, dict):
            for key in AMOUNT_KEYS:
                if as_decimal(item.data.get(key)) is not None:
                    found.append(str(item.data[key]))
    return found


def urgency(hold: Hold, now: datetime) -> str:
    """"urgent" under 15 minutes left, "soon" under an hour, else ""."""
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


def freshness(now: datetime) -> Freshness:
    """Whether the mirror can be trusted: a failed last sync, none for three intervals, or a stopped beat is stale."""
    periodic_last_run_at = heartbeat.last_run_at()
    periodic_stopped = heartbeat.stopped(periodic_last_run_at, now)
    states = list(SyncState.objects.filter(env__in=settings.AGENTOS_ENVS))
    limit = now - timedelta(seconds=3 * settings.SYNC_INTERVAL_SECONDS)
    failing = [state for state in states if state.failing]
    successes = [state.last_success_at for state in states if state.last_success_at]
    last_success = min(successes) if len(successes) == len(settings.AGENTOS_ENVS) else None
    return Freshness(
        stale=bool(failing) or last_success is None or last_success < limit or periodic_stopped,
        failing_since=min((state.failing_since for state in failing), default=None),
        last_success_at=last_success,
        last_error=failing[0].last_error if failing else "",
        periodic_last_run_at=periodic_last_run_at,
        periodic_stopped=periodic_stopped,
        failing_here=bool(failing) and failing[0].error_source == SyncState.ErrorSource.REVIEW_QUEUE,
        quarantined=sum(state.quarantined_count for state in states),
    )


def next_for(user, now: datetime) -> Hold | None:
    """The hold a reviewer should open next: the first in queue order that nobody else is reviewing."""
    return open_holds(now).filter(Q(claimed_by__isnull=True) | Q(claim_expires_at__lte=now) | Q(claimed_by=user)).first()
