"""Whether the mirror can be trusted: the envs' sync states, when beat's tasks last ran, and the queue's banner."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from django.conf import settings
from django.db import connection
from django.db.models import F, Func, QuerySet

from holds.models import Hold, SyncState
from holds.queue.listing import Filters
from holds.sweeps import heartbeat
from reviewqueue import processcache
from reviewqueue.sql import prepared


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
    new_holds: QuerySet[Hold] | None, filters: Filters | None = None
) -> tuple[list[SyncState], int]:
    """The envs' sync states (as ``sync_states``) and how many ``new_holds`` there are (0 for None), in one query.

    ``new_holds`` are the queue's under ``filters``: the query is prepared, as ``page``'s is, only when they filter
    nothing.
    """
    filters = filters or Filters()
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
