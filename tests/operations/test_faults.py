"""An operator's bad day: Redis and then PostgreSQL restart under the running app, and nothing beneath it stops it.

A production-like setup on a PostgreSQL cluster and a Redis server of the test's own (so that killing them touches
no other test): gunicorn, uvicorn for the event streams, a Celery worker with its prefork pool and Celery beat, as
docs/operating.md runs them, and the simulated platform in a process of its own, answering every decision slowly.
Reviewers decide through the pages.
"""

import time

import httpx
import psycopg
import pytest

from tests.helpers.own_services import OwnPostgres, OwnRedis
from tests.helpers.processes import suite_database_url
from tests.helpers.production_like import (
    App,
    add_reviewer,
    answers,
    applied,
    decisions_under_way,
    first_event,
    idempotency_keys,
    open_hold_ids,
    platform_hold,
    posted_decisions,
    reject,
    signed_in,
    slow_down,
)
from tests.helpers.waiting import wait_until

pytestmark = [pytest.mark.long, pytest.mark.timeout(300)]  # restarts and waits: 56 s in a busy run

PLATFORM_ANSWER_SECONDS = 1.0  # every decision POST: the platform is slow throughout
SLOWED = 100  # decision POSTs answered that late: more than the test makes
RECOVERY_SECONDS = 60  # every decision applied within this long of the service's return


@pytest.fixture(scope="session")
def own_postgres(django_db_setup, django_db_blocker):
    """A cluster of this test session's own, made once, with the schema of the suite's migrated test database."""
    with django_db_blocker.unblock():
        source = suite_database_url()
    cluster = OwnPostgres()
    cluster.start()
    cluster.copy_schema(source)
    yield cluster
    cluster.discard()


@pytest.fixture
def own_redis_server(tmp_path):
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.discard()


@pytest.fixture
def app(own_postgres, own_redis_server, tmp_path):
    running = App(
        own_postgres.url,
        own_redis_server.url,
        tmp_path,
        holds=12,
        REQUEUE_SECONDS="2",  # what Redis lost, or a delivery cut short, is found again within seconds
        # A short attempt lease (the timeouts plus 5 s), so that a delivery cut short is sent again soon.
        AGENTOS_CONNECT_TIMEOUT="1",
        AGENTOS_READ_TIMEOUT="3",
    )
    running.start_all()
    yield running
    running.stop()


def test_the_worker_and_beat_live_through_a_redis_and_a_postgres_restart_and_every_decision_arrives_once(
    app, own_postgres, own_redis_server
):
    reviewer = add_reviewer(own_postgres.url, "rita")
    platform = httpx.Client(base_url=app.platform_url, timeout=5)
    wait_until(lambda: answers(platform, "/_control/requests"), timeout=30, interval=0.2)
    slow_down(platform, PLATFORM_ANSWER_SECONDS, SLOWED)
    holds = wait_until(lambda: len(ids := open_hold_ids(own_postgres.url)) == 12 and ids, timeout=60, interval=0.5)
    web = wait_until(lambda: signed_in(app.web_url, reviewer), timeout=30, interval=0.2)
    wait_until(lambda: answers(httpx.Client(base_url=app.events_url), "/healthz"), timeout=30, interval=0.2)
    started = app.pids()

    # Redis dies while deliveries are queued and under way, and comes back empty.
    for pk in holds[:4]:  # fewer than the worker prefetches (4 × its 2 processes): it still polls Redis for more
        assert reject(web, pk).status_code == 302
    wait_until(lambda: decisions_under_way(platform, SLOWED), interval=0.05)  # the others are queued
    own_redis_server.kill()
    during_redis_outage = [reject(web, pk) for pk in holds[4:7]]  # stored; their tasks cannot be queued
    queue_without_redis = web.get("/")
    events_without_redis = first_event(app.events_url, web)
    own_redis_server.start()
    redis_back = time.monotonic()
    wait_until(lambda: applied(own_postgres.url) >= set(holds[:7]), timeout=RECOVERY_SECONDS, interval=0.2)
    redis_recovery = time.monotonic() - redis_back
    events_after_redis = first_event(app.events_url, web)

    # PostgreSQL restarts (pg_ctl -m fast) while deliveries are under way.
    for pk in holds[7:12]:
        assert reject(web, pk).status_code == 302
    wait_until(lambda: decisions_under_way(platform, SLOWED), interval=0.05)
    own_postgres.stop()
    during_postgres_outage = [web.get("/") for _ in range(3)]
    probes = httpx.get(f"{app.web_url}/healthz"), httpx.get(f"{app.web_url}/readyz")
    own_postgres.start()
    postgres_back = time.monotonic()
    right_after = [web.get("/") for _ in range(3)]
    events_after_postgres = first_event(app.events_url, web)
    wait_until(lambda: applied(own_postgres.url) == set(holds), timeout=RECOVERY_SECONDS, interval=0.2)
    postgres_recovery = time.monotonic() - postgres_back

    assert app.pids() == started, {name: app.log(name)[-3000:] for name, pid in app.pids().items() if pid is None}
    assert "Unrecoverable error" not in app.log("worker")
    assert [answer.status_code for answer in during_redis_outage] == [302, 302, 302]
    assert queue_without_redis.status_code == 200
    assert events_without_redis[0] == 503  # the pages poll meanwhile
    for status, first in (events_after_redis, events_after_postgres):
        assert status == 200 and "event: hello" in first
    assert [answer.status_code for answer in during_postgres_outage] == [503, 503, 503]
    assert all(b"cannot reach its database" in answer.content for answer in during_postgres_outage)
    assert [probe.status_code for probe in probes] == [200, 503]
    assert [answer.status_code for answer in right_after] == [200, 200, 200]
    assert redis_recovery < RECOVERY_SECONDS and postgres_recovery < RECOVERY_SECONDS
    keys = idempotency_keys(own_postgres.url)
    sent = posted_decisions(platform)
    keys_sent = {
        hold_id: {post["headers"]["idempotency-key"] for post in sent if post["hold_id"] == hold_id} for hold_id in keys
    }
    assert keys_sent == {hold_id: {key} for hold_id, key in keys.items()}
    assert all(platform_hold(platform, hold_id)["status"] == "decided" for hold_id in keys)
    with psycopg.connect(own_postgres.url) as database:
        outcomes = database.execute(
            "SELECT decision_id, count(*) FROM holds_deliveryattempt WHERE outcome = 'applied' GROUP BY decision_id"
        ).fetchall()
    assert len(outcomes) == 12 and {count for _, count in outcomes} == {1}
