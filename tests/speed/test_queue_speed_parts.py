"""The queue's filter choices and search cost the same however many holds are open.

The choices are the values sync stored (``FilterValue``), as fresh as the mirror:
each sync replaces them with its listing's; the search uses a trigram index on the open holds.
"""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from holds.deciding import decisions, delivery
from holds.mirror import sync
from holds.models import FilterValue, Hold
from holds.queue import filter_values as queue_filter_values
from holds.queue import freshness as queue_freshness
from holds.queue import listing as queue
from holds.sweeps import expiry
from notifications import notify
from teams import scopes

pytestmark = pytest.mark.django_db


def offered(client, name: str) -> list[str]:
    """The values the queue page's ``name`` filter offers a reviewer, "any" aside."""
    page = client.get(reverse("queue")).content.decode()
    select = re.search(rf'<select name="{name}">(.*?)</select>', page, re.S).group(1)
    return [value for value in re.findall(r"<option[^>]*>([^<]*)</option>", select) if value != "any"]


def hold(platform_state, agent: str, capability: str = "support", **fields) -> str:
    return platform_state.add_hold("default", {"agent": agent, "capability": capability, **fields})["hold_id"]


def test_each_agent_is_offered_from_the_sync_that_brings_it_to_the_sync_after_its_last_hold_closed(
    alice_client, alice, platform_client, platform_state, immediate_delivery
):
    hold(platform_state, "refund-bot")
    sync.sync_env(platform_client, "default")
    assert offered(alice_client, "agent") == ["refund-bot"]

    # New agents, in another capability, show at the next refresh after the sync that stored them.
    decided_here = hold(platform_state, "billing-bot", "billing")
    decided_elsewhere = hold(platform_state, "shipping-bot", "shipping")
    expiring = hold(platform_state, "late-bot", "late", expires_at=platform_state.now() + timedelta(minutes=5))
    sync.sync_env(platform_client, "default")
    assert offered(alice_client, "agent") == ["billing-bot", "late-bot", "refund-bot", "shipping-bot"]
    assert offered(alice_client, "capability") == ["billing", "late", "shipping", "support"]
    assert offered(alice_client, "env") == ["default"]

    # A reviewer's decision, once the platform has it: gone at the next sync.
    billing = Hold.objects.get(hold_id=decided_here)
    decision = decisions.submit(
        billing, alice, [decisions.ItemChoice(item.item_id, "approve") for item in billing.items.all()]
    )
    delivery.deliver(decision.pk, platform_client)
    assert Hold.objects.get(hold_id=decided_here).status == Hold.Status.DECIDED
    sync.sync_env(platform_client, "default")
    assert offered(alice_client, "agent") == ["late-bot", "refund-bot", "shipping-bot"]

    # The expiry of the agent's last hold, once the platform's clock has passed it too.
    platform_state.advance_clock(6 * 60)
    expiry.sweep(now=Hold.objects.get(hold_id=expiring).expires_at + timedelta(seconds=1))
    sync.sync_env(platform_client, "default")
    assert offered(alice_client, "agent") == ["refund-bot", "shipping-bot"]
    assert offered(alice_client, "capability") == ["shipping", "support"]

    # A decision made in another tool, which sync learns.
    platform_state.decide_elsewhere("default", decided_elsewhere, "bob@elsewhere")
    sync.sync_env(platform_client, "default")
    assert offered(alice_client, "agent") == ["refund-bot"]

    assert set(FilterValue.objects.values_list("agent", flat=True)) == {"refund-bot"}


def test_an_unchanged_resync_neither_reads_nor_writes_the_filter_values(alice_client, platform_client, platform_state):
    hold(platform_state, "refund-bot")
    sync.sync_env(platform_client, "default")
    with CaptureQueriesContext(connection) as queries:
        sync.sync_env(platform_client, "default")
    assert not [query for query in queries.captured_queries if "holds_filtervalue" in query["sql"]]
    assert offered(alice_client, "agent") == ["refund-bot"]


def offered_to(user) -> dict[str, list[str]]:
    return queue_filter_values.filter_values(scopes.viewer_of(user), queue_freshness.sync_states())


def test_the_filter_choices_come_from_the_cache_until_a_sync_changes_them(alice, platform_client, platform_state):
    hold(platform_state, "refund-bot")
    sync.sync_env(platform_client, "default")
    assert offered_to(alice)["agent"] == ["refund-bot"]

    sync.sync_env(platform_client, "default")  # unchanged: the cached choices still hold
    with CaptureQueriesContext(connection) as queries:
        assert offered_to(alice)["agent"] == ["refund-bot"]
    assert not [query for query in queries.captured_queries if "holds_filtervalue" in query["sql"]]

    hold(platform_state, "billing-bot")
    sync.sync_env(platform_client, "default")
    assert offered_to(alice)["agent"] == [
        "billing-bot",
        "refund-bot",
    ]


def test_a_capability_too_long_to_index_is_stored_and_queued_but_not_offered(
    alice_client, platform_client, platform_state
):
    hold_id = hold(platform_state, "refund-bot", "c" * 5000)
    sync.sync_env(platform_client, "default")
    assert Hold.objects.filter(hold_id=hold_id, status=Hold.Status.OPEN).exists()
    assert offered(alice_client, "capability") == []
    assert [row.hold.hold_id for row in alice_client.get(reverse("queue")).context["rows"]] == [hold_id]


