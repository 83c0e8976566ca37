"""A search of the queue by any id or value reads the open holds' trigram index, right after a big sync.

A GIN index with its default 4 MB pending list would queue a sync's thousands of new
entries there until a VACUUM, and the planner, pricing that list, would read the whole
table instead; so the index keeps a 64 kB list (migration 0011), and the search's query
repeats the index's predicate (open holds) with a LIKE the trigram opclass serves.
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from holds import queue, sync

pytestmark = pytest.mark.django_db

TRIGRAM_INDEX = "hold_open_search_trgm"


@pytest.fixture
def thousands_of_open_holds(platform_client, platform_state):
    """3,000 generated open holds and one with order A-55010, mirrored by one sync, with fresh statistics."""
    wanted = platform_state.add_hold(
        "default", {"agent": "refund-bot", "items": [{"id": "A-55010", "data": {"order_id": "A-55010", "amount": "12.00"}}]}
    )["hold_id"]
    platform_state.generate("default", 3000)
    sync.sync_env(platform_client, "default")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE holds_hold")  # as autovacuum soon would; no VACUUM, which would empty a pending list
    return wanted


def search_plan(text: str) -> str:
    """The plan Postgres makes for the queue's search for ``text``, as the page runs it."""
    matching = queue.filtered(queue.Filters(q=text), user=None, now=timezone.now())
    with CaptureQueriesContext(connection) as queries:
        queue.page(matching, "")
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


def saved_plan(queryset) -> str:
    """The plan a connection saves for the queryset's prepared statement and reuses whatever its parameters
    (reviewqueue/prepared.py): PostgreSQL's plan for any values, forced here instead of chosen."""
    sql, params = queryset.query.get_compiler(queryset.db).as_sql()
    numbers = iter(range(1, len(params) + 1))
    statement = re.sub(r"(?<!%)%s", lambda _: f"${next(numbers)}", sql).replace("%%", "%")
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE saved_plan_of_test AS {statement}")
        try:
            cursor.execute(f"EXPLAIN EXECUTE saved_plan_of_test({', '.join(['%s'] * len(params))})", params)
            return "\n".join(line for (line,) in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE saved_plan_of_test")
            cursor.execute("RESET plan_cache_mode")


def test_the_saved_plans_of_the_queue_and_its_search_read_the_open_holds_indexes(thousands_of_open_holds):
    # The open holds' indexes are partial: a plan for any parameters can use them only because the SQL
    # names the open status as a constant.
    def listing(**filters):
        return queue.ordered(queue.filtered(queue.Filters(**filters), user=None, now=timezone.now()))[:51]

    first_page = saved_plan(listing())
    search = saved_plan(listing(q="a-55010"))

    assert "Index Scan using hold_queue_order on holds_hold" in first_page, first_page
    assert f"Bitmap Index Scan on {TRIGRAM_INDEX}" in search, search
    assert "Seq Scan on holds_hold" not in first_page + search
