"""From a press in Slack to the platform's decision, and how soon the request URL acknowledges it.

    .venv/bin/python -m bench.slack [--presses 50]

Serves the app with gunicorn on 127.0.0.1, runs a real Celery worker (no undo window) and a fake Slack
(``tests/helpers/fake_slack.py``), links a reviewer's Slack account, then presses Approve on one hold after another:
each press is a signed POST to ``/slack/interactivity``, as Slack makes it. It times the acknowledgement (the POST's
answer; Slack gives up after 3 s) and the press to the decision's POST arriving at the simulated platform, and prints
the median and 95th percentile of each. A few presses first warm the processes up and are not counted.
BENCH_REDIS_URL picks the broker (default: Redis database 14 on 127.0.0.1, flushed); BENCH_DATABASE the database
(``bench.setup``).
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from bench import serving, setup
from tests.helpers.processes import free_port

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
WARM_UP = 3
SLACK_LIMIT_SECONDS = 3.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presses", type=int, default=50)
    options = parser.parse_args()
    os.environ["REDIS_URL"] = REDIS_URL
    setup.django_on_fresh_database()

    import httpx
    import redis
    from django.conf import settings

    from holds.links import action_links
    from holds.mirror import platform, sync
    from holds.models import DecisionChannel, Hold
    from reviewqueue import roles
    from tests.helpers import fake_slack
    from tests.helpers.users import make_user

    redis.Redis.from_url(REDIS_URL).flushdb()
    reviewer = make_user("bench-reviewer", roles.REVIEWERS)
    fake_slack.linked(reviewer, "U0BENCH")
    total = options.presses + WARM_UP
    with (
        setup.simulated_platform(total) as state,
        fake_slack.FakeSlack() as slack,
        tempfile.TemporaryDirectory() as logs,
    ):
        with platform.PlatformClient.from_settings() as client:
            sync.sync_env(client, "default")
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "AGENTOS_URL": settings.AGENTOS_URL,
            "AGENTOS_API_KEY": settings.AGENTOS_API_KEY,
            "SLACK_SIGNING_SECRET": fake_slack.SIGNING_SECRET,
            "SLACK_API_URL": slack.api_url,
            "UNDO_SECONDS": "0",
        }
        port = free_port()
        worker = serving.start(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "reviewqueue",
                "worker",
                "--pool",
                "solo",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "WARNING",
            ],
            environment,
            Path(logs) / "worker.log",
        )
        acks, decided = [], []
        try:
            with (
                serving.gunicorn(environment, port, Path(logs) / "web.log", workers=1) as base,
                httpx.Client(timeout=10) as http,
            ):
                url = f"{base}/slack/interactivity"
                for hold in Hold.objects.order_by("pk")[:total]:
                    value = action_links.make(hold, "approve", channel=DecisionChannel.SLACK)
                    press = fake_slack.button_press(value, "approve", slack.response_url(), user="U0BENCH")
                    body, headers = fake_slack.signed(press)
                    headers = {name.removeprefix("HTTP_").replace("_", "-"): v for name, v in headers.items()}
                    pressed_at, started = time.time(), time.perf_counter()
                    answer = http.post(
                        url, content=body, headers={**headers, "Content-Type": "application/x-www-form-urlencoded"}
                    )
                    ack = time.perf_counter() - started
                    if answer.status_code != 200:
                        raise SystemExit(f"the request URL answered {answer.status_code}")
                    arrived = serving.wait_for(
                        lambda hold=hold: _decision_arrived(state, hold.hold_id),
                        f"the decision on {hold.hold_id} at the platform",
                        worker,
                        interval=0.005,  # the press-to-decision time is what is measured
                    )
                    acks.append(ack)
                    decided.append(arrived - pressed_at)
        finally:
            serving.stop(worker)
    acks, decided = acks[WARM_UP:], decided[WARM_UP:]
    print(f"{len(decided)} presses, one at a time, a real worker, no undo window")
    print(f"acknowledged:             {setup.summary(acks)}, max {max(acks) * 1000:.1f} ms")
    print(f"press to platform decision: {setup.summary(decided)}, max {max(decided) * 1000:.1f} ms")
    if max(acks) >= SLACK_LIMIT_SECONDS:
        raise SystemExit(f"an acknowledgement took {max(acks):.1f} s: Slack gives up after {SLACK_LIMIT_SECONDS:.0f} s")


def _decision_arrived(state, hold_id: str) -> float | None:
    for request in state.requests:
        if request["method"] == "POST" and request["path"].endswith(f"/{hold_id}/decision"):
            return request["received_at"]
    return None


if __name__ == "__main__":
    main()
