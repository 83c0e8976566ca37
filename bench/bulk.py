"""A bulk decision's server time: the summary of 20 and of 200 selected holds, and its confirm.

    .venv/bin/python -m bench.bulk [--sizes 20,200] [--rounds 5]

Each round posts the queue's selection (approve, with a comment) through Django's
handler in this process (no network), then confirms the summary it got: one
decision per hold, each stored, audited and queued for delivery. Every round takes
fresh holds. Decisions are queued on Redis database 13 (``BENCH_REDIS_URL``), which
is emptied before and after; no worker runs, so nothing reaches the platform.
"""

import argparse
import os
import time

from bench import setup

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="20,200", help="comma-separated numbers of holds per bulk decision")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    os.environ["REDIS_URL"] = REDIS_URL
    setup.django_on_fresh_database()

    import redis
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    from holds.mirror import platform, sync
    from holds.models import Decision, Hold
    from reviewqueue import roles
    from tests.helpers.forms import fields_of
    from tests.helpers.users import make_user

    setup_test_environment()  # the test client's host name is allowed
    broker = redis.Redis.from_url(REDIS_URL)
    broker.flushdb()
    needed = sum(sizes) * options.rounds
    with setup.simulated_platform(needed * 2), platform.PlatformClient.from_settings() as client_api:
        sync.sync_env(client_api, "default")
    approvable = iter(
        Hold.objects.filter(status=Hold.Status.OPEN, actions__contains=["approve"])
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    browser = Client()
    browser.force_login(make_user("bench", roles.REVIEWERS))

    for size in sizes:
        summaries, confirms, totals = [], [], []
        for _ in range(options.rounds):
            selection = {"hold": [str(next(approvable)) for _ in range(size)], "action": "approve", "comment": "bench"}
            reset_queries()  # the query log keeps at most 9,000 queries: count each round's alone
            started = time.perf_counter()
            with CaptureQueriesContext(connection) as summary_queries:
                summary = browser.post("/holds/bulk/review", selection)
            shown = time.perf_counter()
            with CaptureQueriesContext(connection) as confirm_queries:
                result = browser.post(
                    "/holds/bulk/review", fields_of(summary.content.decode(), "confirm-form") | {"confirm": "yes"}
                )
            done = time.perf_counter()
            assert summary.status_code == 200 and result.status_code == 200
            assert f"{size} decision{'s' if size > 1 else ''} sent" in result.content.decode(), (
                "some holds were not sent"
            )
            summaries.append(shown - started)
            confirms.append(done - shown)
            totals.append(done - started)
        print(
            f"{size:4} holds  summary {setup.summary(summaries)} ({len(summary_queries.captured_queries)} queries)"
            f"  confirm {setup.summary(confirms)} ({len(confirm_queries.captured_queries)} queries)"
            f"  both {setup.summary(totals)}"
        )
    print(f"decisions stored: {Decision.objects.count()}")
    broker.flushdb()


if __name__ == "__main__":
    main()
