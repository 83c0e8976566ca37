"""Processes of the app's own that tests start: where the checkout is, and how they reach the test database."""

import socket
from pathlib import Path

from django.db import connection

API_KEY = "test-api-key"  # the simulated platform's key, which the app is configured with in tests
ROOT = Path(__file__).resolve().parents[2]


def suite_database_url() -> str:
    """The URL of the database this test runs against (pytest-django's test database), for another process."""
    database = connection.settings_dict
    return f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
