"""The periodic sync (``sync.keep_up``): the tail of the listing each interval, and a reconciling walk of the whole
listing spread over SYNC_RECONCILE_MINUTES. Time is the test's (time-machine), requests are the simulator's."""

import logging
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from prometheus_client.parser import text_string_to_metric_families

from holds.mirror import sync
from holds.models import Hold, ListedInWalk, SyncState
from operations import health

pytestmark = pytest.mark.django_db

METRICS_TOKEN = "scrape-token-for-the-tail"


def listings(platform_state) -> list[dict]:
    """The listing requests the simulator answered, oldest first."""
    return [request for request in platform_state.requests if request["path"].endswith("/holds")]


@pytest.fixture
def clock():
    """The test's time, moved only by ``clock.shift(seconds)``."""
    with time_machine.travel(datetime.now(UTC), tick=False) as traveller:
        yield traveller


def test_the_first_periodic_sync_walks_the_whole_listing_and_keeps_the_cursor_of_its_last_page(
    platform_client, platform_state, clock
):
    platform_state.generate("default", 250)

    result = sync.keep_up(platform_client, "default")

    state = SyncState.objects.get(env="default")
    assert result.created == result.open == 250
    assert len(listings(platform_state)) == 3
    assert state.tail_cursor == listings(platform_state)[-1]["query"]["cursor"]
    assert state.last_walk_started_at == state.last_walk_ended_at == datetime.now(UTC)


def test_a_new_hold_reaches_the_mirror_in_one_or_two_requests_however_many_are_open(
    platform_client, platform_state, clock
):
    platform_state.generate("default", 450)
    sync.keep_up(platform_client, "default")
    clock.shift(10)
    new = platform_state.add_hold("default", {"question": "Refund 5.00?"})["hold_id"]
    platform_state.clear_requests()

    result = sync.keep_up(platform_client, "default")

    assert result.created == 1 and not result.error
    assert Hold.objects.get(hold_id=new).question == "Refund 5.00?"
    assert 1 <= len(listings(platform_state)) <= 2
    assert all(request["query"].get("cursor") for request in listings(platform_state))  # from the tail, not the start


def test_new_holds_past_the_last_page_move_the_tail_to_the_new_last_page(platform_client, platform_state, clock):
    platform_state.generate("default", 190)
    sync.keep_up(platform_client, "default")
    clock.shift(10)
    platform_state.generate("default", 30)  # the last page fills, and a new one begins
    platform_state.clear_requests()

    result = sync.keep_up(platform_client, "default")
    clock.shift(10)
    platform_state.clear_requests()
    again = sync.keep_up(platform_client, "default")

    assert result.created == 30 and again.created == 0
    assert Hold.objects.filter(status="open").count() == 220
    assert len(listings(platform_state)) == 1  # the new last page only
    assert listings(platform_state)[0]["query"]["cursor"] == SyncState.objects.get(env="default").tail_cursor


def test_with_nothing_changing_twenty_seconds_of_two_second_syncs_list_no_more_pages_than_one_whole_walk(
    platform_client, platform_state, clock, settings
):
    """At most one tail request and one page of the walk an interval, whatever is open: 2,500 holds (25 pages)
    show it as 10,000 would (101 pages), at 20 listing requests in 20 s."""
    settings.SYNC_INTERVAL_SECONDS = 2
    platform_state.generate("default", 2500)
    sync.keep_up(platform_client, "default")
    pages_of_a_walk = len(listings(platform_state))
    clock.shift(settings.SYNC_RECONCILE_MINUTES * 60)  # a reconciling walk is due, and lists its pages too
    per_interval = []
    for _ in range(10):
        platform_state.clear_requests()
        result = sync.keep_up(platform_client, "default")
        assert not result.error and result.created == result.updated == 0
        per_interval.append(len(listings(platform_state)))
        clock.shift(settings.SYNC_INTERVAL_SECONDS)

    assert pages_of_a_walk == 25
    assert per_interval == [2] * 10
    assert sum(per_interval) <= pages_of_a_walk


