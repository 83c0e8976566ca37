"""The /metrics scrape at 10,000 open holds, 1,000,000 audit rows and many decided holds: server time per scrape.

    .venv/bin/python -m bench.metrics [--holds 10000] [--events 1000000] [--decisions 100000] [--scrapes 50]

Syncs the open holds from the simulator, writes the audit rows with bench/audit.py's
generator and decided holds with their decisions in SQL, verifies nothing (the generated
audit rows carry no valid chain, and the scrape only reads the stored verification), then
times the first scrapes, which fold the audit history into the decision tallies, then
full scrapes through Django's handler in this process (no network) in interleaved
rounds with /healthz, the cost of any request, as the baseline. Then the time of each
metric family alone, to show where a scrape spends it. Target: p95 under 200 ms.
"""

import argparse
import statistics
import time

from bench import setup

TOKEN = "bench-metrics-token"

DECIDED_HOLDS = """
INSERT INTO holds_hold ({columns})
SELECT {values} FROM holds_hold t, generate_series(1, %(decisions)s) g
WHERE t.id = (SELECT min(id) FROM holds_hold)
"""
DECISIONS = """
INSERT INTO holds_decision (hold_id, reviewer_id, decided_by_policy, idempotency_key, created_at, state, outcome,
                            outcome_message, attempts, last_error, next_attempt_at, finished_at, undo_until,
                            delivery_started_at)
SELECT h.id, %(reviewer)s, '', gen_random_uuid(), d.stored, d.state,
       CASE WHEN d.state = 'applied' THEN 'applied' WHEN d.state = 'not_applied' THEN 'expired' ELSE '' END, '',
       1, '', d.stored, d.stored + make_interval(secs => random() * 30), NULL, d.stored
FROM holds_hold h
CROSS JOIN LATERAL (
    SELECT h.created_at + make_interval(secs => random() * 7200) AS stored,
           (ARRAY['applied', 'applied', 'applied', 'not_applied', 'withdrawn'])[1 + (h.id %% 5)] AS state
) d
WHERE h.status = 'decided'
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--scrapes", type=int, default=50)
    options = parser.parse_args()
    setup.django_on_fresh_database()

    from django.conf import settings
    from django.test import Client
    from django.test.utils import setup_test_environment

    from bench import audit as audit_bench
    from holds.mirror import platform, sync
    from reviewqueue import roles
    from tests.helpers.users import make_user

    setup_test_environment()  # the test client's host is allowed
    settings.METRICS_TOKEN = TOKEN
    reviewers = [make_user(f"reviewer{n:02d}", roles.REVIEWERS) for n in range(audit_bench.REVIEWERS)]
    audit_bench.generate(options.events, reviewers)  # first: it writes the trail from sequence 1
    started = time.perf_counter()
    with setup.simulated_platform(options.holds), platform.PlatformClient.from_settings() as client:
        sync.sync_env(client, "default")
    print(f"synced {options.holds:,} open holds in {time.perf_counter() - started:.1f} s")
    decided(options.decisions, reviewers[0].pk)

    browser = Client()
    catch_up(browser)
    scrape_times, baseline_times = [], []
    for _ in range(options.scrapes):  # interleaved, so both see the same machine load
        baseline_times.append(timed(browser, "/healthz", {}))
        scrape_times.append(timed(browser, "/metrics", {"Authorization": f"Bearer {TOKEN}"}))
    size = len(browser.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).content)
    print(
        f"\n{options.scrapes} scrapes of /metrics ({size:,} bytes) at {options.holds:,} open holds, "
        f"{options.events:,} audit rows, {options.decisions:,} decisions:"
    )
    print(f"  /metrics  {setup.summary(scrape_times)}")
    print(f"  /healthz  {setup.summary(baseline_times)}  (baseline)")
    print(f"  ratio of medians {statistics.median(scrape_times) / statistics.median(baseline_times):.1f}x")
    per_family(options.scrapes)


def catch_up(browser) -> None:
    """The first scrapes of a deployment fold the audit history into the decision tallies, a chunk each."""
    from audit.models import AuditEvent
    from operations.models import TallyWatermark

    latest = AuditEvent.objects.order_by("-sequence").values_list("sequence", flat=True).first()
    times = []
    while not TallyWatermark.objects.filter(audit_sequence__gte=latest).exists():
        times.append(timed(browser, "/metrics", {"Authorization": f"Bearer {TOKEN}"}))
    print(
        f"catching up on {latest:,} audit events took {len(times)} scrapes: {setup.summary(times)}, "
        f"slowest {max(times) * 1000:.0f} ms"
    )


def decided(count: int, reviewer_pk: int) -> None:
    """``count`` decided holds, each with a decision: applied, not applied or withdrawn."""
    from django.db import connection

    from holds.models import Hold

    overrides = {
        "hold_id": "'decided_' || g",
        "run_id": "'decided_run_' || g",
        "status": "'decided'",
        "created_at": "now() - make_interval(days => g %% 90)",
        "expires_at": "NULL",
        "closed_at": "now()",
    }
    columns = [field.column for field in Hold._meta.concrete_fields if field.column != "id"]
    values = [overrides.get(column, f"t.{column}") for column in columns]
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(DECIDED_HOLDS.format(columns=", ".join(columns), values=", ".join(values)), {"decisions": count})
        cursor.execute(DECISIONS, {"reviewer": reviewer_pk})
        # What autovacuum does soon after in production: the visibility map lets the scrape read indexes only.
        cursor.execute("VACUUM ANALYZE holds_hold")
        cursor.execute("VACUUM ANALYZE holds_decision")
    print(f"wrote {count:,} decided holds and their decisions in {time.perf_counter() - started:.1f} s")


def timed(browser, path: str, headers: dict) -> float:
    started = time.perf_counter()
    response = browser.get(path, headers=headers)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.status_code
    return elapsed


def per_family(scrapes: int) -> None:
    from django.utils import timezone

    from operations import metrics

    parts = {
        "open holds, oldest, expiring": lambda: list(metrics.open_holds(timezone.now())),
        "decisions by outcome, retrying": lambda: list(metrics.decisions(timezone.now())),
        "time to decide histogram": metrics.time_to_decide,
        "delivery latency histogram": metrics.delivery_latency,
        "syncs": lambda: list(metrics.syncs(timezone.now())),
        "notifications": lambda: list(metrics.notifications()),
        "audit chain": lambda: list(metrics.audit_chain()),
    }
    print("\nEach family alone (median of the same number of runs):")
    for label, collect in parts.items():
        times = []
        for _ in range(scrapes):
            started = time.perf_counter()
            collect()
            times.append(time.perf_counter() - started)
        print(f"  {label:32} {statistics.median(times) * 1000:7.2f} ms")


if __name__ == "__main__":
    main()
