"""The queue's own reads are prepared once per connection (reviewqueue/sql/prepared.py), and nothing else is."""

import re
from datetime import timedelta
from decimal import Decimal

import django.db
import psycopg
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from holds.models import Hold, SyncState
from holds.queue import freshness as queue_freshness
from holds.queue import listing as queue
from holds.sweeps import heartbeat
from reviewqueue.sql import prepared
from tests.helpers.preloaded import start_django
from tests.helpers.processes import suite_database_url

pytestmark = pytest.mark.django_db


def prepared_statements() -> dict[str, int]:
    """The statements prepared on this connection, each with how many times it ran."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def runs_reading(table: str, statements: dict[str, int]) -> int:
    return sum(runs for statement, runs in statements.items() if f"FROM {table}" in statement.replace('"', ""))


def test_the_queue_prepares_its_own_reads_and_runs_them_again_without_preparing(alice_client, samples):
    before = prepared_statements()
    for _ in range(3):
        page = alice_client.get(reverse("queue"))
    after = prepared_statements()

    assert page.status_code == 200 and len(page.context["rows"]) == len(samples)
    # Each page ran its listing, groups, sync states, bell and possible duplicates once more, as the statements
    # prepared before (the duplicates' statement reads holds_hold too, and its name starts holds_holdsubject's).
    runs = {"holds_hold": 6, "holds_holdsubject": 3, "auth_group": 3, "holds_syncstate": 3, "holds_notification": 3}
    for table, times in runs.items():
        assert runs_reading(table, after) - runs_reading(table, before) == times, table
    # The session's and the user's reads, Django's own, are not prepared.
    assert not [statement for statement in after if "django_session" in statement or "FROM auth_user " in statement]


def test_a_prepared_statement_is_logged_with_its_parameters_written_in(alice_client, samples):
    with CaptureQueriesContext(connection) as queries:
        alice_client.get(reverse("queue"))

    (listing,) = [query["sql"] for query in queries.captured_queries if 'AS "open_approvals"' in query["sql"]]
    assert "\"holds_hold\".status = 'open'" in listing
    assert "%s" not in listing and "$1" not in listing and not listing.startswith("QUERY")


def test_without_prepared_statements_the_queue_reads_the_same(alice_client, samples):
    alice_client.get(reverse("queue"))  # renders the rows: after that each row's hold is the row as listed
    with_them = [row.hold for row in alice_client.get(reverse("queue")).context["rows"]]
    threshold, connection.connection.prepare_threshold = connection.connection.prepare_threshold, None
    try:  # as DATABASE_PREPARED_STATEMENTS=false leaves a connection
        before = prepared_statements()
        without_them = [row.hold for row in alice_client.get(reverse("queue")).context["rows"]]
        assert prepared_statements() == before
    finally:
        connection.connection.prepare_threshold = threshold

    assert without_them == with_them and len(with_them) == len(samples)


@pytest.mark.parametrize("value, threshold", [(None, str(2**62)), ("false", "None")])
def test_prepared_statements_can_be_turned_off_for_a_connection_pooler(value, threshold):
    variables = {"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/any"}
    if value is not None:
        variables["DATABASE_PREPARED_STATEMENTS"] = value
    started = start_django(
        "from django.conf import settings; "
        "print(settings.DATABASES['default'].get('OPTIONS', {}).get('prepare_threshold'))",
        **variables,
    )

    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == [threshold]


def test_the_queue_refresh_runs_one_plan_for_any_moment_from_the_first_request(alice_client, samples):
    # Left to choose, PostgreSQL planned the sync states anew on every refresh, for the moment the count of new holds
    # starts from: the plan for any moment reads the same index, and planning took longer than running.
    refresh = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "queue-body"}
    for minutes in (1, 5, 60):
        loaded_at = (timezone.now() - timedelta(minutes=minutes)).isoformat()
        alice_client.get(reverse("queue"), {"loaded_at": loaded_at}, **refresh)

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
        plans = {statement: (generic, custom) for statement, generic, custom in cursor.fetchall()}
    states = [runs for statement, runs in plans.items() if "FROM holds_syncstate" in statement.replace('"', "")]
    assert states and all(custom == 0 and generic >= 3 for generic, custom in states), plans


def test_the_plan_for_any_parameters_comes_after_the_urls_own_server_options():
    started = start_django(
        "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS']['options'])",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/any?options=-c%20search_path%3Dqueue",
    )

    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == "-c search_path=queue -c plan_cache_mode=force_generic_plan"


@pytest.mark.parametrize("value", ["open", "in_app"])
def test_a_constant_is_written_as_a_string_literal(value):
    assert prepared.literal(value) == f"'{value}'"


@pytest.mark.parametrize("value", ["it's", "open OR 1=1", "", "a-b"])
def test_a_constant_must_be_a_plain_word(value):
    with pytest.raises(ValueError, match="no plain word"):
        prepared.literal(value)


def saved_plan(queryset) -> str:
    """The plan a connection keeps for the queryset's prepared statement and reuses whatever its parameters:
    PostgreSQL's plan for any values, forced here rather than chosen."""
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


