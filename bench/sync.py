"""What sync costs, side by side with a baseline in one run: the first sync against its floor, and the periodic sync
(``sync.keep_up``: the tail, and the reconciling walk) against walking the whole listing every interval (``sync_env``).

    .venv/bin/python -m bench.sync [--holds 10000] [--rounds 3] [--interval 10] [--reconcile 5] [--samples 50]
                                   [--platform apart|here]

First sync against its floor, in ``--rounds`` interleaved rounds: each lists a new env
of ``--holds`` generated holds through ``PlatformClient`` (fetch and parse, writing
nothing), syncs it into the empty mirror, and writes the very rows that sync wrote
into the same tables once more with a bare COPY (ids and env moved aside, every index
and constraint in place, rolled back): floor = fetch and parse + bare COPY. The
platform runs in a process of its own (``manage.py runplatform``), as a real one runs
elsewhere: in this process (``--platform here``) its work would take turns with sync's
for the interpreter, which a sync that lists while it writes pays and the floor's fetch,
listing alone, does not.

Then, on an env of as many holds mirrored beforehand, with nothing changing, one reconciling period
(``--reconcile`` minutes) of intervals (``--interval`` seconds) in simulated time
(time-machine moves the clock; durations are real): per interval, the listing
requests and this process's CPU, of the whole walk (baseline) and of ``keep_up``.

Delays, over ``--samples`` holds each, from the measured durations: a hold asked at a
uniformly random moment reaches the mirror at the end of the next sync that lists
it. The baseline starts a whole walk every interval, or as soon as the last ended
when a walk takes longer; ``keep_up`` lists the tail every interval. A hold decided
elsewhere, at a random interval of the period, is known when the reconciling walk
lists its page, or at once when a reviewer opens it (``holds.mirror.fresh``).
"""

import argparse
import random
import statistics
import time
from contextlib import ExitStack
from datetime import UTC, datetime

from bench import setup

