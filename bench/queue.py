"""The queue page's server time and query count with 10,000 open holds.

    .venv/bin/python -m bench.queue [--holds 10000] [--requests 60]

Times the whole request through Django's handler in this process (no network),
for the first page, a filtered page, a search, and a page deep into the queue.
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
    browser = Client()
    browser.force_login(make_user("bench", roles.REVIEWERS))
    deep_cursor = browser.get("/").context["next_cursor"]
    for _ in range(20):
        deep_cursor = browser.get(f"/?after={deep_cursor}").context["next_cursor"]

    for label, url in [
        ("first page", "/"),
        ("htmx refresh", "/?loaded_at=2026-01-01T00:00:00%2B00:00"),
        ("filtered: agent + expiring 4h", "/?agent=support-agno&expiring=4h"),
        ("search: order id", "/?q=A-55010"),
        ("page 21 (keyset)", f"/?after={deep_cursor}"),
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


if __name__ == "__main__":
    main()
