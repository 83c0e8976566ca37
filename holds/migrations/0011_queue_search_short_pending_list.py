"""The queue's search uses its trigram index from the first sync on, and the refresh counts new holds by index.

A GIN index queues new entries in a pending list until it is full (4 MB by default)
or a VACUUM runs; after a bulk sync the planner prices a scan of that list above
reading the whole table, and the search reads every open hold until autovacuum comes
by. A 64 kB list (the least allowed) is flushed every few hundred holds, still in bulk:
searches keep to the index, and a sync's inserts cost about half of what filing each
entry at once (no pending list) would.
"""

from django.db import migrations, models

TRIGRAM_INDEX = "hold_open_search_trgm"
PENDING_LIST_KB = 64


def _trigram_index_exists(schema_editor) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [TRIGRAM_INDEX])
        return cursor.fetchone() is not None


def shorten_pending_list(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql" and _trigram_index_exists(schema_editor):
        schema_editor.execute(f"ALTER INDEX {TRIGRAM_INDEX} SET (gin_pending_list_limit = {PENDING_LIST_KB})")
        schema_editor.execute("SELECT gin_clean_pending_list(%s::regclass)", [TRIGRAM_INDEX])


def restore_pending_list(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql" and _trigram_index_exists(schema_editor):
        schema_editor.execute(f"ALTER INDEX {TRIGRAM_INDEX} RESET (gin_pending_list_limit)")


class Migration(migrations.Migration):
    dependencies = [("holds", "0010_queue_search")]

    operations = [
        migrations.AddIndex(
            model_name="hold",
            index=models.Index(
                condition=models.Q(("status", "open")), fields=["first_seen_at"], name="hold_open_first_seen"
            ),
        ),
        migrations.RunPython(shorten_pending_list, restore_pending_list),
    ]