COPIED = ("holds_hold", "holds_holditem", "holds_holdsubject", "audit_auditevent")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--interval", type=int, default=10, help="SYNC_INTERVAL_SECONDS")
    parser.add_argument("--reconcile", type=int, default=5, help="SYNC_RECONCILE_MINUTES")
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument(
        "--platform",
        choices=["apart", "here"],
        default="apart",
        help="where the simulated platform runs for the first sync: a process of its own, or this one",
    )
    options = parser.parse_args()
    setup.django_on_fresh_database()

    import time_machine
    from django.conf import settings

    from holds.mirror import platform, sync
    from holds.models import Hold

    settings.SYNC_INTERVAL_SECONDS, settings.SYNC_RECONCILE_MINUTES = options.interval, options.reconcile
    rng = random.Random(39)

    def fetch_and_parse(client: platform.PlatformClient, env: str) -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        listed = sum(1 for _ in client.open_holds(env))
        elapsed = time.perf_counter() - started, time.process_time() - cpu
        assert listed == options.holds, listed
        return elapsed

    def first_sync(client: platform.PlatformClient, env: str) -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        result = sync.sync_env(client, env)
        elapsed = time.perf_counter() - started, time.process_time() - cpu
        assert result.created == options.holds and not result.error, result
        return elapsed

    where = "in a process of its own" if options.platform == "apart" else "in this process"
    print(f"First sync of {options.holds:,} new holds against its floor (fetch and parse + bare COPY of its rows)")
    print(f"  the simulated platform runs {where}")
    ratios = []
    with setup.simulated_platform(0) as state:
        for round_number in range(1, options.rounds + 1):
            env = f"round{round_number}"
            with ExitStack() as serving:
                if options.platform == "apart":
                    serving.enter_context(setup.platform_apart(env, options.holds))
                else:
                    state.generate(env, options.holds)
                client = serving.enter_context(platform.PlatformClient.from_settings())
                if round_number % 2:
                    fetched, synced = fetch_and_parse(client, env), first_sync(client, env)
                else:
                    synced, fetched = first_sync(client, env), fetch_and_parse(client, env)
            copied = bare_copy(env)
            floor = fetched[0] + copied
            ratios.append(synced[0] / floor)
            print(
                f"  round {round_number}: fetch and parse {fetched[0]:6.2f} s + bare COPY {copied:6.2f} s"
                f" = floor {floor:6.2f} s   first sync {synced[0]:6.2f} s (cpu {synced[1]:6.2f})"
                f"   ratio {ratios[-1]:4.2f}"
            )
        print(f"  median ratio to the floor {statistics.median(ratios):.2f}")

    with setup.simulated_platform(0) as state, platform.PlatformClient.from_settings() as client:
        env = "steady"  # the periodic sync's env, arranged from here: the simulator runs in this process
        state.generate(env, options.holds)
        assert sync.sync_env(client, env).created == options.holds

        intervals = options.reconcile * 60 // options.interval
        with time_machine.travel(datetime.now(UTC), tick=True) as clock:

            def one_interval(step) -> tuple[float, float, int]:
                state.clear_requests()
                started, cpu = time.perf_counter(), time.process_time()
                result = step(client, env)
                elapsed = time.perf_counter() - started, time.process_time() - cpu
                assert not result.error, result
                listed = sum(1 for request in state.requests if request["path"].endswith("/holds"))
                clock.shift(options.interval)
                return (*elapsed, listed)

            whole = [one_interval(sync.sync_env) for _ in range(3)]
            clock.shift(options.reconcile * 60)  # a reconciling walk is due: the period below holds one whole
            tail = [one_interval(sync.keep_up) for _ in range(intervals)]
            print(
                f"\nEach interval of {options.interval} s, {options.holds:,} open holds, nothing changing"
                f" (keep_up: over one {options.reconcile}-minute period, {intervals} intervals)"
            )
            print(f"  {'':22} {'wall s':>8} {'cpu s':>8} {'listing requests':>17}")
            for label, runs in [("whole walk (baseline)", whole), ("keep_up", tail)]:
                wall, cpu, listed = (statistics.mean(column) for column in zip(*runs, strict=True))
                print(f"  {label:22} {wall:8.3f} {cpu:8.3f} {listed:17.1f}")
            walk_seconds = statistics.median(run[0] for run in whole)

            # New holds: the baseline's next walk, or keep_up's next tail, lists each.
            new_whole, new_tail = [], []
            for index in range(options.samples):
                state.add_hold(env, {"question": f"New hold {index}?"})
                if index % 5 == 0:  # a few whole walks with a new hold measured; each costs a whole walk
                    started = time.perf_counter()
                    sync.sync_env(client, env)
                    new_whole.append(time.perf_counter() - started)
                    continue
                started = time.perf_counter()
                assert sync.keep_up(client, env).created == 1
                new_tail.append(time.perf_counter() - started)
                clock.shift(options.interval)
            cadence = max(options.interval, walk_seconds)
            baseline_delays = [rng.random() * cadence + rng.choice(new_whole) for _ in range(options.samples)]
            tail_delays = [rng.random() * options.interval + rng.choice(new_tail) for _ in range(options.samples)]

            # Decided elsewhere: one a random interval of a period, until the mirror knows each.
            lasting = Hold.objects.filter(env=env, status="open", expires_at__isnull=True)  # none expires meanwhile
            chosen = rng.sample(list(lasting.values_list("hold_id", flat=True)), options.samples)
            when = sorted(rng.randrange(intervals) for _ in chosen)
            decided_at, known_at = {}, {}
            clock.shift(options.reconcile * 60)
            for step in range(3 * intervals):
                for hold_id, moment in zip(chosen, when, strict=True):
                    if moment == step:
                        state.decide_elsewhere(env, hold_id, "bench@example.com")
                        decided_at[hold_id] = step * options.interval + rng.random() * options.interval
                started = time.perf_counter()
                sync.keep_up(client, env)
                ended = step * options.interval + options.interval + time.perf_counter() - started
                closed = Hold.objects.filter(env=env, hold_id__in=decided_at.keys() - known_at.keys()).exclude(
                    status="open"
                )
                for hold_id in closed.values_list("hold_id", flat=True):
                    known_at[hold_id] = ended
                if len(known_at) == len(chosen):
                    break
                clock.shift(options.interval)
            decided_delays = [known_at[hold_id] - decided_at[hold_id] for hold_id in chosen]
            decided_baseline = [rng.random() * cadence + rng.choice(new_whole) for _ in range(options.samples)]

        print(f"\nDelays over {options.samples} holds each (s)        {'p50':>8} {'p95':>8}")
        for label, delays in [
            ("new hold to the mirror, whole walk", baseline_delays),
            ("new hold to the mirror, keep_up", tail_delays),
            ("decided elsewhere, whole walk", decided_baseline),
            ("decided elsewhere, keep_up's walk", decided_delays),
        ]:
            print(f"  {label:38} {statistics.median(delays):8.1f} {setup.percentile(delays, 0.95):8.1f}")
        print("  decided elsewhere, hold page opened: at once (a fresh read when the mirror is 5 s old)")


