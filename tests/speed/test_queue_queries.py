"""The queue page reads what it shows in at most 6 queries, however many holds are open."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from holds.mirror import sync

pytestmark = pytest.mark.django_db

MOST_QUERIES = 6


def queue_statements(client) -> list[str]:
    """The SQL of one look at the queue, after a first look (rows cached, the session's note of use made)."""
    client.get(reverse("queue"))
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("queue"))
    assert response.status_code == 200
    return [query["sql"] for query in queries.captured_queries]


def test_the_queue_reads_at_most_six_queries_alike_at_two_hundred_and_at_twelve_hundred_open_holds(
    alice_client, platform_client, platform_state
):
    platform_state.generate("default", 200)
    sync.sync_env(platform_client, "default")
    at_two_hundred = queue_statements(alice_client)
    platform_state.generate("default", 1000)
    sync.sync_env(platform_client, "default")

    at_twelve_hundred = queue_statements(alice_client)

    assert len(at_two_hundred) <= MOST_QUERIES, "\n\n".join(at_two_hundred)
    assert len(at_twelve_hundred) == len(at_two_hundred), "\n\n".join(at_twelve_hundred)
