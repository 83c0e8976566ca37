"""The hold page's server time and query count, in its usual states.

    .venv/bin/python -m bench.hold_page [--holds 1000] [--requests 200] [--verbose]

Times the whole request through Django's handler in this process (no network), as a
reviewer while another reviewer has the page open: an open hold nobody decided, the
same hold with a decision in its undo window, and after that decision was undone.
The database is in autocommit, as in production, so a transaction's BEGIN and COMMIT
count as queries.
"""

import argparse
import time

from bench import setup


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--verbose", action="store_true", help="print each query")
    options = parser.parse_args()
    setup.django_on_fresh_database()

    from django.conf import settings
    from django.test import Client

    from holds.deciding import decisions
    from holds.deciding.decisions import ItemChoice
    from holds.mirror import platform, sync
    from holds.models import Hold
    from reviewqueue import roles
    from tests.helpers.users import make_user

    settings.UNDO_SECONDS = 3600  # the decision stays in its undo window while it is timed
    with setup.simulated_platform(options.holds), platform.PlatformClient.from_settings() as client_api:
        sync.sync_env(client_api, "default")
    reviewer = make_user("bench", roles.REVIEWERS)
    browser, other = Client(HTTP_HOST="localhost"), Client(HTTP_HOST="localhost")  # a host ALLOWED_HOSTS names
    browser.force_login(reviewer)
    other.force_login(make_user("other", roles.REVIEWERS))
    hold = Hold.objects.filter(status=Hold.Status.OPEN, expires_at__isnull=True).order_by("pk").first()
    hold = hold or Hold.objects.filter(status=Hold.Status.OPEN).order_by("-expires_at").first()
    url = f"/holds/{hold.pk}/"
    other.get(url)

    time_page(browser, url, "open, undecided", options)
    choices = [ItemChoice(item_id=item.item_id, action="approve") for item in hold.items.all()]
    decision = decisions.submit(hold, reviewer, choices)
    time_page(browser, url, "live decision (undo window)", options)
    decisions.withdraw(decision.pk, reviewer)
    time_page(browser, url, "after an undo", options)


def time_page(browser, url, label, options) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    browser.get(url)  # the session's once-a-minute note of use is any page's, not this one's
    times = []
    for _ in range(options.requests):
        started = time.perf_counter()
        response = browser.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200
    with CaptureQueriesContext(connection) as queries:
        browser.get(url)
    if options.verbose:
        for query in queries.captured_queries:
            print(f"    {float(query['time']) * 1000:6.1f} ms  {query['sql'][:150]}")
    print(f"{label:30} {setup.summary(times)}  {len(queries.captured_queries)} queries")


if __name__ == "__main__":
    main()
