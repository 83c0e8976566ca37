"""How soon a decision is applied after its worker was killed with SIGKILL mid-POST.

    .venv/bin/python -m bench.recovery [--rounds 5]

Each round submits a decision, lets a real Celery worker post it to a simulated
platform that takes a few seconds to answer, kills that worker while the platform is
answering, starts a new one, and times the kill to the decision's "applied". Celery
beat runs throughout with the project's schedule and the documented default timeouts.
BENCH_REDIS_URL picks the broker (default: Redis database 14 on 127.0.0.1, flushed).
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import setup

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
ANSWER_DELAY_SECONDS = 3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    os.environ["REDIS_URL"] = REDIS_URL
    setup.django_on_fresh_database()

    import redis
    from django.conf import settings
    from django.utils import timezone

    from holds.deciding import decisions, delivery
    from holds.mirror import platform, sync
    from holds.models import Decision, Hold
    from reviewqueue import roles
    from tests.helpers.users import make_user

    redis.Redis.from_url(REDIS_URL).flushdb()
    reviewer = make_user("bench-reviewer", roles.REVIEWERS)
    with setup.simulated_platform(options.rounds) as state, tempfile.TemporaryDirectory() as logs:
        with platform.PlatformClient.from_settings() as client:
            sync.sync_env(client, "default")
        celery = _Celery(settings, Path(logs))
        celery.start("beat")
        worker = celery.start("worker")
        recoveries = []
        for hold in Hold.objects.order_by("pk"):
            state.push_faults([{"delay": ANSWER_DELAY_SECONDS, "path_contains": "/decision"}])
            choices = [decisions.ItemChoice(item.item_id, "approve") for item in hold.items.all()]
            decision = decisions.submit(hold, reviewer, choices)
            _wait(lambda: state.push_faults([]) == 0)  # the delayed POST has arrived
            time.sleep(random.uniform(0, ANSWER_DELAY_SECONDS * 0.8))  # die at any point of the answer
            worker.kill()
            killed_at = timezone.now()
            worker.wait()
            worker = celery.start("worker")
            finished = _wait(
                lambda decision=decision: Decision.objects.filter(pk=decision.pk, state="applied").first(), timeout=180
            )
            keys = {
                r["headers"]["idempotency-key"]
                for r in state.requests
                if r["path"].endswith(f"/{hold.hold_id}/decision")
            }
            recoveries.append((finished.finished_at - killed_at).total_seconds())
            print(
                f"round {len(recoveries)}: applied {recoveries[-1]:5.1f} s after the kill, {len(keys)} Idempotency-Key"
            )
        celery.stop()
    print(
        f"kill to applied over {len(recoveries)} rounds: median {statistics.median(recoveries):.1f} s, "
        f"max {max(recoveries):.1f} s (attempt lease {delivery.attempt_lease().total_seconds():.0f} s)"
    )


class _Celery:
    """Real Celery processes on the benchmark's database and broker."""

    def __init__(self, settings, logs: Path):
        self.logs = logs
        self.processes: list[subprocess.Popen] = []
        self.environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "AGENTOS_URL": settings.AGENTOS_URL,
            "AGENTOS_API_KEY": settings.AGENTOS_API_KEY,
        }

    def start(self, kind: str) -> subprocess.Popen:
        options = (
            ["--pool", "solo", "--without-heartbeat", "--without-gossip", "--without-mingle"]
            if kind == "worker"
            else []
        )
        log = open(self.logs / f"{kind}.log", "ab")  # noqa: SIM115 (the process writes to it after we return)
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewqueue", kind, "--loglevel", "INFO", *options],
            env=self.environment,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(10)


def _wait(condition, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if outcome := condition():
            return outcome
        time.sleep(0.05)
    raise SystemExit(f"gave up after {timeout} s")


if __name__ == "__main__":
    main()
