"""The replay of a policy over 100,000 decided holds: its time.

    .venv/bin/python -m bench.replay [--holds 100000] [--runs 5]

Writes the decided holds, one item each, and each one's "decision submitted" event (approved,
edited or rejected), spread over the last 30 days, with a four-eyes policy for amounts over 500
saved; then replays a 0-people policy for refund-bot's refunds up to 100, with a wait, a daily
cap and a default outcome, over 30 days, and prints the median time of the runs. The events
carry no valid hash chain: they exist to be read.
"""

import argparse
import statistics
import time
from datetime import timedelta
from decimal import Decimal

from bench import setup

AGENTS = ["refund-bot", "billing-bot", "support-bot", "returns-bot"]
ACTIONS = ["approve", "approve", "approve", "edit", "reject"]
BATCH = 5000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    setup.DATABASE = "reviewqueue_bench_replay"  # its own database: other benchmarks drop theirs while this one runs
    setup.django_on_fresh_database()

    from approvals import replay
    from approvals.models import ApprovalPolicy

    generate(options.holds)
    ApprovalPolicy.objects.create(
        name="large refunds",
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=Decimal(500),
        approvals_required=2,
    )
    small = ApprovalPolicy(
        name="small refunds",
        agent_pattern="refund-bot",
        condition_key="amount",
        condition_operator="lte",
        condition_threshold=Decimal(100),
        approvals_required=0,
        auto_wait_minutes=5,
        daily_cap_count=500,
        expiry_outcome="reject",
        expiry_outcome_minutes=10,
    )  # unsaved, as the admin's "Replay these values" builds it
    times = []
    for _ in range(options.runs):
        started = time.perf_counter()
        result = replay.replay(small, 30)
        times.append(time.perf_counter() - started)
    print(
        f"{options.holds} decided holds; matched {result.matched}, would approve {result.would_approve}, "
        f"would need people {result.would_need_more}, default {result.would_default}, "
        f"second approver {result.second_approver_change:+d}"
    )
    print(
        f"replay over 30 days: median {statistics.median(times):.2f} s of {options.runs} runs "
        f"(min {min(times):.2f} s, max {max(times):.2f} s)"
    )


def generate(count: int) -> None:
    from django.utils import timezone

    from audit.models import AuditEvent
    from holds.models import Hold, HoldItem

    now = timezone.now()
    for start in range(0, count, BATCH):
        numbers = range(start, min(start + BATCH, count))
        holds = []
        for n in numbers:
            decided_at = now - timedelta(seconds=(30 * 86400 - 3600) * (n + 1) / count)
            first_seen = decided_at - timedelta(minutes=1 + n % 60)
            holds.append(
                Hold(
                    env="default",
                    hold_id=f"h_{n}",
                    run_id=f"r_{n}",
                    agent=AGENTS[n % len(AGENTS)],
                    capability="refunds",
                    status=Hold.Status.DECIDED,
                    question="Refund?",
                    created_at=first_seen,
                    first_seen_at=first_seen,
                    last_synced_at=decided_at,
                    decided_at=decided_at,
                    expires_at=first_seen + timedelta(minutes=30),
                    payload={},
                    payload_digest="0" * 64,
                    actions=["approve", "edit", "reject"],  # as the platform lists them: a policy may approve
                )
            )
        Hold.objects.bulk_create(holds)
        HoldItem.objects.bulk_create(
            HoldItem(hold=hold, position=0, item_id=f"i_{n}", data={"amount": f"{(n * 37) % 1500}.00"})
            for n, hold in zip(numbers, holds, strict=True)
        )
        AuditEvent.objects.bulk_create(
            AuditEvent(
                sequence=n + 1,
                at=hold.decided_at,
                kind="decision_submitted",
                env=hold.env,
                hold_id=hold.hold_id,
                run_id=hold.run_id,
                agent=hold.agent,
                hold_record=hold,
                actions=ACTIONS[n % len(ACTIONS)],
                payload={},
                prev_hash="0" * 64,
                hash=f"{n:064d}",
            )
            for n, hold in zip(numbers, holds, strict=True)
        )


if __name__ == "__main__":
    main()
