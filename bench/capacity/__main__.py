"""How many reviewers one installation holds: a team's whole day under Locust, in steps, with its knee.

    .venv/bin/python -m bench.capacity [--steps 25,50,100,200,400] [--duration 60] [--think 10] [--rate 2]
                                       [--web 2 --workers 2 --events 1] [--baseline REV]

Serves this checkout as production runs it (bench/capacity/stack.py: gunicorn with ``--web`` workers, uvicorn for
``/events/``, a Celery worker of ``--workers`` processes and beat, PostgreSQL, Redis, the simulated platform in a
process of its own, ``--holds`` open holds on it) and, with ``--baseline REV``, the same at that git revision (a
worktree of it, with a database and a Redis database of its own). Then, for each step of N reviewers, it runs the
scenario (bench/capacity/load.py: N reviewers with their live streams, N/20 auditors, N/10 API scripts, holds
arriving at ``--rate`` a second, a 0-people policy deciding a share) against each stack in turn, the order turning
each step, for ``--duration`` seconds after a ramp, and prints:

- per kind of request: the requests a second, p50, p95 and p99 in ms, and the failures;
- decisions delivered to the platform a second; a new hold's time from its ask to the queue (mirrored) and to the
  reviewers' streams, p95; the 5xx and the streams that failed;
- each process's CPU in cores (gunicorn's and Celery's children counted with them, PostgreSQL's backends for the
  stack's database), the load generator's, and the most PostgreSQL connections the stack held;
- the knee: the largest N where every kind's p95 is under 300 ms with no failure, no 5xx and no stream failing.

At the end it checks that no decision was lost or doubled: every decision stored reached the platform with its
Idempotency-Key alone, and each is applied. Locust's CSV (``*_stats.csv`` etc.) of every step, and every process's
log, are kept under ``--output`` (default: a new temporary folder, printed). BENCH_DATABASE names this checkout's
database (default ``reviewqueue_bench_capacity``; the baseline's adds ``_baseline``), BENCH_REDIS_URL its Redis
database (default 14; the baseline takes the one below).
"""

import argparse
import bisect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from bench import serving, setup
from bench.capacity.stack import SIGNING_SECRET, Stack, wait_until

