"""The queue page's server time and query count with 10,000 open holds.

    .venv/bin/python -m bench.queue [--holds 10000] [--requests 60]

Times the whole request through Django's handler in this process (no network),
for the first page, a filtered page, a search, a page deep into the queue, and
the same in the other orders (by amount, by age) and with an amount range.
Then prints the query plans of the filter choices and of a search, whose cost
must not grow with the open holds (``--holds 1000`` / ``100000`` to compare).
"""

import argparse
import time

from bench import setup


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--verbose", action="store_true", help="print each query's time")
    options = parser.parse_args()
    setup.django_on_fresh_database()

    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    from holds import platform, sync
    from reviewqueue import roles
    from tests.conftest import make_user

    setup_test_environment()  # records each response's template context, for the row count

    with setup.simulated_platform(options.holds), platform.PlatformClient.from_settings() as client_api:
        sync.sync_env(client_api, "default")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum soon would: without statistics Postgres picks no queue index
    browser = Client()
    browser.force_login(make_user("bench", roles.REVIEWERS))
    deep_cursor = page_21(browser, "/?")
    deep_amount_cursor = page_21(browser, "/?sort=amount&")

    for label, url in [
        ("first page", "/"),
        ("htmx refresh", "/?loaded_at=2026-01-01T00:00:00%2B00:00"),
        ("filtered: agent + expiring 4h", "/?agent=support-agno&expiring=4h"),
        ("search: order id", "/?q=A-55010"),
        ("page 21 (keyset)", f"/?after={deep_cursor}"),
        ("sorted by amount", "/?sort=amount"),
        ("sorted by amount, page 21", f"/?sort=amount&after={deep_amount_cursor}"),
        ("sorted by age", "/?sort=age"),
        ("amount 100 to 150, by amount", "/?sort=amount&min_amount=100&max_amount=150"),
    ]:
        headers = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "queue-body"} if "htmx" in label else {}
        times = []
        for _ in range(options.requests):
            started = time.perf_counter()
            response = browser.get(url, **headers)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200
        with CaptureQueriesContext(connection) as queries:
            browser.get(url, **headers)
        if options.verbose:
            for query in queries.captured_queries:
                print(f"    {float(query['time']) * 1000:6.1f} ms  {query['sql'][:150]}")
        print(f"{label:32} {setup.summary(times)}  {len(queries.captured_queries)} queries  rows={len(response.context['rows'])}")
    print_plans()


def print_plans() -> None:
    """EXPLAIN ANALYZE of the filter choices and of a search, as the queue runs them."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from holds import queue

    search = queue.filtered(queue.Filters(q="a-55010"), user=None, now=timezone.now())
    for label, run in [("filter choices", queue.filter_values), ("search: order id", lambda: list(search[: queue.PAGE_SIZE]))]:
        with CaptureQueriesContext(connection) as queries:
            run()
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {queries.captured_queries[0]['sql']}")
            print(f"\nplan of {label}:")
            for (line,) in cursor.fetchall():
                print(f"    {line}")


def page_21(browser, query_start: str) -> str:
    """The cursor of page 21 in the order the query names, by following the pages there."""
    cursor = browser.get(query_start).context["next_cursor"]
    for _ in range(20):
        cursor = browser.get(f"{query_start}after={cursor}").context["next_cursor"]
    return cursor


if __name__ == "__main__":
    main()
