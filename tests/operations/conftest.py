"""Fixtures of the tests that start the app as production does: an empty database and Redis database of their own."""

import secrets

import psycopg
import pytest
import redis


@pytest.fixture
def fresh_database(settings):
    """An empty Postgres database of the test's own on the suite's server, dropped afterwards."""
    server = settings.DATABASES["default"]
    admin = {"host": server["HOST"], "port": server["PORT"], "user": server["USER"], "dbname": "postgres"}
    name = f"rq_production_{secrets.token_hex(4)}"
    with psycopg.connect(**admin, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    yield f"postgres://{server['USER']}@{server['HOST']}:{server['PORT']}/{name}"
    with psycopg.connect(**admin, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def own_redis(settings):
    """The suite's Redis database, emptied before and after, so no earlier task is picked up."""
    url = settings.CELERY_BROKER_URL
    redis.Redis.from_url(url).flushdb()
    yield url
    redis.Redis.from_url(url).flushdb()
