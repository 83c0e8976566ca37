"""A search of the queue by any id or value reads the open holds' trigram index, right after a big sync.

A GIN index with its default 4 MB pending list would queue a sync's thousands of new
entries there until a VACUUM, and the planner, pricing that list, would read the whole
table instead; so the index keeps a 64 kB list (migration 0011), and the search's query
repeats the index's predicate (open holds) with a LIKE the trigram opclass serves.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from holds.queue import listing as queue

pytestmark = pytest.mark.django_db

TRIGRAM_INDEX = "hold_open_search_trgm"


def search_plan(text: str) -> str:
    """The plan Postgres makes for the queue's search for ``text``, as the page runs it."""
    filters = queue.Filters(q=text)
    with CaptureQueriesContext(connection) as queries:
        queue.page(filters, None, timezone.now(), "")
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {queries.captured_queries[0]['sql']}")
        return "\n".join(line for (line,) in cursor.fetchall())


@pytest.mark.parametrize("text", ["A-55010", "a-55010", "55010", "12.00"])
def test_a_search_after_a_big_sync_reads_the_trigram_index(alice_client, thousands_of_open_holds, text):
    rows = alice_client.get(reverse("queue"), {"q": text}).context["rows"]

    assert thousands_of_open_holds in [row.hold.hold_id for row in rows]
    plan = search_plan(text.lower())
    assert f"Bitmap Index Scan on {TRIGRAM_INDEX}" in plan, plan
    assert "Seq Scan on holds_hold" not in plan, plan


def test_the_trigram_index_keeps_a_short_pending_list(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [TRIGRAM_INDEX])
        (options,) = cursor.fetchone()

    assert "gin_pending_list_limit=64" in options
