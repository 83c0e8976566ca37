"""Fixtures of the tests that start the app as production does: an empty database and Redis database of their own."""

import secrets

import pytest
import redis

from tests.helpers.template_database import create_database, drop_database


@pytest.fixture
def fresh_database(settings):
    """An empty Postgres database of the test's own on the suite's server, dropped afterwards."""
    server = settings.DATABASES["default"]
    server_url = f"postgres://{server['USER']}@{server['HOST']}:{server['PORT']}"
    name = f"rq_production_{secrets.token_hex(4)}"
    create_database(server_url, name)
    yield f"{server_url}/{name}"
    drop_database(server_url, name)


@pytest.fixture
def own_redis(settings):
    """The suite's Redis database, emptied before and after, so no earlier task is picked up."""
    url = settings.CELERY_BROKER_URL
    redis.Redis.from_url(url).flushdb()
    yield url
    redis.Redis.from_url(url).flushdb()
