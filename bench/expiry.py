"""How long the expiry sweep and the reminder scan take over 10,000 open holds.

    .venv/bin/python -m bench.expiry [--holds 10000]

The generated holds' expiries spread from minutes to days; the run first times
both scans when nothing is due, then moves the clock so about a tenth is due.
"""

import argparse
import time
from datetime import timedelta

import time_machine

from bench import setup


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=10_000)
    options = parser.parse_args()
    setup.django_on_fresh_database()

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from holds.mirror import platform, sync
    from holds.models import Hold
    from holds.sweeps import expiry
    from reviewqueue import roles
    from tests.helpers.users import make_user

    for name in ("rev1", "rev2", "rev3"):
        make_user(name, roles.REVIEWERS)
    make_user("aud1", roles.AUDITORS)
    with setup.simulated_platform(options.holds), platform.PlatformClient.from_settings() as client:
        sync.sync_env(client, "default")
    expiries = sorted(Hold.objects.filter(expires_at__isnull=False).values_list("expires_at", flat=True))
    tenth = expiries[len(expiries) // 10]

    for label, moment in [("nothing due", timezone.now()), (f"~10% due ({tenth:%H:%M})", tenth + timedelta(seconds=1))]:
        with time_machine.travel(moment, tick=False):
            for name, scan in [("expiry sweep", expiry.sweep), ("reminder scan", expiry.remind)]:
                with CaptureQueriesContext(connection) as queries:
                    started = time.perf_counter()
                    acted = scan()
                    elapsed = time.perf_counter() - started
                print(
                    f"{label:22} {name:14} {elapsed * 1000:8.1f} ms  {len(queries.captured_queries):5d} queries  "
                    f"{len(acted)} holds acted on"
                )


if __name__ == "__main__":
    main()
