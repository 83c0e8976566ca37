"""Make the audit table append-only in the database itself, add the search indexes, and start the chain.

Postgres: a trigger refuses every UPDATE and DELETE on audit events; a GIN index
serves the item-id filter, and a trigram index the search inside item data when
the pg_trgm extension can be created (without it the search still works, by
scanning). SQLite: triggers that abort UPDATE and DELETE.
"""

import logging

from django.db import DatabaseError, migrations, transaction

logger = logging.getLogger(__name__)

TABLE = "audit_auditevent"

POSTGRES_APPEND_ONLY = f"""
CREATE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_event_append_only BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE INDEX audit_item_ids ON {TABLE} USING gin (item_ids jsonb_path_ops);
"""

POSTGRES_DROP = f"""
DROP INDEX IF EXISTS audit_search_trgm;
DROP INDEX IF EXISTS audit_item_ids;
DROP TRIGGER IF EXISTS audit_event_append_only ON {TABLE};
DROP FUNCTION IF EXISTS audit_refuse_change();
"""

SQLITE_APPEND_ONLY = [
    f"CREATE TRIGGER audit_event_no_{operation.lower()} BEFORE {operation} ON {TABLE} "
    f"BEGIN SELECT RAISE(ABORT, 'audit events are append-only: {operation} refused'); END"
    for operation in ("UPDATE", "DELETE")
]

SQLITE_DROP = ["DROP TRIGGER IF EXISTS audit_event_no_update", "DROP TRIGGER IF EXISTS audit_event_no_delete"]


def append_only(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_APPEND_ONLY, params=None)  # no params: the body's "%" stays as written
        _trigram_index(schema_editor)
    elif connection.vendor == "sqlite":
        for statement in SQLITE_APPEND_ONLY:
            schema_editor.execute(statement)


def _trigram_index(schema_editor):
    try:
        with transaction.atomic(using=schema_editor.connection.alias):
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DatabaseError as error:
        logger.warning("pg_trgm is not available (%s): the audit search inside item data will scan", error)
        return
    schema_editor.execute(f"CREATE INDEX audit_search_trgm ON {TABLE} USING gin (search_text gin_trgm_ops)")


def drop_append_only(apps, schema_editor):
    connection = schema_editor.connection
    statements = {"postgresql": [POSTGRES_DROP], "sqlite": SQLITE_DROP}.get(connection.vendor, [])
    for statement in statements:
        schema_editor.execute(statement, params=None)


def start_chain(apps, schema_editor):
    apps.get_model("audit", "AuditChainHead").objects.get_or_create(pk=1, defaults={"sequence": 0, "hash": "0" * 64})


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [
        migrations.RunPython(append_only, drop_append_only),
        migrations.RunPython(start_chain, migrations.RunPython.noop),
    ]
