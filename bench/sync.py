"""How long a first sync of N new holds takes against fetching and parsing them, and what a resync costs.

    .venv/bin/python -m bench.sync [--holds 10000] [--rounds 3]

Each round lists a new env of ``--holds`` generated holds twice, in turn: once
only fetched and parsed through ``PlatformClient`` (the baseline, writing
nothing), once synced into the empty mirror. The order alternates between rounds
so that both see the same load; the ratio of the two is the figure to watch.
Each time is printed with this process's CPU time beside it: on a busy machine
the wall time includes waiting for a core, and the database's work is not in it.
Then the last env is synced again unchanged (its queries, and its writes besides
the sync's own bookkeeping, which should be none), and after 100 of its holds
changed and 100 were decided elsewhere.
"""

import argparse
import statistics
import time

from bench import setup

BOOKKEEPING = ("holds_syncstate", "operations_syncstats")  # a sync's lease and result, and the metrics' counters


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    setup.django_on_fresh_database()

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from holds.mirror import platform, sync

    def fetch_and_parse(env: str) -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        listed = sum(1 for _ in client.open_holds(env))
        elapsed = time.perf_counter() - started, time.process_time() - cpu
        assert listed == options.holds, listed
        return elapsed

    def first_sync(env: str) -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        result = sync.sync_env(client, env)
        elapsed = time.perf_counter() - started, time.process_time() - cpu
        assert result.created == options.holds and not result.error, result
        return elapsed

    with setup.simulated_platform(0) as state, platform.PlatformClient.from_settings() as client:
        ratios = []
        print(f"{options.holds:,} new holds a round: fetch and parse (baseline) against first sync")
        for round_number in range(1, options.rounds + 1):
            env = f"round{round_number}"
            state.generate(env, options.holds)
            if round_number % 2:
                fetched = fetch_and_parse(env)
                synced = first_sync(env)
            else:
                synced = first_sync(env)
                fetched = fetch_and_parse(env)
            ratios.append(synced[0] / fetched[0])
            print(
                f"  round {round_number}: fetch and parse {fetched[0]:7.2f} s (cpu {fetched[1]:6.2f})   "
                f"first sync {synced[0]:7.2f} s (cpu {synced[1]:6.2f})   ratio {ratios[-1]:5.2f}"
            )
        print(f"  median ratio {statistics.median(ratios):.2f}")

        for label, change in [
            ("resync (unchanged)", None),
            ("after 100 changed, 100 decided elsewhere", lambda: _change(state, env, 100)),
        ]:
            if change:
                change()
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                result = sync.sync_env(client, env)
                elapsed = time.perf_counter() - started
            writes = [
                query
                for query in queries.captured_queries
                if query["sql"].split()[0] in ("INSERT", "UPDATE", "DELETE", "COPY")
                and not any(table in query["sql"] for table in BOOKKEEPING)
            ]
            print(
                f"{label:42} {elapsed:6.2f} s  {len(queries.captured_queries):5d} queries  {len(writes):4d} writes  "
                f"open={result.open} created={result.created} updated={result.updated} closed={result.closed}"
            )


def _change(state, env: str, count: int) -> None:
    holds, _ = state.list_open(env, limit=100)
    for hold in holds[: count // 2]:
        state.get_hold(env, hold["hold_id"])["question"] += " (edited)"
    for hold in holds[count // 2 : count]:
        state.decide_elsewhere(env, hold["hold_id"], "bench@example.com")


if __name__ == "__main__":
    main()
