"""Fixtures shared by the suite: a simulated platform on 127.0.0.1, a client for it, users."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.db import connection

from holds.mirror import platform, sync
from reviewqueue import processcache, roles
from simulator.server import PlatformServer
from simulator.state import PlatformState

API_KEY = "test-api-key"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def read_afresh():
    """Each test reads the approval policies, cached values and everything else a process keeps from its own database
    and cache: the last test's are gone."""
    processcache.forget_all()


@pytest.fixture
def platform_state() -> PlatformState:
    return PlatformState()


@pytest.fixture
def simulated_platform(platform_state, settings):
    """A simulated platform served over real HTTP on 127.0.0.1, which the app is configured to use."""
    with PlatformServer(platform_state, host="127.0.0.1", port=0, api_key=API_KEY) as server:
        settings.AGENTOS_URL = server.url
        settings.AGENTOS_API_KEY = API_KEY
        yield server


@pytest.fixture
def platform_client(simulated_platform, settings):
    settings.AGENTOS_READ_TIMEOUT = 2.0
    with platform.PlatformClient.from_settings() as client:
        yield client


@pytest.fixture
def immediate_delivery(settings):
    """No undo window (UNDO_SECONDS=0): a sent decision is delivered at once, for tests about delivery itself."""
    settings.UNDO_SECONDS = 0


@pytest.fixture
def celery_processes(simulated_platform, settings, tmp_path):
    """Start real Celery processes (worker, beat) on Redis against the test database.

    Call the returned function with ``"worker"`` or ``"beat"``; everything it started
    is stopped at the end of the test. Tests using it need
    ``django_db(transaction=True)`` so the processes see the test's rows.
    """
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    started = []
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _test_database_url(),
        "REDIS_URL": settings.CELERY_BROKER_URL,
        "AGENTOS_URL": simulated_platform.url,
        "AGENTOS_API_KEY": API_KEY,
        "REVIEWQUEUE_VAR_DIR": str(tmp_path),
    }

    def start(kind: str, **extra_env) -> subprocess.Popen:
        options = {
            "worker": ["--pool", "solo", "--without-heartbeat", "--without-gossip", "--without-mingle"],
            "beat": [],
        }[kind]
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewqueue", kind, "--loglevel", "INFO", *options],
            env={**environment, **extra_env},
            cwd=ROOT,
            stdout=open(tmp_path / f"{kind}.log", "ab"),
            stderr=subprocess.STDOUT,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        process.terminate()
    for process in started:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def _test_database_url() -> str:
    database = connection.settings_dict
    return f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"


def wait_until(condition, timeout: float = 20.0, interval: float = 0.1):
    """Poll ``condition`` until it returns something truthy, and return that; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outcome = condition()
        if outcome:
            return outcome
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


def make_user(username: str, *groups: str, **fields):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username, email=f"{username}@example.com", password="pw", **fields)
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


@pytest.fixture
def alice(db):
    return make_user("alice", roles.REVIEWERS, first_name="Alice", last_name="Adams")


@pytest.fixture
def bob(db):
    return make_user("bob", roles.REVIEWERS, first_name="Bob", last_name="Brown")


@pytest.fixture
def audrey(db):
    return make_user("audrey", roles.AUDITORS)


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def samples(platform_client, platform_state, db):
    """The simulator's sample holds, mirrored: a dict of hold id → Hold."""
    from holds.models import Hold

    platform_state.load_samples()
    sync.sync_env(platform_client, "default")
    return {hold.hold_id: hold for hold in Hold.objects.all()}
