"""The database settings, read from the environment: PostgreSQL from ``DATABASE_URL``, else the quickstart's SQLite.

On PostgreSQL, psycopg prepares a statement by itself once it has run this many times:
never (``prepare_threshold``). Only the statements ``reviewqueue/sql/prepared.py`` runs are
prepared (Django's default, None, would forbid those too), and each runs its plan for any
parameters from the first time (``plan_cache_mode``): that module's contract admits only
statements whose best plan does not depend on their parameters' values. Left to choose,
PostgreSQL planned the queue's sync states anew on every request, for the count of holds
new since a moment, though its plan for any moment reads the same index. Planning took
longer than running. A connection pooler that cannot keep prepared statements turns both
off (``DATABASE_PREPARED_STATEMENTS=false``).
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from reviewqueue import environment as env

PLAN_FOR_ANY_PARAMETERS = "-c plan_cache_mode=force_generic_plan"


def from_environment(var_dir: Path) -> dict:
    """The default database's settings: ``DATABASE_URL``'s, or SQLite in ``var_dir`` without it."""
    database_url = env.string("DATABASE_URL")
    if not database_url:
        var_dir.mkdir(parents=True, exist_ok=True)
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": var_dir / "reviewqueue.sqlite3",
            # Web, worker and beat share one file: wait for locks, and take the write lock up front (no deadlock).
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    try:
        database = dj_database_url.parse(
            database_url, conn_max_age=env.integer("DATABASE_CONN_MAX_AGE", 60), conn_health_checks=True
        )
    except ValueError as error:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {error}") from None
    if database["ENGINE"] == "django.db.backends.postgresql" and env.boolean("DATABASE_PREPARED_STATEMENTS", True):
        options = database.setdefault("OPTIONS", {})
        options.setdefault("prepare_threshold", 2**62)
        # After any server options the URL gives (``?options=...``), so that this one stands.
        options["options"] = f"{options.get('options', '')} {PLAN_FOR_ANY_PARAMETERS}".lstrip()
    return database