@pytest.mark.parametrize(
    "sort, index", [("expiry", "hold_queue_order"), ("age", "hold_queue_oldest"), ("amount", "hold_queue_largest")]
)
def test_the_saved_plan_of_the_queue_in_each_order_reads_its_index(thousands_of_open_holds, sort, index):
    # The open holds' indexes are partial, and the largest-first one indexes an expression: a plan for any
    # parameters can use them only because the SQL writes the open status and the -1 as literals.
    filters, order = queue.Filters(sort=sort), queue.ORDERS[sort]
    holds = queue.filtered(filters, viewer=None, now=timezone.now())
    listed, _ = queue.page(filters, None, timezone.now(), "")
    last = listed[-1]
    after_last = order.after(getattr(last, order.field) if order.field else None, last.created_at, last.pk)
    first_page = queue.ordered(holds, sort)[:51]
    next_page = queue.ordered(holds.filter(after_last), sort)[:51]

    for plan in (saved_plan(first_page), saved_plan(next_page)):
        assert f"Index Scan using {index} on holds_hold" in plan, plan
        assert "Seq Scan on holds_hold" not in plan, plan


def test_a_search_is_planned_for_its_own_words_not_prepared(alice_client, thousands_of_open_holds):
    # For any words, PostgreSQL would keep a plan that reads every hold the trigram index finds and sorts them:
    # several times slower for a common word than the plan for that word, which stops after a page.
    loaded_at = (timezone.now() - timedelta(minutes=5)).isoformat()
    refresh = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "queue-body"}
    for _ in range(7):
        rows = alice_client.get(reverse("queue"), {"q": "A-55010"}).context["rows"]
        refreshed = alice_client.get(reverse("queue"), {"q": "A-55010", "loaded_at": loaded_at}, **refresh)

    assert thousands_of_open_holds in [row.hold.hold_id for row in rows]
    assert refreshed.context["new_count"] == 1  # the page and its count of new holds, both planned for the words
    assert not [statement for statement in prepared_statements() if "search_text" in statement]


@pytest.mark.django_db(transaction=True)
def test_a_statement_prepared_before_a_migration_changed_its_columns_still_reads(alice_client):
    alice_client.get(reverse("queue"))  # prepares the reviewer's groups, which read auth_group's name
    with psycopg.connect(suite_database_url(), autocommit=True) as migration:
        migration.execute("ALTER TABLE auth_group ALTER COLUMN name TYPE varchar(151)")
        try:
            page = alice_client.get(reverse("queue"))
            again = alice_client.get(reverse("queue"))
        finally:
            migration.execute("ALTER TABLE auth_group ALTER COLUMN name TYPE varchar(150)")

    assert page.status_code == again.status_code == 200
    assert b"Nothing to review" in page.content


@pytest.mark.parametrize("sort", queue.ORDERS)
def test_a_prepared_read_gives_the_rows_the_orm_gives(samples, bob, sort):
    # reviewqueue/sql/prepared.py reads rows as psycopg gives them: right only while Django applies no converter to
    # the listing's columns (amounts, times, counts, claimants) and selects nothing beyond them. A Django that
    # starts to fails here.
    Hold.objects.filter(pk=min(hold.pk for hold in samples.values())).update(
        claimed_by=bob, claim_expires_at=timezone.now() + timedelta(minutes=5)
    )
    listing = queue.ordered(queue.filtered(queue.Filters(sort=sort), viewer=None, now=timezone.now()), sort)[:51]

    read, iterated = prepared.read(listing.query.sql_with_params()), list(listing)

    assert read == iterated and len(read) == len(samples)
    assert [tuple(map(type, row)) for row in read] == [tuple(map(type, row)) for row in iterated]
    assert {type(row[9]) for row in read} >= {Decimal, type(None)}  # amounts, and holds without one
    assert any(row[12] == "bob" for row in read)


def test_the_sync_states_read_in_one_statement_are_the_orms(samples):
    heartbeat.record_run(next(iter(heartbeat.periodic_task_names())))
    with CaptureQueriesContext(connection) as queries:
        (state,) = queue_freshness.sync_states()

    assert len(queries) == 1
    stored = SyncState.objects.get()
    assert [getattr(state, field.attname) for field in SyncState._meta.concrete_fields] == [
        getattr(stored, field.attname) for field in SyncState._meta.concrete_fields
    ]
    assert state.periodic_last_run_at == heartbeat.last_run_at() is not None


def test_a_prepared_read_is_counted_and_fails_as_djangos_do(samples):
    # The Django internals reviewqueue/sql/prepared.py's cursor relies on: its wrapper counts and logs the
    # statement, and raises Django's errors, not psycopg's.
    with (
        CaptureQueriesContext(connection) as queries,
        pytest.raises(django.db.ProgrammingError),
        prepared.cursor() as cursor,
    ):
        cursor.execute("SELECT no_such_column FROM holds_hold WHERE id = %s", [1])

    assert [query["sql"] for query in queries.captured_queries] == [
        "SELECT no_such_column FROM holds_hold WHERE id = 1"
    ]
