"""A covering index for /metrics' open-hold gauges, on the holds app's table.

The scrape groups the open holds by env and agent and takes their oldest creation and
nearest expiries: with this partial index it reads only the index (an index-only scan),
not the wide hold rows. It lives here, with the metrics that need it, and only on
PostgreSQL (INCLUDE); SQLite, for trying the app, has few holds.
"""

from django.db import migrations

INDEX = "operations_open_hold_stats"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON holds_hold (env, agent) INCLUDE (created_at, expires_at) "
            "WHERE status = 'open'"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("operations", "0001_initial"), ("holds", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
