"""Tens of thousands of holds in seconds: copies of those a sync mirrored, for tests (and benches) of how the queue
scales."""

from django.db import connection
from psycopg import sql

from holds.models import Hold


def copying_holds(changed: dict[str, str], source: str) -> sql.Composed:
    """An INSERT of a copy of each hold ``h`` that ``source`` (SQL after FROM, naming the copied hold ``h``) gives,
    every column as it is unless ``changed`` gives its SQL. The columns come from the model, so the copy follows the
    schema."""
    columns = [field.column for field in Hold._meta.concrete_fields if field.column != "id"]
    return sql.SQL("INSERT INTO holds_hold ({columns}) SELECT {values} FROM {source}").format(
        columns=sql.SQL(", ").join(map(sql.Identifier, columns)),
        values=sql.SQL(", ").join(sql.SQL(changed.get(column, f'h."{column}"')) for column in columns),
        source=sql.SQL(source),
    )


def copy_open_holds_up_to(total: int) -> None:
    """Copy the mirrored open holds (ids suffixed ``-x{total}-{n}``, created ``n`` seconds apart) until ``total`` are
    open.

    The copies have no items, payload or search text: the queue's pages read a hold's items only to draw a row they
    have not drawn before, and the others only to search. Statistics are refreshed, as autovacuum would.
    """
    open_count = Hold.objects.filter(status="open").count()
    mirrored = Hold.objects.filter(status="open").exclude(hold_id__contains="-x").count()
    copy = copying_holds(
        {
            "hold_id": "h.hold_id || '-x' || %(total)s || '-' || n",
            "run_id": "h.run_id || '-x' || %(total)s || '-' || n",
            "created_at": "h.created_at - n * interval '1 second'",
            # Neither is read by a queue page without a search, and copying them took most of the time.
            "payload": "'{}'::jsonb",
            "search_text": "''",
        },
        "holds_hold h CROSS JOIN generate_series(1, %(copies)s) n "
        "WHERE h.status = 'open' AND h.hold_id NOT LIKE '%%-x%%' ORDER BY n, h.id LIMIT %(missing)s",
    )
    parameters = {"total": total, "copies": -(-(total - open_count) // mirrored), "missing": total - open_count}
    with connection.cursor() as cursor:
        cursor.execute(copy.as_string(connection.connection), parameters)
        cursor.execute("ANALYZE holds_hold")
