"""A hold's related holds and possible duplicates are a few index reads, alike at a thousand and a hundred thousand
open holds with a tenth of them sharing a subject."""

import pytest
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext

from holds.mirror import sync
from holds.models import Hold, HoldSubject
from holds.related import duplicates
from tests.helpers.many_holds import copy_open_holds_up_to

pytestmark = pytest.mark.django_db

MOST_QUERIES = (
    4  # the subjects with the rows sharing them, the holds with live decisions, their items, decisions' items
)


def relate_a_tenth() -> None:
    """Give every tenth hold without subjects a refund of an order another such hold refunds too: a tenth of the
    open holds related, in pairs."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO holds_holdsubject (hold_id, position, key, value, capability, action_kind) "
            "SELECT h.id, 0, 'order_id', 'x-' || (h.id / 20), h.capability, 'refund' FROM holds_hold h "
            "WHERE h.id % 10 = 0 AND NOT EXISTS (SELECT 1 FROM holds_holdsubject s WHERE s.hold_id = h.id)"
        )
        cursor.execute("ANALYZE holds_holdsubject")


def a_paired_hold() -> Hold:
    """A hold whose "x-" subject exactly one other hold of the same capability shares: the pairs are made by id, and
    the other id of a pair may be a hold that had subjects already, and so got none (the sequence's start moves with
    the tests run before)."""
    pair = (
        HoldSubject.objects.filter(value__startswith="x-")
        .values("value", "capability")
        .annotate(holds=Count("hold"))
        .filter(holds=2)
        .order_by("value")
        .first()
    )
    return HoldSubject.objects.filter(value=pair["value"], capability=pair["capability"]).order_by("pk").first().hold


def statements(hold: Hold) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        duplicates.possible_duplicates(hold)
    return [query["sql"] for query in queries.captured_queries]


def test_possible_duplicates_read_alike_at_a_thousand_and_a_hundred_thousand_open_holds(
    platform_client, platform_state
):
    platform_state.generate("default", 200)
    sync.sync_env(platform_client, "default")
    copy_open_holds_up_to(1_000)
    relate_a_tenth()
    hold = a_paired_hold()
    at_a_thousand = statements(hold)
    copy_open_holds_up_to(100_000)
    relate_a_tenth()

    at_a_hundred_thousand = statements(hold)

    assert Hold.objects.filter(status="open").count() == 100_000
    assert HoldSubject.objects.filter(value__startswith="x-").count() >= 9_900
    assert len(duplicates.possible_duplicates(hold)) == 1
    assert len(at_a_thousand) <= MOST_QUERIES, "\n\n".join(at_a_thousand)
    assert len(at_a_hundred_thousand) == len(at_a_thousand), "\n\n".join(at_a_hundred_thousand)
    lookup = next(sql for sql in at_a_hundred_thousand if '"value" IN' in sql)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + lookup.replace("%", "%%"))
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "subject_value_capability" in plan and "Seq Scan on holds_holdsubject" not in plan, plan
