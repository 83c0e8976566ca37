"""Whether the mirror can be trusted: the envs' sync states, when beat's tasks last ran, and the queue's banner."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet

from holds.models import SyncState
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
    return sync_states_with()[0]


def sync_states_with(scalars: tuple[tuple[str, tuple], ...] = (), prepare: bool = True) -> tuple[list[SyncState], list]:
    """The envs' sync states (as ``sync_states``) and the value of each of the scalar queries ``scalars`` (SQL and
    parameters, as ``query.sql_with_params()`` gives them), which the page shows beside them.

    On PostgreSQL in one statement, unless told otherwise prepared (reviewqueue/sql/prepared.py): every queue page
    and refresh asks, and building the queries cost the page more than running them, so the states' SQL is built once
    a process (``_sync_state_queries``). Elsewhere, or before any env has a state, the scalars are read one by one.
    """
    if connection.vendor != "postgresql":  # the quickstart's SQLite
        last_run_at = heartbeat.last_run_at()
        states = list(_states(tuple(settings.AGENTOS_ENVS)))
        for state in states:
            state.periodic_last_run_at = last_run_at
        return states, [_value(scalar, prepare) for scalar in scalars]
    states_sql, last_run_sql = _sync_state_queries(tuple(settings.AGENTOS_ENVS))
    states, values = [], None
    for row in prepared.read(states_sql, (last_run_sql, *scalars), prepare=prepare):
        state = SyncState.from_db(connection.alias, _STATE_FIELDS, row[: len(_STATE_FIELDS)])
        state.periodic_last_run_at, *values = row[len(_STATE_FIELDS) :]
        states.append(state)
    if values is None:  # no env has synced yet
        values = [_value(scalar, prepare) for scalar in scalars]
    return states, values


def _value(scalar: tuple[str, tuple], prepare: bool):
    [(value,)] = prepared.read(scalar, prepare=prepare)
    return value


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
