"""Readiness: whether this deployment can serve reviewers with a fresh mirror, one check at a time.

Each check answers ``(ok, detail)`` where the detail is short and safe to show anyone:
no URL, host, password or exception text (which may carry a DSN), only what failed.
"""

from __future__ import annotations

from datetime import datetime

import redis
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError
from django.utils import timezone

from holds.models import SyncState
from holds.sweeps import heartbeat
from reviewqueue.sql import reads

BROKER_TIMEOUT_SECONDS = 1.0

Check = tuple[bool, str]


def database() -> Check:
    try:
        reads.database_answers()
    except DatabaseError as error:
        return False, "down: " + (
            "cannot connect" if isinstance(error, OperationalError | InterfaceError) else "query failed"
        )
    return True, "up"


def broker() -> Check:
    """Redis answers a PING; the filesystem broker of the quickstart is a folder, so there is nothing to ask."""
    if not settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://", "unix://")):
        return True, "not checked: local folder broker"
    client = redis.Redis.from_url(
        settings.CELERY_BROKER_URL, socket_connect_timeout=BROKER_TIMEOUT_SECONDS, socket_timeout=BROKER_TIMEOUT_SECONDS
    )
    try:
        client.ping()
    except redis.TimeoutError:
        return False, "down: timed out"
    except redis.RedisError:
        return False, "down: cannot connect"
    finally:
        client.close()
    return True, "up"


def syncs(now: datetime) -> dict[str, Check]:
    """Each configured env: its last successful sync is not ``heartbeat.overdue``, the rule the queue's banner
    follows, and its last reconciling walk not ``heartbeat.walk_overdue``."""
    states = SyncState.objects.filter(env__in=settings.AGENTOS_ENVS).values_list(
        "env", "last_success_at", "last_walk_ended_at"
    )
    last = {env: (success, walk_ended) for env, success, walk_ended in states}
    checks = {}
    for env in settings.AGENTOS_ENVS:
        success, walk_ended = last.get(env, (None, None))
        if success is None:
            checks[env] = (False, "never synced")
        elif heartbeat.walk_overdue(walk_ended, now):
            age = int((now - walk_ended).total_seconds())
            checks[env] = (False, f"last reconciling walk ended {age} s ago")
        else:
            age = int((now - success).total_seconds())
            checks[env] = (not heartbeat.overdue(success, now), f"last success {age} s ago")
    return checks


def beat(now: datetime) -> Check:
    """Some periodic task ran, and not ``heartbeat.stopped``: the worker heartbeat the queue's banner reads too."""
    last_run = heartbeat.last_run_at()
    if last_run is None:
        return False, "no periodic task has run yet"
    age = int((now - last_run).total_seconds())
    return not heartbeat.stopped(last_run, now), f"last periodic task {age} s ago"


def readiness() -> tuple[bool, dict]:
    """Every check, as the JSON body of /readyz; the database-backed ones are skipped when the database is down."""
    now = timezone.now()
    database_ok, database_detail = database()
    checks = {"database": (database_ok, database_detail), "broker": broker()}
    if database_ok:
        checks |= {f"sync:{env}": check for env, check in syncs(now).items()}
        checks["beat"] = beat(now)
    ready = all(ok for ok, _ in checks.values())
    body = {
        "status": "ready" if ready else "not ready",
        "checks": {name: {"ok": ok, "detail": detail} for name, (ok, detail) in checks.items()},
    }
    return ready, body
