"""Every benchmark runs once, on tiny sizes, so that none rots unseen: a smoke run, timing nothing.

A bench is a command (``python -m bench.NAME``) that the suite would otherwise never import, so a renamed helper or
a new column broke it silently until someone measured. Each runs here as the shell would run it, forked from the
preloaded process (tests/helpers/preloaded.py), on a database of its own copied from one migrated once for
these migrations (``BENCH_TEMPLATE_DATABASE``, bench/setup.py), with this worker's Redis database; the test asserts that
it exits 0 and prints its result lines. Its figures mean nothing at these sizes.
"""

import os
import re
from pathlib import Path

import pytest
import redis
from filelock import FileLock

from bench import serving
from tests.helpers import preloaded
from tests.helpers.podman import BUILD_TIMEOUT
from tests.helpers.podman import installed as podman_installed
from tests.helpers.processes import free_ports
from tests.helpers.template_database import migrated_template, run_folder

TIMEOUT = 300  # seconds for one bench on a busy machine
pytestmark = [pytest.mark.long, pytest.mark.timeout(2 * TIMEOUT)]  # the first to run collects the static files too

BENCHES_WITH_MAIN = sorted(
    [path.stem for path in (serving.ROOT / "bench").glob("*.py") if 'if __name__ == "__main__":' in path.read_text()]
    + [path.parent.name for path in (serving.ROOT / "bench").glob("*/__main__.py")]  # a bench that is a package
)
# Each bench's arguments for a smoke run ({port}: the first of six free ports in a row), and a line of its result
# that it must print. Where a bench waits on something that has its own clock, its settings are shortened; sync's
# periodic part runs 6 intervals of 10 s over one simulated minute, not 60 of 1 s.
BENCHES = {
    "announce": (["--holds", "2", "--sync-interval", "1"], r"ask -> email \(SMTP\) all +p50"),
    "audit": (["--events", "200", "--requests", "2"], r"first page, no filter +median"),
    "bulk": (["--sizes", "2", "--rounds", "1"], r"2 holds  summary median .* confirm median"),
    "capacity": (
        ["--steps", "2", "--duration", "4", "--ramp", "2", "--think", "0.3", "--rate", "1", "--holds", "60"]
        + ["--web", "1", "--workers", "1"],
        r"this checkout: knee .* reviewers; decisions: none lost or doubled, each applied",
    ),
    "chains": (
        ["--holds", "40", "--rounds", "1", "--requests", "2", "--under-way", "5"],
        r"waiting for my stage, chains / today +[\d.]+x",
    ),
    "container": (["--rounds", "0"], r"web container start -> /readyz 200: +[\d.]+ s"),
    "decide": (
        ["--decisions", "3", "--port", "{port}"],
        r"confirming POST sent -> platform received the decision: p50",
    ),
    "escalation": (["--holds", "50", "--matching", "5"], r"first sweep .* 5 escalated"),
    "expiry": (["--holds", "50"], r"expiry sweep .* holds acted on"),
    "faults": (["--rounds", "1", "--decisions", "1", "--outage", "1"], r"PostgreSQL +[\d.]+ +[\d.]+"),
    "hold_page": (["--holds", "20", "--requests", "3"], r"after an undo +median"),
    "http": (
        ["--open", "20", "--closed", "20", "--audit", "100", "--search", "A-5010"]
        + ["--rounds", "1", "--duration", "1", "--warm-up", "0", "--port", "{port}"],
        r"load phase \d+ s, whole run \d+ s",
    ),
    "live": (
        ["--open", "20", "--streams", "5", "--events", "2", "--most", "10", "--step", "5"]
        + ["--rounds", "1", "--duration", "1", "--warm-up", "0", "--port", "{port}"],
        r"bench\.live: the queue page",
    ),
    "metrics": (["--holds", "50", "--events", "200", "--decisions", "20", "--scrapes", "2"], r"/metrics +median"),
    "profile": (["--requests", "3", "--top", "5"], r"## /: [\d.]+ ms a request under the profiler"),
    "push": (["--reviewers", "3", "--holds", "1", "--sync-interval", "1"], r"ask -> push decrypted at the device +p50"),
    "queue": (["--holds", "50", "--requests", "3", "--related", "10"], r"first page +[\d.]+ ms"),
    "recovery": (["--rounds", "1"], r"kill to applied over 1 rounds: median"),
    "replay": (["--holds", "50", "--runs", "1"], r"replay over 30 days: median"),
    "simulator": (["--holds", "200", "--max-pages", "2"], r"200 holds: generated in .* 2 pages of 100"),
    "slack": (["--presses", "2"], r"press to platform decision: median"),
    "sync": (
        ["--holds", "50", "--rounds", "1", "--interval", "10", "--reconcile", "1", "--samples", "2"],
        r"median ratio to the floor",
    ),
}
# The platform's timeouts bound how long a decision's attempt holds it (delivery.attempt_lease), which bench.recovery
# and bench.faults wait out after a worker or PostgreSQL went away mid-POST: shortened, but longer than the 3 s and
# 1 s they delay the platform's answer. REQUEUE_SECONDS: how soon beat finds a lost delivery, shortened too.
SHORTER_LEASE = {"AGENTOS_CONNECT_TIMEOUT": "1", "AGENTOS_READ_TIMEOUT": "4", "REQUEUE_SECONDS": "2"}
# Beat syncing every 2 s and an undo window of 1 s, for the benches that would otherwise wait out the first sync or
# the last decisions' undo windows: alone, bench.capacity's smoke run took 39 s and then 21 s, bench.recovery's 27 s
# and then 19 s.
QUICKER_CLOCKS = {"SYNC_INTERVAL_SECONDS": "2", "UNDO_SECONDS": "1"}
WRK = Path("/usr/bin/wrk")  # where bench/http.py runs it from


