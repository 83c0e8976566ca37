"""How long a sync of 10,000 open holds takes, and how many queries it makes.

    .venv/bin/python -m bench.sync [--holds 10000]
"""

import argparse
import time

from bench import setup


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=10_000)
    options = parser.parse_args()
    setup.django_on_fresh_database()

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from holds import platform, sync

    with setup.simulated_platform(options.holds) as state, platform.PlatformClient.from_settings() as client:
        for label, change in [
            ("first sync (all new)", None),
            ("second sync (unchanged)", None),
            ("after 100 changed, 100 decided elsewhere", lambda: _change(state, 100)),
        ]:
            if change:
                change()
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                result = sync.sync_env(client, "default")
                elapsed = time.perf_counter() - started
            print(
                f"{label:42} {elapsed:6.2f} s  {len(queries.captured_queries):5d} queries  "
                f"open={result.open} created={result.created} updated={result.updated} closed={result.closed}"
            )


def _change(state, count: int) -> None:
    holds, _ = state.list_open("default", limit=100)
    for hold in holds[: count // 2]:
        state.get_hold("default", hold["hold_id"])["question"] += " (edited)"
    for hold in holds[count // 2 : count]:
        state.decide_elsewhere("default", hold["hold_id"], "bench@example.com")


if __name__ == "__main__":
    main()
