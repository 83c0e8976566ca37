"""The queue's own reads as prepared statements: parsed and planned once per database connection, not per request.

PostgreSQL took longer to plan the queue's listing than to run it, on every request.
Prepared, a connection keeps the statement and, once it has run it a few times, a plan made
for any parameters, which it then reuses. Only statements whose best plan does not depend on
their parameters' values belong here: PostgreSQL keeps the plan for any values whenever its
estimate looks no worse, and for a search, say, that estimate is wrong (the unfiltered queue
is prepared; its searches and filters are not).

A condition that an index's predicate or expression must match, such as
``status = 'open'`` for the open holds' partial indexes, is written into the SQL as a
literal (``literal``): as a parameter, a plan for any value could not use those indexes.

Django leaves psycopg's prepared statements off, for connection poolers that cannot keep
them. The settings give psycopg a threshold that no query reaches, so nothing is prepared
by itself, and ``cursor`` prepares every statement it runs. On SQLite, or with
``DATABASE_PREPARED_STATEMENTS`` off, ``cursor`` is Django's own.

``read`` runs a queryset's own SQL (``query.sql_with_params()``, or reviewqueue/sql/compiled.py's) and returns the
rows as psycopg reads them, which Django's compiler would otherwise have converted: its
contract says for which columns that gives the ORM's values, and a test pins it.
"""

from __future__ import annotations

import psycopg
from django.db import connections
from django.db.backends.utils import CursorDebugWrapper
from psycopg.pq import TransactionStatus

# A statement prepared before a migration changed its columns' types ("cached plan must not change result type"),
# or one the server no longer has.
_STALE = (psycopg.errors.FeatureNotSupported, psycopg.errors.InvalidSqlStatementName)


class _PreparingCursor(psycopg.Cursor):
    """A cursor binding parameters on the server, which prepares every statement it runs.

    psycopg keeps up to ``prepared_max`` statements per connection (100 by default), the
    least recently run going first.
    """

    def execute(self, query, params=None, *, prepare=None, binary=None):
        try:
            return super().execute(query, params, prepare=True, binary=binary)
        except _STALE:
            # Outside a transaction the statement can run unprepared instead, until the connection ends (within
            # CONN_MAX_AGE) and its successor prepares afresh. Inside one the error stands: the transaction is
            # over, and its rollback empties psycopg's statements.
            if self.connection.info.transaction_status != TransactionStatus.IDLE:
                raise
            return super().execute(query, params, prepare=False, binary=binary)


class _LoggedCursor(CursorDebugWrapper):
    """Django's cursor that logs queries, logging a prepared statement with its parameters written in, as it logs
    others.

    (Django reads the statement it logs from psycopg, which keeps no text of a prepared one.)
    """

    def execute(self, sql, params=None):
        try:
            logged = self.db.ops.compose_sql(sql, params)
        except psycopg.Error:  # a value only the server can read: logged as written
            logged = sql
        with self.debug_sql(logged, params):
            return super(CursorDebugWrapper, self).execute(sql, params)


def cursor(using: str = "default"):
    """A Django cursor (queries counted and logged as usual, errors as Django's) whose statements are prepared, where
    the connection allows; Django's own cursor on SQLite or with ``DATABASE_PREPARED_STATEMENTS`` off.

    Django has no public way to hand its cursor wrapper another DB-API cursor: this leans on its connection's
    internals, pinned by tests/speed/test_prepared.py (``test_a_prepared_read_is_*``), which fail on a Django that
    changes them.
    """
    connection = connections[using]
    if not preparing(using):
        return connection.cursor()
    with connection.wrap_database_errors:
        prepares = _PreparingCursor(connection.connection)
    return _LoggedCursor(prepares, connection) if connection.queries_logged else connection.make_cursor(prepares)


def preparing(using: str = "default") -> bool:
    """Whether ``cursor`` prepares its statements on this connection (opened, if it was not)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return False
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    return connection.connection.prepare_threshold is not None


def literal(value: str) -> str:
    """A constant of the code (a plain word, such as a status) as an SQL string literal, for a condition that an
    index's predicate must match."""
    if not value.isidentifier():
        raise ValueError(f"{value!r} is no plain word")
    return f"'{value}'"


def read(query: tuple[str, tuple], scalars: tuple[tuple[str, tuple], ...] = (), prepare: bool = True) -> list[tuple]:
    """The rows of ``query``, each followed by the value of each query in ``scalars``: one statement on PostgreSQL,
    prepared unless ``prepare`` is false. Each query is SQL and its parameters, as a queryset's
    ``query.sql_with_params()`` gives them; each of ``scalars`` gives one row of one column.

    Contract: the rows are the ORM's own only where PostgreSQL gives every column as the ORM reads it (no field or
    backend converter applies: text, integers, decimals, timestamps with time zone, arrays of text) and the query
    orders by no expression it does not select (else Django selects it too). The queue's listing and the sync states
    are such queries, pinned by tests/speed/test_prepared.py::test_a_prepared_read_gives_the_rows_the_orm_gives.
    """
    sql, params = query
    if scalars:
        values = ", ".join(f"({scalar})" for scalar, _ in scalars)
        sql, params = f"SELECT listed.*, {values} FROM ({sql}) listed", (*(p for _, ps in scalars for p in ps), *params)
    with cursor() if prepare else connections["default"].cursor() as prepared:
        prepared.execute(sql, params)
        return prepared.fetchall()