def plan_of(run) -> str:
    """The plan Postgres makes, with statistics, for the one query ``run`` makes."""
    with CaptureQueriesContext(connection) as queries:
        run()
    assert len(queries.captured_queries) == 1
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE holds_hold")
        cursor.execute(f"EXPLAIN {queries.captured_queries[0]['sql']}")
        return "\n".join(line for (line,) in cursor.fetchall())


def test_the_filter_choices_read_no_hold(alice, platform_client, platform_state):
    platform_state.generate("default", 300)
    sync.sync_env(platform_client, "default")
    viewer = scopes.viewer_of(alice)  # read with her roles, once a request
    with CaptureQueriesContext(connection) as queries:
        choices = queue_filter_values.filter_values(viewer)
    assert len(queries.captured_queries) == 1 and "holds_hold" not in queries.captured_queries[0]["sql"]
    assert choices["env"] == ["default"] and choices["agent"]


def test_a_search_by_any_id_or_value_finds_it_among_the_open_holds_through_their_trigram_index(
    alice_client, platform_client, platform_state
):
    wanted = hold(platform_state, "refund-bot", items=[{"id": "A-55010", "data": {"order_id": "A-55010"}}])
    platform_state.generate("default", 50)
    sync.sync_env(platform_client, "default")
    rows = alice_client.get(reverse("queue"), {"q": "a-55010"}).context["rows"]
    assert [row.hold.hold_id for row in rows] == [wanted]
    # A few hundred holds are cheaper to read whole; bench.queue prints the plan at 10,000 and 100,000.
    with connection.cursor() as cursor:
        index = connection.introspection.get_constraints(cursor, "holds_hold")["hold_open_search_trgm"]
    assert index["columns"] == ["search_text"] and index["type"] == "gin"


def test_the_queues_refresh_counts_no_bell_and_the_page_shows_its_count(
    alice_client, alice, platform_client, platform_state
):
    hold(platform_state, "refund-bot")
    sync.sync_env(platform_client, "default")
    notify.expiring_soon([Hold.objects.get()], timezone.now())
    page = alice_client.get(reverse("queue")).content.decode()

    with CaptureQueriesContext(connection) as queries:
        refresh = alice_client.get(reverse("queue"), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="queue-body")
    read = [query["sql"] for query in queries.captured_queries]

    assert "Notifications: 1 unread" in page
    assert refresh.status_code == 200 and "Notifications:" not in refresh.content.decode()
    assert len(read) == 5 and not [
        sql for sql in read if "holds_notification" in sql
    ]  # session, user, groups, holds, and the syncs with the possible duplicates among the holds


def test_the_open_holds_are_the_same_read_directly_or_as_another_querys_subquery(
    alice, platform_client, platform_state
):
    hold(platform_state, "refund-bot")
    hold(platform_state, "billing-bot")
    sync.sync_env(platform_client, "default")
    decided = Hold.objects.get(agent="billing-bot")
    decisions.submit(decided, alice, [decisions.ItemChoice(item.item_id, "approve") for item in decided.items.all()])

    direct = set(queue.open_holds().values_list("agent", flat=True))
    nested = set(Hold.objects.filter(pk__in=queue.open_holds().values("pk")).values_list("agent", flat=True))

    assert direct == nested == {"refund-bot"}


def test_the_filter_form_comes_from_the_cache_and_shows_each_reviewers_own_choices(
    alice_client, platform_client, platform_state
):
    hold(platform_state, "refund-bot")
    sync.sync_env(platform_client, "default")
    alice_client.get(reverse("queue"))

    with CaptureQueriesContext(connection) as queries:
        chosen = alice_client.get(reverse("queue"), {"agent": "refund-bot", "q": '"><b>x'}).content.decode()
    plain = alice_client.get(reverse("queue")).content.decode()

    assert "<option selected>refund-bot</option>" in chosen and 'value="&quot;&gt;&lt;b&gt;x"' in chosen
    assert "<option selected>" not in plain and 'name="q" value=""' in plain
    assert not [query for query in queries.captured_queries if "holds_filtervalue" in query["sql"]]


SQLITE_QUEUE = """
from datetime import timedelta
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone
from holds.models import Hold, PeriodicRun, SyncState
from reviewqueue import roles

now = timezone.now()
Hold.objects.create(
    env="default", hold_id="h1", run_id="r1", agent="a", capability="c", question="Refund the kettle?", payload={},
    payload_digest="d", created_at=now - timedelta(minutes=10), first_seen_at=now, last_synced_at=now,
)
SyncState.objects.create(env="default", last_success_at=now)
PeriodicRun.objects.create(task="sync", last_run_at=now)
reviewer = User.objects.create(username="alice")
reviewer.groups.add(Group.objects.get_or_create(name=roles.REVIEWERS)[0])
browser = Client(HTTP_HOST="localhost")
browser.force_login(reviewer)
page = browser.get("/")
refresh = browser.get("/", {"loaded_at": (now - timedelta(minutes=1)).isoformat()},
                      HTTP_HX_REQUEST="true", HTTP_HX_TARGET="queue-body")
print(page.status_code, refresh.status_code,
      "Refund the kettle?" in page.content.decode(), "1 new hold" in refresh.content.decode())
"""


def test_the_queue_serves_on_the_quickstarts_sqlite_too(tmp_path_factory, tmp_path):
    from tests.helpers.preloaded import start_django
    from tests.helpers.quickstart_db import migrated_var_dir

    var_dir = migrated_var_dir(tmp_path_factory, tmp_path / "var")
    started = start_django(SQLITE_QUEUE, REVIEWQUEUE_VAR_DIR=str(var_dir), DEBUG="1")

    assert started.returncode == 0, started.stderr
    assert started.stdout.split("\n")[-2] == "200 200 True True"