def bare_copy(env: str) -> float:
    """Seconds to COPY once more, bare, the rows the first sync of ``env`` wrote (holds, items, subjects, audit
    events), with ids, env and audit sequence moved aside so that every index and constraint takes them; rolled
    back."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT min(id), max(id) FROM holds_hold WHERE env = %s", [env]
        )  # the env's holds are the last written
        low, _ = cursor.fetchone()
        exported = {}
        for table in COPIED:
            cursor.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                [table],
            )
            exported[table] = [row[0] for row in cursor.fetchall()]
        shift = {}
        for table in COPIED:
            cursor.execute(f"SELECT max(id) FROM {table}")
            shift[table] = cursor.fetchone()[0] or 0
        cursor.execute("SELECT max(sequence) FROM audit_auditevent")
        sequence_shift = cursor.fetchone()[0]
        moved = {
            "holds_hold": {"id": shift["holds_hold"], "env": "'floor-' || env"},
            "holds_holditem": {"id": shift["holds_holditem"], "hold_id": shift["holds_hold"]},
            "holds_holdsubject": {"id": shift["holds_holdsubject"], "hold_id": shift["holds_hold"]},
            "audit_auditevent": {
                "id": shift["audit_auditevent"],
                "hold_record_id": shift["holds_hold"],
                "sequence": sequence_shift,
            },
        }
        where = {
            "holds_hold": f"env = '{env}'",
            "holds_holditem": f"hold_id >= {low}",
            "holds_holdsubject": f"hold_id >= {low}",
            "audit_auditevent": f"hold_record_id >= {low} AND kind = 'hold_seen'",
        }
        data = {}
        raw = connection.connection
        for table in COPIED:
            columns = []
            for column in exported[table]:
                change = moved[table].get(column)
                if change is None:
                    columns.append(f'"{column}"')
                elif isinstance(change, int):
                    columns.append(f'"{column}" + {change}')
                else:
                    columns.append(change)
            chunks = []
            with raw.cursor().copy(
                f"COPY (SELECT {', '.join(columns)} FROM {table} WHERE {where[table]} ORDER BY id) TO STDOUT"
            ) as copy:
                for chunk in copy:
                    chunks.append(bytes(chunk))
            data[table] = chunks
        # Checked as each row is written, not at a commit that never comes: the foreign keys cost the floor too.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        started = time.perf_counter()
        for table in COPIED:
            names = ", ".join(f'"{column}"' for column in exported[table])
            with raw.cursor().copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for chunk in data[table]:
                    copy.write(chunk)
        elapsed = time.perf_counter() - started
        transaction.set_rollback(True)
    return elapsed


if __name__ == "__main__":
    main()
