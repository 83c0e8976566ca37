"""The queue's own reads are prepared once per connection (reviewqueue/prepared.py), and nothing else is."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviewqueue import prepared
from tests.test_settings import start_django

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
    # Each page ran its listing, groups, sync states and bell once more, as the statements prepared before.
    for table in ("holds_hold", "auth_group", "holds_syncstate", "holds_notification"):
        assert runs_reading(table, after) - runs_reading(table, before) == 3, table
    # The session's and the user's reads, Django's own, are not prepared.
    assert not [statement for statement in after if "django_session" in statement or "FROM auth_user " in statement]


def test_a_prepared_statement_is_logged_with_its_parameters_written_in(alice_client, samples):
    with CaptureQueriesContext(connection) as queries:
        alice_client.get(reverse("queue"))

    (listing,) = [query["sql"] for query in queries.captured_queries if 'AS "open_approvals"' in query["sql"]]
    assert "\"holds_hold\".status = 'open'" in listing
    assert "%s" not in listing and "$1" not in listing and not listing.startswith("QUERY")


def test_without_prepared_statements_the_queue_reads_the_same(alice_client, samples):
    with_them = [row.hold.pk for row in alice_client.get(reverse("queue")).context["rows"]]
    threshold, connection.connection.prepare_threshold = connection.connection.prepare_threshold, None
    try:  # as DATABASE_PREPARED_STATEMENTS=false leaves a connection
        before = prepared_statements()
        without_them = [row.hold.pk for row in alice_client.get(reverse("queue")).context["rows"]]
        assert prepared_statements() == before
    finally:
        connection.connection.prepare_threshold = threshold

    assert without_them == with_them and len(with_them) == len(samples)


@pytest.mark.parametrize("value, threshold", [(None, "2**62"), ("false", "None")])
def test_prepared_statements_can_be_turned_off_for_a_connection_pooler(value, threshold):
    variables = {"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/any"}
    if value is not None:
        variables["DATABASE_PREPARED_STATEMENTS"] = value
    started = start_django(
        "from django.conf import settings; print(settings.DATABASES['default'].get('OPTIONS', {}).get('prepare_threshold'))",
        **variables,
    )

    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == [str(eval(threshold))]  # noqa: S307 (the test's own constant)


@pytest.mark.parametrize("value", ["open", "in_app"])
def test_a_constant_is_written_as_a_string_literal(value):
    assert prepared.constant(value) == f"'{value}'"


@pytest.mark.parametrize("value", ["it's", "open OR 1=1", "", "a-b"])
def test_a_constant_must_be_a_plain_word(value):
    with pytest.raises(ValueError, match="no plain word"):
        prepared.constant(value)
