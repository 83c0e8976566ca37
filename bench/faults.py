"""How soon every decision is applied after Redis, or PostgreSQL, comes back from a restart under the running app.

    .venv/bin/python -m bench.faults [--rounds 3] [--decisions 6] [--outage 3]

The app runs as production does (``tests.helpers.production_like``: gunicorn, a Celery worker with its prefork
pool, Celery beat, the simulated platform in a process of its own answering each decision in 1 s) on a PostgreSQL
cluster and a Redis server of the bench's own, with the documented defaults (``REQUEUE_SECONDS``, the platform's
timeouts) but no undo window. Each round, for each fault: a reviewer decides ``--decisions`` holds through the pages;
once the first delivery was answered the service goes down for ``--outage`` seconds (Redis SIGKILLed and started
again empty, while the reviewer decides as many holds more through the pages; PostgreSQL stopped with ``pg_ctl -m
fast`` and started again), and the time from its return until every decision of the round is applied is taken.
BENCH_DATABASE names the migrated database on the shared server whose schema the bench's cluster copies.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench import setup

PLATFORM_ANSWER_SECONDS = 1.0
RECOVERY_TIMEOUT = 180.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--decisions", type=int, default=6, help="decisions under way when each fault strikes")
    parser.add_argument("--outage", type=float, default=3.0, help="seconds each service stays down")
    options = parser.parse_args()
    setup.django_on_database(fresh=False)

    from django.conf import settings

    from tests.helpers.own_services import OwnPostgres, OwnRedis
    from tests.helpers.production_like import (
        App,
        add_reviewer,
        applied,
        open_hold_ids,
        posted_decisions,
        reject,
        signed_in,
    )

    source = settings.DATABASES["default"]
    holds_needed = options.rounds * options.decisions * 3  # Redis: before and during the outage; PostgreSQL: before
    postgres = OwnPostgres()
    with tempfile.TemporaryDirectory() as logs:
        redis = OwnRedis(Path(logs))
        app = None
        try:
            postgres.start()
            postgres.copy_schema(f"postgres://{source['USER']}@{source['HOST']}:{source['PORT']}/{source['NAME']}")
            redis.start()
            app = App(postgres.url, redis.url, Path(logs), holds=holds_needed)
            app.start_all()
            reviewer = add_reviewer(postgres.url, "bench-reviewer")
            platform = httpx.Client(base_url=app.platform_url, timeout=5)
            _wait(lambda: _answers(platform), "the platform")
            slow = [{"delay": PLATFORM_ANSWER_SECONDS, "path_contains": "/decision"}] * (holds_needed * 2)
            platform.post("/_control/faults", json={"faults": slow})
            holds = _wait(lambda: len(ids := open_hold_ids(postgres.url)) == holds_needed and ids, "the first sync")
            web = _wait(lambda: signed_in(app.web_url, reviewer), "gunicorn")
            pids = app.pids()

            def decide(pks: list[int]) -> None:
                for pk in pks:
                    if reject(web, pk).status_code != 302:
                        raise SystemExit(f"the decision of hold {pk} was not stored")

            def recovered(pks: list[int], back: float) -> float:
                _wait(lambda: applied(postgres.url) >= set(pks), "every decision applied", RECOVERY_TIMEOUT)
                return time.monotonic() - back

            times = {"Redis": [], "PostgreSQL": []}
            for number in range(options.rounds):
                batch, holds = holds[: options.decisions * 3], holds[options.decisions * 3 :]
                before, during, under_postgres = (batch[i::3] for i in range(3))

                sent = len(posted_decisions(platform))
                decide(before)
                _wait(lambda sent=sent: len(posted_decisions(platform)) > sent, "a delivery answered")
                redis.kill()
                down_until = time.monotonic() + options.outage
                decide(during)
                time.sleep(max(0.0, down_until - time.monotonic()))
                redis.start()
                times["Redis"].append(recovered(before + during, time.monotonic()))

                sent = len(posted_decisions(platform))
                decide(under_postgres)
                _wait(lambda sent=sent: len(posted_decisions(platform)) > sent, "a delivery answered")
                postgres.stop()
                time.sleep(options.outage)
                postgres.start()
                times["PostgreSQL"].append(recovered(under_postgres, time.monotonic()))
                print(
                    f"round {number + 1}: every decision applied {times['Redis'][-1]:5.1f} s after Redis' return, "
                    f"{times['PostgreSQL'][-1]:5.1f} s after PostgreSQL's",
                    flush=True,
                )
            if app.pids() != pids:
                raise SystemExit(f"a process exited: {app.pids()} (started as {pids}); logs in {logs}")
        finally:
            if app is not None:
                app.stop()
            redis.discard()
            postgres.discard()

    print(
        f"\nservice's return to every decision applied, {options.rounds} rounds of {options.decisions * 2} and ", end=""
    )
    print(f"{options.decisions} decisions, {options.outage:g} s outages (every process the same throughout):")
    print(f"{'fault':<12} {'median s':>9} {'max s':>7}")
    for fault, seconds in times.items():
        print(f"{fault:<12} {statistics.median(seconds):9.1f} {max(seconds):7.1f}")


def _answers(platform: httpx.Client) -> bool:
    try:
        return platform.get("/_control/requests").status_code == 200
    except httpx.TransportError:
        return False


def _wait(condition, what: str, timeout: float = 90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if outcome := condition():
            return outcome
        time.sleep(0.1)
    print(f"gave up waiting for {what} after {timeout:.0f} s", file=sys.stderr)
    raise SystemExit(1)


if __name__ == "__main__":
    main()
