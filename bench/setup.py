"""Shared set-up for the benchmarks: Django on a fresh Postgres database, and a simulated platform.

Run a benchmark from the checkout's root, e.g. ``.venv/bin/python -m bench.sync``.
BENCH_DATABASE_URL picks the server (default: postgres@127.0.0.1:5432) and
BENCH_DATABASE the database on it (default ``reviewqueue_bench``), which is dropped and
created anew: give benchmarks run side by side a name each. BENCH_TEMPLATE_DATABASE names a
database this checkout already migrated to copy it from (``CREATE DATABASE … TEMPLATE``), which
leaves ``migrate`` nothing to do: the suite's runs of the benches (tests/test_benches.py) share one.
"""

import os
import signal
import socket
import statistics
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import django
import psycopg

SERVER = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432")


def _database_name(variable: str, default: str) -> str:
    name = os.environ.get(variable, default)
    if not name.isidentifier():
        raise SystemExit(f"{variable} must be a plain name, not {name!r}")
    return name


DATABASE = _database_name("BENCH_DATABASE", "reviewqueue_bench")
TEMPLATE = _database_name("BENCH_TEMPLATE_DATABASE", "template1")  # PostgreSQL's own default


def django_on_fresh_database() -> None:
    django_on_database(fresh=True)


def django_on_database(fresh: bool) -> None:
    """Django on DATABASE, migrated: dropped and created anew (a copy of TEMPLATE) when ``fresh``, else kept
    (created if missing)."""
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as connection:
        if fresh:
            connection.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        if fresh or not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone():
            connection.execute(f"CREATE DATABASE {DATABASE} TEMPLATE {TEMPLATE}")
    os.environ["DATABASE_URL"] = f"{SERVER}/{DATABASE}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


@contextmanager
def simulated_platform(holds: int, port: int = 0, related_every: int = 0):
    """A simulated platform on 127.0.0.1 (``port``, 0: any free one) with ``holds`` generated open holds (two in every
    ``related_every`` asking about the same order), which the app is set to use."""
    from django.conf import settings

    from simulator.server import PlatformServer
    from simulator.state import PlatformState

    state = PlatformState()
    state.generate("default", holds, related_every)
    with PlatformServer(state, port=port, api_key=settings.AGENTOS_API_KEY) as server:
        settings.AGENTOS_URL = server.url
        yield state


@contextmanager
def platform_apart(env: str, holds: int):
    """A simulated platform in a process of its own (``manage.py runplatform``) with ``holds`` generated open holds
    in ``env``, which the app is set to use; stopped on leaving.

    Unlike ``simulated_platform``'s, its work does not take turns with this process's
    threads for the interpreter, as a real platform's would not. It cannot be arranged
    from here once started: it serves the holds it generated.
    """
    from django.conf import settings

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "manage.py", "runplatform", "--port", str(port), "--api-key", settings.AGENTOS_API_KEY]
    command += ["--env", env, "--generate", str(holds), "--no-samples"]
    server = subprocess.Popen(command, cwd=Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE, text=True)
    try:
        ready = server.stdout.readline()  # printed once the holds are generated and the port is listening
        if "Simulated AgentOS platform at" not in ready:
            raise RuntimeError(f"runplatform did not start: {ready!r}")
        settings.AGENTOS_URL = f"http://127.0.0.1:{port}"
        yield
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.1f} ms, p95 {percentile(values, 0.95) * 1000:.1f} ms"