def test_every_bench_runs_in_the_suite():
    """A new bench is given its smoke run here, and a bench taken away is taken from here too."""
    assert sorted(BENCHES) == BENCHES_WITH_MAIN


@pytest.fixture(scope="session")
def bench_databases(tmp_path_factory):
    """Where the benches' databases go, and the name of the one they are copied from: the suite's migrated template
    (tests/helpers/template_database.py); and the static files, which the benches that serve through gunicorn collect
    into the checkout once, by the first worker to ask, under a lock in the run's own temporary folder."""
    server, template = migrated_template(tmp_path_factory)
    folder = run_folder(tmp_path_factory)
    with FileLock(folder / "bench-static.lock"):
        if not (folder / "bench-static.made").exists():
            serving.collectstatic_if_needed(
                serving.production_environment(0, f"{server}/{template}", os.environ["REDIS_URL"], "http://x", "x")
            )
            (folder / "bench-static.made").touch()
    return server, template


def run_bench(name: str, database: str, bench_databases, timeout: float = TIMEOUT, **variables) -> str:
    """``python -m bench.NAME`` with its smoke arguments on ``database`` and this worker's Redis database; what it
    printed, once it is seen to exit 0 and print its result line."""
    server, template = bench_databases
    arguments, result = BENCHES[name]
    port = str(free_ports(6))
    environment = os.environ | {
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "BENCH_DATABASE_URL": server,
        "BENCH_DATABASE": database,
        "BENCH_TEMPLATE_DATABASE": template,
        "BENCH_REDIS_URL": os.environ["REDIS_URL"],  # this worker's own, which the benches may flush
        **variables,
    }
    arguments = [argument.replace("{port}", port) for argument in arguments]
    ran = preloaded.run_module(f"bench.{name}", arguments, environment, timeout=timeout)
    assert ran.returncode == 0, f"bench.{name} exited {ran.returncode}:\n{ran.stdout[-2000:]}\n{ran.stderr[-3000:]}"
    assert re.search(result, ran.stdout), f"bench.{name} printed no result line /{result}/:\n{ran.stdout[-3000:]}"
    return ran.stdout


@pytest.fixture
def bench_database(bench_databases, request):
    """A database name for the test's bench, with the worker's Redis database emptied of what the bench left. The
    database stays until the next run, whose bench drops it as it starts (bench/setup.py): dropping it here too
    would cost a checkpoint of the server's for nothing."""
    yield f"{os.environ['DATABASE_URL'].rpartition('/')[2]}_bench_{request.node.callspec.id}"
    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()


# The benches that serve through gunicorn, start the production path or containers, or wait out an attempt's lease
# (20 to 40 s each, mostly waiting on their processes) have a test of their own below; the rest run alike.
QUICK = sorted(set(BENCHES) - {"capacity", "container", "faults", "http", "live", "profile", "recovery"})


@pytest.mark.parametrize("name", QUICK)
def test_a_bench_runs_on_tiny_sizes(name, bench_database, bench_databases):
    run_bench(name, bench_database, bench_databases)


@pytest.mark.parametrize("name", ["recovery", "faults"])
def test_the_benches_of_lost_deliveries_run_with_a_short_attempt_lease(name, bench_database, bench_databases):
    """bench.recovery kills a worker mid-POST, bench.faults restarts PostgreSQL under one: each then waits until
    beat finds the lost delivery and a worker sends it again."""
    run_bench(name, bench_database, bench_databases, **SHORTER_LEASE, **QUICKER_CLOCKS)


@pytest.mark.skipif(not WRK.exists(), reason="wrk is missing (.ci/run and bin/test install it)")
@pytest.mark.parametrize("name", ["http"])
def test_the_load_bench_runs_then_the_profile_on_its_database(name, bench_database, bench_databases):
    """bench.profile reads the database bench.http prepared, so it runs right after it, on it."""
    run_bench("http", bench_database, bench_databases)
    run_bench("profile", bench_database, bench_databases)


@pytest.mark.skipif(not WRK.exists(), reason="wrk is missing (.ci/run and bin/test install it)")
@pytest.mark.parametrize("name", ["live"])
def test_the_live_updates_bench_runs(name, bench_database, bench_databases):
    run_bench(name, bench_database, bench_databases)


@pytest.mark.parametrize("name", ["capacity"])
def test_the_capacity_bench_runs_one_tiny_step(name, bench_database, bench_databases):
    """Every process of the production path, Locust with each kind of user, and the check that no decision was lost
    or doubled, on two reviewers for a few seconds."""
    run_bench(name, bench_database, bench_databases, **QUICKER_CLOCKS)


@pytest.mark.skipif(not podman_installed(), reason="podman, runc or mmdebstrap is missing (.ci/run installs them)")
@pytest.mark.timeout(BUILD_TIMEOUT + 2 * TIMEOUT)
@pytest.mark.parametrize("name", ["container"])
def test_the_container_bench_runs_without_timing_a_build(name, bench_database, bench_databases):
    """``--rounds 0`` builds the image with podman's cache, as tests/operations/test_container.py does (cold, the
    first of the two to build it takes minutes), and times only its start."""
    run_bench(name, bench_database, bench_databases, timeout=BUILD_TIMEOUT + TIMEOUT)