P95_LIMIT_MS = 300
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", default="25,50,100,200,400", help="reviewers at each step")
    parser.add_argument("--duration", type=float, default=60, help="seconds measured at each step")
    parser.add_argument("--ramp", type=float, default=10, help="seconds of each step before measuring")
    parser.add_argument("--think", type=float, default=10, help="a person's mean pause, seconds")
    parser.add_argument("--rate", type=float, default=2, help="holds arriving a second")
    parser.add_argument("--holds", type=int, default=4000, help="open holds on the platform at the start")
    parser.add_argument("--web", type=int, default=2, help="gunicorn workers (WEB_CONCURRENCY)")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (WORKER_CONCURRENCY)")
    parser.add_argument("--events", type=int, default=1, help="uvicorn processes for /events/")
    parser.add_argument("--baseline", help="a git revision to run side by side, in interleaved rounds")
    parser.add_argument("--output", help="where the CSV and the logs go (default: a new temporary folder)")
    options = parser.parse_args()
    steps = [int(step) for step in options.steps.split(",")]
    output = Path(options.output or tempfile.mkdtemp(prefix="bench-capacity-"))
    output.mkdir(parents=True, exist_ok=True)
    database = os.environ.get("BENCH_DATABASE", "reviewqueue_bench_capacity")
    most = max(steps)
    counts = {"reviewers": most, "auditors": auditors(most), "scripts": scripts(most)}
    print_proportions(steps, options)
    print(f"CSV and logs under {output}", flush=True)

    from tests.helpers.fake_slack import FakeSlack

    stacks = [Stack("this checkout", serving.ROOT, database, setup.TEMPLATE, REDIS_URL, options, output)]
    worktree = None
    if options.baseline:
        worktree = baseline_worktree(options.baseline, output)
        baseline_redis = REDIS_URL.rsplit("/", 1)[0] + f"/{int(REDIS_URL.rsplit('/', 1)[1]) - 1}"
        label = f"baseline {options.baseline}"
        same = subprocess.run(["git", "diff", "--quiet", options.baseline, "--", "*/migrations/"], cwd=serving.ROOT)
        template = setup.TEMPLATE if same.returncode == 0 else "template1"  # migrated by its own migrations then
        stacks.insert(0, Stack(label, worktree, f"{database}_baseline", template, baseline_redis, options, output))
    results: dict[str, dict[int, dict]] = {stack.label: {} for stack in stacks}
    with serving.stopped_at_exit(), FakeSlack() as slack:
        try:
            for stack in stacks:
                stack.start(slack.api_url)
                stack.plan = stack.seed(**counts, slack_buttons=most * 2)
                stack.plan |= {"web_url": stack.web_url, "events_url": stack.events_url}
                stack.plan |= {"platform_url": stack.platform_url, "slack_secret": SIGNING_SECRET}
                stack.plan |= {"slack_response_url": slack.response_url(), "csrf": "capacitybenchcsrftoken0123456789"}
                wait_until(stack.settled, 120)
            print(f"started {', '.join(stack.label for stack in stacks)}", flush=True)
            for number, reviewers in enumerate(steps):
                for stack in stacks if number % 2 == 0 else stacks[::-1]:
                    step = run_step(stack, reviewers, options, output)
                    results[stack.label][reviewers] = step
                    print_step(stack.label, reviewers, step, options)
                    if exited := stack.exited():
                        raise SystemExit(f"{stack.label}: {exited} exited; logs under {stack.logs}")
            checks = {stack.label: check_decisions(stack) for stack in stacks}
        finally:
            for stack in stacks:
                stack.stop()
            if worktree is not None:
                subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=serving.ROOT, check=False)
    print_summary(results, checks, steps, options)
    if any(checks.values()):
        raise SystemExit("decisions lost or doubled: " + "; ".join(f"{k}: {v}" for k, v in checks.items() if v))


