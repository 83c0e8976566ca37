"""The queue's filter choices and search without a scan of the open holds.

``FilterValue`` holds each env's agents, capabilities and env as of its last sync
(seeded here from the mirror). Search by any id or value uses a trigram index on the
open holds' ``search_text`` when the pg_trgm extension can be created; without it the
search still works, by scanning.
"""

import logging

from django.db import DatabaseError, migrations, models, transaction

logger = logging.getLogger(__name__)

TABLE = "holds_hold"
OPEN = "WHERE status = 'open'"
TRIGRAM_INDEX = "hold_open_search_trgm"


def create_indexes(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        _trigram_index(schema_editor)


def _trigram_index(schema_editor):
    try:
        with transaction.atomic(using=schema_editor.connection.alias):
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DatabaseError as error:
        logger.warning("pg_trgm is not available (%s): the queue's search will scan the open holds", error)
        return
    schema_editor.execute(f"CREATE INDEX {TRIGRAM_INDEX} ON {TABLE} USING gin (search_text gin_trgm_ops) {OPEN}")


def drop_indexes(apps, schema_editor):
    schema_editor.execute(f"DROP INDEX IF EXISTS {TRIGRAM_INDEX}")


def seed_filter_values(apps, schema_editor):
    Hold = apps.get_model("holds", "Hold")
    FilterValue = apps.get_model("holds", "FilterValue")
    combinations = Hold.objects.filter(status="open").values_list("env", "agent", "capability").distinct().order_by()
    values = set()
    for env, agent, capability in combinations:
        values |= {(env, "env", env), (env, "agent", agent), (env, "capability", capability)}
    FilterValue.objects.bulk_create(
        [FilterValue(env=env, kind=kind, value=value) for env, kind, value in values if len(value) <= 500],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [("holds", "0009_queue_amount")]

    operations = [
        migrations.CreateModel(
            name="FilterValue",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("env", models.CharField(max_length=100)),
                (
                    "kind",
                    models.CharField(
                        choices=[("agent", "Agent"), ("capability", "Capability"), ("env", "Env")], max_length=16
                    ),
                ),
                ("value", models.TextField()),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("env", "kind", "value"), name="filter_value_once")],
            },
        ),
        migrations.RunPython(create_indexes, drop_indexes),
        migrations.RunPython(seed_filter_values, migrations.RunPython.noop),
    ]
