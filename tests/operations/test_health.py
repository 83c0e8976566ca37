"""A load balancer and Kubernetes can ask whether Review Queue is alive and whether it is ready to serve."""

import contextlib
import ipaddress
import json
from datetime import timedelta

import pytest
from django.db import IntegrityError, InterfaceError, OperationalError, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from holds.models import SyncState
from holds.sweeps import heartbeat
from operations import outage

pytestmark = pytest.mark.django_db

TOKEN = "readiness-scrape-token"


@pytest.fixture(autouse=True)
def metrics_token(settings):
    settings.METRICS_TOKEN = TOKEN


def readyz(client, token: str = TOKEN):
    """/readyz as a scraper with the metrics token asks for it (with ``token=""``, as anyone does)."""
    return client.get("/readyz", headers={"Authorization": f"Bearer {token}"} if token else {})


@pytest.fixture
def everything_running(samples, settings):
    """One env synced just now (by ``samples``) and a periodic task that just ran."""
    settings.AGENTOS_ENVS = ["default"]
    heartbeat.record_run("holds.tasks.sync_holds")


def test_healthz_answers_without_signing_in_and_without_touching_the_database(client):
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "alive"}
    assert len(queries) == 0
    assert response["Cache-Control"].startswith("max-age=0")


def test_readyz_is_200_when_database_broker_syncs_and_beat_are_all_fine(client, everything_running):
    response = readyz(client)

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert set(body["checks"]) == {"database", "broker", "sync:default", "beat"}
    assert all(check["ok"] for check in body["checks"].values())


def test_readyz_is_503_naming_an_env_whose_last_sync_is_older_than_three_intervals(
    client, everything_running, settings
):
    SyncState.objects.filter(env="default").update(
        last_success_at=timezone.now() - timedelta(seconds=3 * settings.SYNC_INTERVAL_SECONDS + 5)
    )

    response = readyz(client)

    assert response.status_code == 503
    assert response.json()["checks"]["sync:default"]["ok"] is False
    assert response.json()["checks"]["database"]["ok"] is True


def test_readyz_is_503_for_an_env_never_synced(client, everything_running, settings):
    settings.AGENTOS_ENVS = ["default", "staging"]

    check = readyz(client).json()["checks"]["sync:staging"]

    assert check == {"ok": False, "detail": "never synced"}


def test_readyz_is_503_when_beat_has_been_silent_for_minutes(client, everything_running):
    heartbeat.record_run("holds.tasks.sync_holds", timezone.now() - timedelta(minutes=10))

    response = readyz(client)

    assert response.status_code == 503
    assert response.json()["checks"]["beat"]["ok"] is False


def test_readyz_and_the_queue_banner_agree_on_when_beat_and_sync_are_stale(client, everything_running, settings):
    from holds.queue import freshness as queue_freshness

    interval = timedelta(seconds=settings.SYNC_INTERVAL_SECONDS)
    verdicts = []
    for age in (2 * interval, 3 * interval + timedelta(seconds=1)):
        heartbeat.record_run("holds.tasks.sync_holds", timezone.now() - age)
        SyncState.objects.filter(env="default").update(last_success_at=timezone.now() - age)
        checks = readyz(client).json()["checks"]
        freshness = queue_freshness.freshness(timezone.now())
        verdicts.append(
            (checks["beat"]["ok"], freshness.periodic_stopped, checks["sync:default"]["ok"], freshness.stale)
        )

    assert verdicts == [(True, False, True, False), (False, True, False, True)]


def test_a_down_broker_is_reported_without_its_url_or_password(client, everything_running, settings):
    # A closed port on this machine, with a password in the URL that must not come back.
    settings.CELERY_BROKER_URL = "redis://:hunter2secret@127.0.0.1:1/0"

    response = readyz(client)

    assert response.status_code == 503
    assert response.json()["checks"]["broker"] == {"ok": False, "detail": "down: cannot connect"}
    assert b"hunter2secret" not in response.content and b"127.0.0.1:1" not in response.content


@contextlib.contextmanager
def database_refusing(**settings_dict):
    """The database refuses connections (nothing listens on its port) until the block ends."""
    from django.db import connections

    broken = connections["default"]
    saved = dict(broken.settings_dict)
    broken.close()
    broken.settings_dict.update(PORT="1", **settings_dict)
    try:
        yield
    finally:
        broken.close()
        broken.settings_dict.clear()
        broken.settings_dict.update(saved)


def test_a_down_database_is_reported_as_down_without_its_dsn(client, settings):
    with database_refusing(PASSWORD="s3cr3t-password"):
        response = readyz(client)

    assert response.status_code == 503
    body = json.loads(response.content)
    assert body["checks"]["database"] == {"ok": False, "detail": "down: cannot connect"}
    assert "sync:default" not in body["checks"]
    assert (
        b"s3cr3t" not in response.content
        and b"5432" not in response.content
        and b"port" not in response.content.lower()
    )


def test_while_the_database_is_down_pages_answer_a_plain_503_and_the_probes_answer(alice_client):
    """The first requests after a real PostgreSQL restart are served: tests/operations/test_faults.py."""
    alice_client.raise_request_exception = False  # as a server answers: through handler500
    probe = Client()  # as a load balancer or Kubernetes asks: without a session

    with database_refusing():
        queue = alice_client.get("/")
        api = alice_client.get("/api/v1/holds", headers={"Authorization": "Bearer not-checked-yet"})
        alive = probe.get("/healthz")
        ready = probe.get("/readyz")

    assert queue.status_code == 503 and queue["Retry-After"] == "5"
    assert b"cannot reach its database" in queue.content and b"Traceback" not in queue.content
    assert api.status_code == 503 and api["Content-Type"].startswith("application/problem+json")
    assert alive.status_code == 200 and alive.json() == {"status": "alive"}
    assert ready.status_code == 503 and ready.json() == {"status": "not ready"}


def test_other_errors_stay_a_500(rf):
    def answer_to(error: Exception):
        try:
            raise error
        except Exception:
            return outage.server_error(rf.get("/"))

    assert answer_to(OperationalError("connection refused")).status_code == 503
    assert answer_to(InterfaceError("connection already closed")).status_code == 503
    assert answer_to(IntegrityError("duplicate key")).status_code == 500
    assert answer_to(ValueError("a bug")).status_code == 500


def test_anyone_learns_only_whether_it_is_ready_and_the_metrics_scrapers_learn_why(
    client, everything_running, settings
):
    settings.AGENTOS_ENVS = ["default", "secret-project"]
    settings.METRICS_ALLOWED_IPS = [ipaddress.ip_network("10.0.0.0/8")]

    anonymous = readyz(client, token="")
    wrong_token = readyz(client, token="guess")
    with_token = readyz(client)
    from_allowed_address = client.get("/readyz", REMOTE_ADDR="10.1.2.3")
    SyncState.objects.create(env="secret-project", last_success_at=timezone.now())
    ready = readyz(client, token="")

    assert (anonymous.status_code, anonymous.json()) == (503, {"status": "not ready"})
    assert b"secret-project" not in anonymous.content and wrong_token.json() == anonymous.json()
    assert with_token.json()["checks"]["sync:secret-project"] == {"ok": False, "detail": "never synced"}
    assert from_allowed_address.json() == with_token.json()
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})


def test_the_probes_are_not_sent_to_sign_in_even_with_an_expired_session(client, alice, everything_running, settings):
    client.force_login(alice)
    session = client.session
    session.set_expiry(timezone.now() - timedelta(minutes=1))
    session.save()

    assert client.get("/healthz").status_code == 200
    assert readyz(client).status_code == 200