def walk_once(platform_client, platform_state, clock, settings) -> list[sync.SyncResult]:
    """Run the periodic sync every interval until a reconciling walk ends; its results."""
    ended = SyncState.objects.get(env="default").last_walk_ended_at
    results = []
    for _ in range(100):
        clock.shift(settings.SYNC_INTERVAL_SECONDS)
        results.append(sync.keep_up(platform_client, "default"))
        if SyncState.objects.get(env="default").last_walk_ended_at != ended:
            return results
    raise AssertionError("no reconciling walk ended in 100 intervals")


def test_the_reconciling_walk_finds_holds_decided_expired_cancelled_or_changed_elsewhere(
    platform_client, platform_state, clock, settings
):
    settings.SYNC_INTERVAL_SECONDS, settings.SYNC_RECONCILE_MINUTES = 10, 1
    holds = [hold["hold_id"] for hold in platform_state.generate("default", 450)]
    sync.keep_up(platform_client, "default")
    platform_state.decide_elsewhere("default", holds[3], "bob@example.com")
    platform_state.expire("default", holds[150])
    platform_state.cancel("default", holds[300])
    platform_state.get_hold("default", holds[200])["question"] = "Refund 99.00 instead?"
    clock.shift(settings.SYNC_RECONCILE_MINUTES * 60)

    results = walk_once(platform_client, platform_state, clock, settings)

    statuses = dict(Hold.objects.filter(hold_id__in=holds[3:301:1]).values_list("hold_id", "status"))
    assert (statuses[holds[3]], statuses[holds[150]], statuses[holds[300]]) == ("decided", "expired", "cancelled")
    assert Hold.objects.get(hold_id=holds[3]).decided_by == "bob@example.com"
    assert Hold.objects.get(hold_id=holds[200]).question == "Refund 99.00 instead?"
    assert sum(result.closed for result in results) == 3 and sum(result.updated for result in results) == 1
    assert len(results) == 3  # five pages, two an interval: spread over 48 s of the minute, not listed in one go
    assert SyncState.objects.get(env="default").open_count == 447
    assert not ListedInWalk.objects.exists()


def test_the_tail_alone_leaves_a_hold_decided_elsewhere_for_the_walk(platform_client, platform_state, clock):
    holds = [hold["hold_id"] for hold in platform_state.generate("default", 250)]
    sync.keep_up(platform_client, "default")
    platform_state.decide_elsewhere("default", holds[0], "bob@example.com")
    clock.shift(10)

    sync.keep_up(platform_client, "default")

    assert Hold.objects.get(hold_id=holds[0]).status == "open"  # the walk is not due for five minutes


def test_a_refused_cursor_is_logged_counted_and_followed_by_a_whole_walk(
    platform_client, platform_state, clock, caplog, client, settings
):
    platform_state.generate("default", 250)
    sync.keep_up(platform_client, "default")
    clock.shift(10)
    new = platform_state.add_hold("default", {})["hold_id"]
    platform_state.forget_cursors()
    platform_state.clear_requests()

    with caplog.at_level(logging.WARNING, logger="holds.mirror.sync"):
        result = sync.keep_up(platform_client, "default")

    requests = listings(platform_state)
    assert not result.error and result.created == 1 and Hold.objects.filter(hold_id=new).exists()
    assert requests[0]["status"] == 400
    assert [bool(request["query"].get("cursor")) for request in requests[1:]] == [False, True, True]  # from the start
    assert "walking the whole listing instead" in caplog.text
    state = SyncState.objects.get(env="default")
    assert state.cursor_refusals == 1 and state.tail_cursor == requests[-1]["query"]["cursor"]
    settings.METRICS_TOKEN = METRICS_TOKEN
    scraped = client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).content.decode()
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(scraped)
        for sample in family.samples
    }
    assert samples[("reviewqueue_sync_cursor_refusals_total", (("env", "default"),))] == 1


def test_readiness_fails_when_tails_succeed_but_no_reconciling_walk_ended_for_three_periods(
    platform_client, platform_state, settings
):
    settings.AGENTOS_ENVS = ["default"]
    platform_state.generate("default", 10)
    sync.keep_up(platform_client, "default")
    assert health.syncs(datetime.now(UTC))["default"][0] is True
    SyncState.objects.filter(env="default").update(
        last_walk_ended_at=datetime.now(UTC) - timedelta(minutes=3 * settings.SYNC_RECONCILE_MINUTES + 1)
    )

    ok, detail = health.syncs(datetime.now(UTC))["default"]

    assert ok is False and "reconciling walk" in detail