def auditors(reviewers: int) -> int:
    return max(1, reviewers // 20)


def scripts(reviewers: int) -> int:
    return max(1, reviewers // 10)


def print_proportions(steps: list[int], options) -> None:
    print(
        f"bench.capacity: steps of {steps} reviewers, {options.duration:g} s measured after a {options.ramp:g} s ramp; "
        f"gunicorn {options.web} workers, uvicorn {options.events} for /events/, Celery {options.workers} + beat"
    )
    print(
        "  per step of N: N reviewers, N/20 auditors, N/10 API scripts (at least one each); "
        f"holds arriving {options.rate:g}/s (a 0-people policy approves the small llamaindex refunds: ~1 in 8)"
    )
    print(
        f"  a reviewer (pauses ~{options.think:g} s): reads the queue 6, filters or searches 2, decides one hold 4"
        " (approve 6 : edit 2 : reject 2 on its page and summary, then 1 in 10 undone and decided again later),"
        " bulk approves 5 holds 1, presses a Slack button 1; the queue's body again on each stream event about holds"
    )
    print("  an auditor: the audit list 4, the day's CSV export 1; an API script: list, read a hold, decide it")


def baseline_worktree(revision: str, output: Path) -> Path:
    path = output / "baseline"
    subprocess.run(["git", "worktree", "add", "--detach", str(path), revision], cwd=serving.ROOT, check=True)
    return path


def run_step(stack: Stack, reviewers: int, options, output: Path) -> dict:
    plan = dict(stack.plan)
    for pool in ("reviewers_holds", "scripts_holds"):  # what the steps before decided is decided
        plan[pool] = stack.plan[pool] = stack.still_undecided(plan[pool])
    plan["users"] = {"reviewers": reviewers, "auditors": auditors(reviewers), "scripts": scripts(reviewers)}
    plan |= {"think": options.think, "rate": options.rate, "duration": options.duration, "ramp": options.ramp}
    name = f"{stack.label.replace(' ', '-')}-{reviewers}"
    plan["csv_prefix"] = str(output / name)
    plan_path, result_path = output / f"{name}.plan.json", output / f"{name}.result.json"
    plan_path.write_text(json.dumps(plan))
    connections, sampling = [], threading.Event()

    def sample() -> None:
        while not sampling.wait(1):
            connections.append(stack.connections())

    sampler = threading.Thread(target=sample, daemon=True)
    with open(output / f"{name}.load.log", "wb") as log:
        load = subprocess.Popen(
            [sys.executable, "-m", "bench.capacity.load", str(plan_path), str(result_path)],
            cwd=serving.ROOT, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        time.sleep(options.ramp)
        before, started = stack.cpu_seconds(), time.monotonic()
        sampler.start()
        load.wait(timeout=options.ramp + options.duration + 600)
        after, elapsed = stack.cpu_seconds(), time.monotonic() - started
    sampling.set()
    if load.returncode != 0:
        raise SystemExit(f"{stack.label}: the load process exited {load.returncode} (log: {output / name}.load.log)")
    result = json.loads(result_path.read_text())
    result["cpu"] = {name: (after[name] - before.get(name, 0)) / elapsed for name in after if " " not in name}
    backends = [name for name in after if name.startswith("PostgreSQL ")]
    result["cpu"]["PostgreSQL"] = sum(after[name] - before.get(name, 0) for name in backends) / elapsed
    result["cpu"]["load generator"] = result["load_cpu"]
    result["connections"] = max(connections, default=stack.connections())
    stack.plan["slack"] = plan["slack"][len(plan["slack"]) - result["slack_left"] :]  # a button is pressed once
    result |= delays(stack, result)
    wait_until(stack.settled, 60)
    return result


def delays(stack: Stack, result: dict) -> dict:
    """Decisions delivered a second in the step, and a new hold's time from its ask to the queue and the streams."""
    started, ended = result["started"], result["ended"]
    delivered = [
        post for post in stack.platform_decisions() if started <= post["received_at"] <= ended and post["status"] == 200
    ]
    # Holds asked in the step, but not in its last sync interval or so, which the step's end would cut short.
    last = ended - min(12.0, (ended - started) / 2)
    asked = {hold_id: moment for hold_id, moment in result["asked"] if started <= moment <= last}
    mirrored = stack.query(
        "SELECT hold_id, extract(epoch FROM first_seen_at)::float, id FROM holds_hold WHERE hold_id = ANY(%s)",
        [list(asked)],
    )
    to_queue = [seen - asked[hold_id] for hold_id, seen, _ in mirrored]
    # A new hold reaches a stream with the first "hold" event after it was mirrored (its transaction's commit).
    to_stream = []
    for moments in result["hold_events"]:
        for hold_id, seen, _ in mirrored:
            told = moments[bisect.bisect_left(moments, seen)] if moments and moments[-1] >= seen else None
            if told is not None:
                to_stream.append(told - asked[hold_id])
    return {
        "delivered_per_second": len(delivered) / (ended - started),
        "asked_count": len(asked),
        "unmirrored": len(asked) - len(mirrored),
        "to_queue_p95": setup.percentile(to_queue, 0.95) if to_queue else None,
        "to_stream_p95": setup.percentile(to_stream, 0.95) if to_stream else None,
    }


IN_FLIGHT = timedelta(seconds=2)  # the longest a request of the load takes to store its decisions


def check_decisions(stack: Stack) -> str:
    """'' when every decision stored reached the platform once, with its own Idempotency-Key and no other, and was
    applied; else what went wrong (as tests/operations/test_faults.py counts)."""

    def quiet() -> bool:
        return stack.settled() and not stack.query("SELECT count(*) FROM holds_decision WHERE state = 'sending'")[0][0]

    # Quiet twice, IN_FLIGHT apart: a request the load left under way (a bulk send) may not have committed at first.
    wait_until(lambda: quiet() and (time.sleep(IN_FLIGHT.total_seconds()) or quiet()), 120)
    stored = stack.query(
        "SELECT hold.hold_id, decision.idempotency_key::text, decision.state FROM holds_decision decision"
        " JOIN holds_hold hold ON hold.id = decision.hold_id WHERE decision.state <> 'withdrawn'"
    )
    keys_sent: dict[str, set[str]] = {}
    for post in stack.platform_decisions():
        keys_sent.setdefault(post["hold_id"], set()).add(post["headers"]["idempotency-key"])
    problems = []
    lost = [hold_id for hold_id, key, _ in stored if key not in keys_sent.get(hold_id, set())]
    doubled = [hold_id for hold_id, keys in keys_sent.items() if len(keys) > 1]
    unapplied = [hold_id for hold_id, _, state in stored if state != "applied"]
    if lost:
        problems.append(f"{len(lost)} never reached the platform (e.g. {lost[:3]})")
    if doubled:
        problems.append(f"{len(doubled)} holds got two keys (e.g. {doubled[:3]})")
    if unapplied:
        problems.append(f"{len(unapplied)} not applied (e.g. {unapplied[:3]})")
    stack.decisions_checked = len(stored)
    return "; ".join(problems)


def knee_of(steps: dict[int, dict]) -> int | None:
    passed = [reviewers for reviewers, step in steps.items() if healthy(step)]
    return max(passed, default=None)


def healthy(step: dict) -> bool:
    return (
        all(kind["p95"] < P95_LIMIT_MS and not kind["failures"] for kind in step["stats"].values())
        and not step["server_errors"]
        and not step["stream_failure_count"]
    )


def print_step(label: str, reviewers: int, step: dict, options) -> None:
    seconds = step["ended"] - step["started"]
    print(f"\n== {label}: {reviewers} reviewers ({'within' if healthy(step) else 'PAST'} the limits)")
    print(f"  {'request':<26} {'req/s':>7} {'p50':>6} {'p95':>6} {'p99':>6} {'failed':>6}")
    for name, kind in sorted(step["stats"].items()):
        print(
            f"  {name:<26} {kind['requests'] / seconds:7.2f} {kind['p50']:6.0f} {kind['p95']:6.0f} {kind['p99']:6.0f}"
            f" {kind['failures']:6d}"
        )
    queue, stream = (
        f"{seconds:.1f} s" if seconds is not None else "-" for seconds in (step["to_queue_p95"], step["to_stream_p95"])
    )
    print(
        f"  decisions delivered {step['delivered_per_second']:.2f}/s; a new hold's ask -> queue p95 {queue},"
        f" -> stream p95 {stream}"
        f" ({step['asked_count']} asked, {step['unmirrored']} not mirrored yet)"
    )
    print("  CPU (cores): " + ", ".join(f"{name} {cores:.2f}" for name, cores in step["cpu"].items()))
    print(
        f"  PostgreSQL connections (most): {step['connections']}; 5xx: {len(step['server_errors'])}; "
        f"streams failed: {step['stream_failure_count']}"
    )
    for failure in step["failures"][:5]:
        print(f"  failure: {failure}")


def print_summary(results: dict, checks: dict, steps: list[int], options) -> None:
    labels = list(results)
    print(f"\n== the knee (largest N with every p95 < {P95_LIMIT_MS} ms, no failure, no 5xx), side by side")
    header = f"  {'reviewers':>9}" + "".join(f" | {label[:28]:>28}" for label in labels)
    print(header)
    for reviewers in steps:
        cells = []
        for label in labels:
            step = results[label][reviewers]
            worst = max(step["stats"].items(), key=lambda item: item[1]["p95"], default=("-", {"p95": 0}))
            mark = "ok" if healthy(step) else "PAST"
            cells.append(f"{mark:>4} worst p95 {worst[1]['p95']:5.0f} ms {worst[0][:9]:>9}")
        print(f"  {reviewers:>9}" + "".join(f" | {cell:>28}" for cell in cells))
    for label in labels:
        knee = knee_of(results[label])
        load = statistics.mean(step["cpu"]["load generator"] for step in results[label].values())
        print(
            f"  {label}: knee {knee if knee is not None else f'below {min(steps)}'} reviewers; "
            f"decisions: {checks[label] or 'none lost or doubled, each applied'}; load generator {load:.2f} cores"
        )
    print(f"  machine load average (1 min) {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
