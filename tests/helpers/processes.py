"""Processes of the app's own that tests start: where the checkout is, and how they reach the test database."""

import itertools
import os
import socket
from pathlib import Path

from django.db import connection

API_KEY = "test-api-key"  # the simulated platform's key, which the app is configured with in tests
ROOT = Path(__file__).resolve().parents[2]


def suite_database_url() -> str:
    """The URL of the database this test runs against (pytest-django's test database), for another process."""
    database = connection.settings_dict
    return f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"


# Ports below Linux's ephemeral range (32768 up), where no outgoing connection is given one, in a block of each
# pytest-xdist worker's own (gw0 20000-20999, gw1 21000-21999, … at most 12 workers): a port handed out stays free
# until the test's server binds it, even seconds later, however busy the other workers are.
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
_PORTS = range(20000 + 1000 * _WORKER, 21000 + 1000 * _WORKER)
_turn = itertools.count()


def free_ports(count: int) -> int:
    """The first of ``count`` ports in a row that are free now, in this worker's block; each call moves on, so two
    calls never hand out the same port while the first one's server has yet to bind it."""
    for _ in range(len(_PORTS)):
        first = _PORTS.start + (next(_turn) * count) % (len(_PORTS) - count)
        if all(_bindable(port) for port in range(first, first + count)):
            return first
    raise RuntimeError(f"no {count} free ports in a row in {_PORTS.start}-{_PORTS.stop - 1}")


def free_port() -> int:
    return free_ports(1)


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
