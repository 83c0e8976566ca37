"""The queue with approval chains on half its holds against the same queue under a two-person policy, in turns.

    .venv/bin/python -m bench.chains [--holds 100000] [--rounds 6] [--requests 20] [--under-way 500]
    .venv/bin/python -m bench.chains --sync [--holds 20000] [--rounds 2]

Syncs ``--holds`` open holds from the simulator into a fresh database, signs in a reviewer of Finance, and gives
``--under-way`` of the holds a first approval (their open rounds, and the stages they wait for). Then, in
interleaved rounds, it times the queue's first page, and the *waiting for my stage* filter, under two sets of
policies on the same half of the holds (the agents ``llamaindex-support`` and ``upsonic-support``):

- **today**: "two people, the second of Finance" (a policy without stages, as before chains);
- **chains**: Support leads 1, then Finance 2 alongside Legal 1 (three stages of their own).

It prints the median of each page under each, with the query count and rows, and their ratio.

``--sync`` times instead what stamping a chain's first stages costs sync (``approvals.awaiting.follow_mirrored``):
the first sync of ``--holds`` new holds (an env of their own each time) with the chains on half of them against the
same sync with no policy, in interleaved rounds.
"""

import argparse
import statistics
import time

from bench import setup
from bench.queue import synced_and_signed_in

CHAIN_AGENTS = ("llamaindex-support", "upsonic-support")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--under-way", type=int, default=500, help="holds with a first approval already given")
    parser.add_argument("--sync", action="store_true", help="time sync's first pass with chains against none")
    options = parser.parse_args()
    if options.sync:
        sync_with_and_without(options.holds, options.rounds)
        return
    browser, reviewer = synced_and_signed_in(options.holds)

    from django.contrib.auth.models import Group
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from approvals.models import ApprovalPolicy

    groups = {name: Group.objects.create(name=name) for name in ("Support leads", "Finance", "Legal")}
    reviewer.groups.add(groups["Finance"])
    _under_way(options.under_way, groups)

    def median_of(path: str) -> tuple[float, int, int]:
        for _ in range(3):
            browser.get(path)
        times = []
        for _ in range(options.requests):
            started = time.perf_counter()
            assert browser.get(path).status_code == 200
            times.append(time.perf_counter() - started)
        with CaptureQueriesContext(connection) as queries:
            response = browser.get(path)
        rows = response.content.count(b'class="hold-row')
        return statistics.median(times) * 1000, len(queries.captured_queries), rows

    pages = {"first page": "/", "waiting for my stage": "/?approval=mine"}
    medians: dict[tuple[str, str], list[float]] = {}
    shape = {}
    for turn in range(options.rounds):
        for mode in ["today", "chains"] if turn % 2 == 0 else ["chains", "today"]:
            ApprovalPolicy.objects.all().delete()
            _policies(mode, groups)
            for page, path in pages.items():
                median, queries, rows = median_of(path)
                medians.setdefault((mode, page), []).append(median)
                shape[(mode, page)] = (queries, rows)
    print(
        f"queue at {options.holds:,} open holds, chains on the holds of {' and '.join(CHAIN_AGENTS)}, "
        f"{options.under_way} under way; {options.rounds} rounds of {options.requests} requests"
    )
    print(f"{'':44} {'p50':>9}  queries  rows")
    for page in pages:
        for mode in ("today", "chains"):
            queries, rows = shape[(mode, page)]
            label = f"{page}, {mode}"
            print(f"{label:44} {statistics.median(medians[(mode, page)]):6.2f} ms  {queries:7}  {rows:4}")
        ratio = statistics.median(medians[("chains", page)]) / statistics.median(medians[("today", page)])
        print(f"{page + ', chains / today':44} {ratio:6.2f}x")


def sync_with_and_without(holds: int, rounds: int) -> None:
    setup.django_on_fresh_database()

    from django.contrib.auth.models import Group

    from approvals.models import ApprovalPolicy, AwaitedStage
    from holds.mirror import platform, sync

    groups = {name: Group.objects.create(name=name) for name in ("Support leads", "Finance", "Legal")}
    seconds: dict[str, list[float]] = {"no policy": [], "chains": []}
    stamped = 0
    with setup.simulated_platform(0) as state, platform.PlatformClient.from_settings() as api:
        for turn in range(rounds):
            for mode in ["no policy", "chains"] if turn % 2 == 0 else ["chains", "no policy"]:
                ApprovalPolicy.objects.all().delete()
                if mode == "chains":
                    _policies("chains", groups)
                env = f"r{turn}{mode[0]}"
                state.generate(env, holds)
                before = AwaitedStage.objects.count()
                started = time.perf_counter()
                sync.sync_env(api, env)
                seconds[mode].append(time.perf_counter() - started)
                stamped = max(stamped, AwaitedStage.objects.count() - before)
    print(f"first sync of {holds:,} new holds, {rounds} rounds; chains stamp {stamped:,} stage rows a sync")
    for mode, taken in seconds.items():
        print(f"{mode:12} median {statistics.median(taken):6.2f} s  ({', '.join(f'{one:.2f}' for one in taken)})")
    ratio = statistics.median(seconds["chains"]) / statistics.median(seconds["no policy"])
    print(f"chains / no policy {ratio:6.2f}x")


def _policies(mode: str, groups: dict) -> None:
    from decimal import Decimal

    from approvals.models import ApprovalPolicy, ApprovalStage

    for agent in CHAIN_AGENTS:
        policy = ApprovalPolicy.objects.create(
            name=f"large refunds of {agent}",
            agent_pattern=agent,
            condition_key="amount",
            condition_operator=ApprovalPolicy.Operator.GREATER,
            condition_threshold=Decimal(0),
            approvals_required=2 if mode == "today" else 4,
            later_approver_group=groups["Finance"] if mode == "today" else None,
        )
        if mode == "chains":
            for position, (group, approvals, alongside) in enumerate(
                [("Support leads", 1, False), ("Finance", 2, False), ("Legal", 1, True)], start=1
            ):
                ApprovalStage.objects.create(
                    policy=policy, position=position, group=groups[group], approvals=approvals, with_previous=alongside
                )


def _under_way(count: int, groups: dict) -> None:
    """A first approval on ``count`` of the chains' holds, and the stages their rounds wait for (Finance and Legal),
    written as the counting would."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from approvals.models import Approval, AwaitedStage
    from holds.models import Hold

    lead = User.objects.create_user("bench-lead")
    lead.groups.add(groups["Support leads"])
    holds = list(Hold.objects.filter(agent__in=CHAIN_AGENTS).order_by("pk")[:count])
    now = timezone.now()
    Approval.objects.bulk_create(
        Approval(
            hold=hold,
            policy_name="large refunds",
            approvals_required=4,
            approver=lead,
            round=1,
            position=1,
            stage=1,
            stage_group=groups["Support leads"],
            created_at=now,
            payload_digest=hold.payload_digest,
            items=[
                {"item_id": item.item_id, "action": "approve", "original_data": item.data, "data": None, "comment": ""}
                for item in hold.items.all()
            ],
        )
        for hold in holds
    )
    AwaitedStage.objects.bulk_create(
        AwaitedStage(hold=hold, position=position, group=groups[name])
        for hold in holds
        for position, name in ((2, "Finance"), (3, "Legal"))
    )


if __name__ == "__main__":
    main()
