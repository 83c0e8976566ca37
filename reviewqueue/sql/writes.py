"""Writes the ORM cannot say in one statement: COPY for tens of thousands of rows, and an upsert.

COPY costs a fraction of INSERT's time per row, but returns no ids and takes each
column as text: ``new_ids`` draws the ids beforehand, ``json_text`` writes a JSON
column's value, and ``copy`` streams the rows inside the caller's transaction.
``upsert_sql`` inserts a row or updates the one its unique columns already name, in one
statement (the ORM's ``update_or_create`` takes two, and a transaction).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable

from django.db import connection

# Made once: ``json.dumps`` makes an encoder on every call that asks for other than its defaults.
_encode_json = json.JSONEncoder(ensure_ascii=False).encode


def json_text(value) -> str | None:
    """A JSON column's value as COPY takes it; None stays SQL NULL, as the ORM stores it."""
    return None if value is None else _encode_json(value)


def new_ids(model, count: int) -> list[int]:
    """``count`` ids from the model's id sequence, in one query: COPY returns none, and related rows need them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, model._meta.pk.column, count],
        )
        return sorted(row[0] for row in cursor.fetchall())


def copy(model, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """Write rows into the model's table with COPY, in the current transaction; errors as Django's, as the ORM raises
    them."""
    quote = connection.ops.quote_name
    sql = f"COPY {quote(model._meta.db_table)} ({', '.join(map(quote, columns))}) FROM STDIN"
    connection.ensure_connection()
    started = time.monotonic()
    with connection.wrap_database_errors, connection.connection.cursor() as cursor, cursor.copy(sql) as writer:
        for row in rows:
            writer.write_row(row)
    if connection.queries_logged:  # counted and shown like the ORM's statements, e.g. by tests' query counts
        connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})


def upsert_sql(model, columns: tuple[str, ...], unique: tuple[str, ...], updated: tuple[str, ...]) -> str:
    """One statement, for PostgreSQL and SQLite alike, inserting a row of ``model``'s table with ``columns``
    (parameters in that order) or, where a row with the same ``unique`` columns exists (they must form a unique
    constraint), setting its ``updated`` columns to the new row's; with no ``updated`` columns, keeping the row that
    exists as it is. Needs no transaction around it."""
    quote = connection.ops.quote_name
    on_conflict = (
        f"DO UPDATE SET {', '.join(f'{quote(name)} = EXCLUDED.{quote(name)}' for name in updated)}"
        if updated
        else "DO NOTHING"
    )
    return (
        f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(map(quote, columns))})"
        f" VALUES ({', '.join(['%s'] * len(columns))})"
        f" ON CONFLICT ({', '.join(map(quote, unique))}) {on_conflict}"
    )


def upsert(upsert: str, params: list) -> None:
    """Run ``upsert_sql``'s statement with its parameters."""
    with connection.cursor() as cursor:
        cursor.execute(upsert, params)


def upsert_then(upserts: list[tuple[str, list]], queryset) -> list:
    """Run the ``upserts`` (``upsert_sql``'s statements, each with its parameters), then ``queryset``, in one round
    trip: a ``WITH`` on PostgreSQL only (SQLite allows no INSERT inside one). The queryset reads the rows as they were
    before the upserts; returns its model instances."""
    sql, params = queryset.query.sql_with_params()
    noted = ", ".join(f"noted{index or ''} AS ({upsert})" for index, (upsert, _) in enumerate(upserts))
    upsert_params = [param for _, upsert_params in upserts for param in upsert_params]
    return list(queryset.model.objects.raw(f"WITH {noted} {sql}", [*upsert_params, *params]))
