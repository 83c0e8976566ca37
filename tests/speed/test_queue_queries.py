"""The queue page reads what it shows in at most 5 queries, however many holds are open."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from holds.mirror import sync
from holds.models import Hold
from tests.helpers.many_holds import copy_open_holds_up_to

pytestmark = pytest.mark.django_db

# Session, user, the viewer's groups, the page's holds, and the sync states with the bell's count and the page's
# possible duplicates (holds.related.duplicates.flags_query: a query of their own before, 5 queries before that).
MOST_QUERIES = 5


def queue_statements(client) -> list[str]:
    """The SQL of one look at the queue, after a first look (rows cached, the session's note of use made)."""
    client.get(reverse("queue"))
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("queue"))
    assert response.status_code == 200 and len(response.context["rows"]) == 50
    return [query["sql"] for query in queries.captured_queries]


def test_the_queue_reads_at_most_five_queries_alike_at_two_hundred_a_thousand_and_a_hundred_thousand_open_holds(
    alice_client, platform_client, platform_state
):
    platform_state.generate("default", 200)
    sync.sync_env(platform_client, "default")
    at_two_hundred = queue_statements(alice_client)
    copy_open_holds_up_to(1_000)
    at_a_thousand = queue_statements(alice_client)
    copy_open_holds_up_to(100_000)

    at_a_hundred_thousand = queue_statements(alice_client)

    assert Hold.objects.filter(status="open").count() == 100_000
    assert len(at_two_hundred) <= MOST_QUERIES, "\n\n".join(at_two_hundred)
    assert len(at_a_thousand) == len(at_two_hundred), "\n\n".join(at_a_thousand)
    assert len(at_a_hundred_thousand) == len(at_two_hundred), "\n\n".join(at_a_hundred_thousand)
