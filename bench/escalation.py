"""How long the escalation sweep takes over 100,000 open holds with one narrow escalating policy.

    .venv/bin/python -m bench.escalation [--holds 100000] [--matching 200]

The holds are written straight into the mirror (no platform: the sweep reads only the
database), all past the policy's thirty minutes; ``--matching`` of them have the agent the
policy's glob names. Each sweep is timed with its queries and the rows it read; the first
escalates the matching holds, the second finds nothing left to do.
"""

import argparse
import time
from datetime import timedelta


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=100_000)
    parser.add_argument("--matching", type=int, default=200)
    options = parser.parse_args()

    from bench import setup

    setup.django_on_fresh_database()

    from django.contrib.auth.models import Group
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from approvals import escalation
    from approvals.models import ApprovalPolicy
    from holds.models import Hold, HoldItem
    from tests.helpers.users import make_user

    leads = Group.objects.create(name="Finance leads")
    make_user("lead1", "Finance leads")
    arrived = timezone.now() - timedelta(hours=1)
    for start in range(0, options.holds, 10_000):
        holds = Hold.objects.bulk_create(
            Hold(
                env="default",
                hold_id=f"h_{n}",
                run_id=f"r_{n}",
                capability="refund",
                question="Refund?",
                agent="billing-bot" if n % (options.holds // options.matching) == 0 else "llamaindex-support",
                created_at=arrived,
                expires_at=arrived + timedelta(days=1),
                first_seen_at=arrived,
                last_synced_at=arrived,
                payload={},
                payload_digest=str(n),
            )
            for n in range(start, min(start + 10_000, options.holds))
        )
        HoldItem.objects.bulk_create(
            HoldItem(hold=hold, position=0, item_id="A-1", title="refund", data={"amount": "1200.00"}) for hold in holds
        )
    ApprovalPolicy.objects.create(
        name="Billing refunds",
        agent_pattern="billing-*",
        approvals_required=2,
        escalate_after_minutes=30,
        escalation_group=leads,
    )
    connection.cursor().execute("ANALYZE")

    escalating = [policy for policy in escalation.policies.all_policies() if escalation.escalates(policy)]
    print(f"{options.holds} open holds, {escalation.candidates(escalating, timezone.now()).count()} candidates to read")
    for label in ("first sweep", "second sweep"):
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            made = escalation.sweep()
            elapsed = time.perf_counter() - started
        print(f"{label:13} {elapsed * 1000:8.1f} ms  {len(queries.captured_queries):4d} queries  {len(made)} escalated")


if __name__ == "__main__":
    main()
