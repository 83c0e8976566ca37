"""The queue's own reads as prepared statements: parsed and planned once per database connection, not per request.

PostgreSQL took longer to plan the queue's listing (0.34 ms) than to run it (0.16 ms), on
every request. Prepared, a connection keeps the statement and, once it has run it a few
times, a plan for any parameters, which it reuses. PostgreSQL itself keeps planning afresh a
statement whose plan for any parameters would cost clearly more than one made for the
values at hand (``plan_cache_mode`` auto). A condition that an index's predicate must
match, such as ``status = 'open'`` for the open holds' partial indexes, is therefore
written into the SQL as a constant: as a parameter, a plan made for any value could not
use those indexes.

Django leaves psycopg's prepared statements off, for connection poolers that cannot keep
them. The settings give psycopg a threshold that no query reaches, so nothing is
prepared by itself, and ``cursor`` prepares every statement it runs. On SQLite, or with the threshold left off, ``cursor`` is Django's
own.
"""

from __future__ import annotations

import psycopg
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.backends.utils import CursorDebugWrapper

class _PreparingCursor(psycopg.Cursor):
    """A cursor binding parameters on the server, which prepares every statement it runs.

    psycopg keeps up to ``prepared_max`` statements per connection (100 by default), the
    least recently run going first.
    """

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


def cursor(using: str = "default"):
    """A Django cursor (queries counted and logged as usual) whose statements are prepared, where the connection allows."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return connection.cursor()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    if connection.connection.prepare_threshold is None:
        return connection.cursor()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        preparing = _PreparingCursor(connection.connection)
    return _LoggedCursor(preparing, connection) if connection.queries_logged else connection.make_cursor(preparing)


class _LoggedCursor(CursorDebugWrapper):
    """Django's cursor that logs queries, logging a prepared statement with its parameters written in, as it logs others.

    (Django reads the statement it logs from psycopg, which keeps none for a prepared one.)
    """

    def execute(self, sql, params=None):
        with self.debug_sql(self.db.ops.compose_sql(sql, params)):
            return super(CursorDebugWrapper, self).execute(sql, params)


def constant(value: str) -> str:
    """A constant of the code (a plain word, such as a status) as an SQL string literal, for a condition that an
    index's predicate must match."""
    if not value.isidentifier():
        raise ValueError(f"{value!r} is no plain word")
    return f"'{value}'"


def rows(queryset) -> list[tuple]:
    """The rows of a ``values_list`` queryset, read through a prepared statement (see ``cursor``).

    Their columns come in the order the query selects them: the fields first, then the
    annotations, whatever the order ``values_list`` named them in.
    """
    compiler = queryset.query.get_compiler(queryset.db)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        return []
    with cursor(queryset.db) as prepared:
        prepared.execute(sql, params)
        fetched = prepared.fetchall()
    return list(compiler.results_iter([fetched], tuple_expected=True))
