"""From an agent's ask on the platform to the urgent hold's message at a real SMTP server and a webhook receiver.

    .venv/bin/python -m bench.announce [--holds 20] [--sync-interval 10]

A real Celery worker (``--concurrency 2``) and beat run with docs/operating.md's production settings
(``DEBUG`` off, the project's whole schedule, ``SYNC_INTERVAL_SECONDS`` from ``--sync-interval``)
on a fresh database (BENCH_DATABASE, default ``reviewqueue_bench_announce``) and Redis
(BENCH_REDIS_URL, default database 13, flushed), with the simulated platform, an aiosmtpd SMTP
server and an HTTP webhook receiver, all on 127.0.0.1. One reviewer, who is also in the
escalation group of a policy escalating ``late-*`` agents' holds at 50 % of their lifetime, gets
email by default; a webhook channel takes expiry reminders and escalations.

The holds are asked one by one through the simulator's control API, each at a random moment of
its own sync interval, so the asks fall at every phase of beat's schedule. Every other hold
expires in 5 minutes (inside ``EXPIRY_REMINDER_MINUTES``: a reminder); the others were asked two
hours ago by ``late-bot`` and expire in an hour (past the policy's 50 %: an escalation). The clock
starts just before the ask and stops when the SMTP server, or the webhook receiver, has the
message about that hold (both clocks are this machine's). The budget is one sync interval plus
5 s; the expiry sweep (30 s) and the new-holds digest (60 s) keep their usual schedules, and the
count of messages per hold shows that none is announced twice. The delay is split at the hold's
``first_seen_at``: the ask to its mirroring (the wait for beat's next sync) and the mirroring to each
message's arrival (the announcement, the queueing and the sending).
"""

import argparse
import email
import logging
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from aiosmtpd.controller import Controller

from bench import serving, setup
from tests.helpers.processes import free_port

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
REVIEWER = "bench-reviewer"
LEADS = "Bench leads"
HOLD_ID = re.compile(r"h_announce_\d+")
SLACK = 5  # seconds the budget allows beyond one sync interval


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=20)
    parser.add_argument("--sync-interval", type=int, default=10, help="SYNC_INTERVAL_SECONDS of the worker and beat")
    options = parser.parse_args()
    if "BENCH_DATABASE" not in os.environ:
        setup.DATABASE = "reviewqueue_bench_announce"
    setup.django_on_fresh_database()

    import redis
    from django.conf import settings
    from django.contrib.auth.models import Group

    from approvals.models import ApprovalPolicy
    from holds.models import SyncState
    from notifications.models import WebhookChannel
    from reviewqueue import roles

    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd's line per SMTP command
    redis.Redis.from_url(REDIS_URL).flushdb()
    reviewer = serving.create_user(REVIEWER, roles.REVIEWERS)
    leads = Group.objects.create(name=LEADS)
    reviewer.groups.add(leads)
    ApprovalPolicy.objects.create(
        name="Late refunds",
        agent_pattern="late-*",
        approvals_required=1,
        escalate_at_percent=50,
        escalation_group=leads,
    )
    mails, hooks = Arrivals(), Arrivals()
    smtp = Controller(_Inbox(mails), hostname="127.0.0.1", port=free_port())
    smtp.start()
    receiver = _webhook_receiver(hooks)
    WebhookChannel.objects.create(
        name="bench",
        url=f"http://127.0.0.1:{receiver.server_port}/hook",
        secret="bench-secret",
        events=["expiring_soon", "escalated"],
    )
    budget = options.sync_interval + SLACK
    with (
        serving.stopped_at_exit(),
        tempfile.TemporaryDirectory() as logs,
        setup.simulated_platform(0) as state,
    ):
        environment = serving.production_environment(
            8000, os.environ["DATABASE_URL"], REDIS_URL, settings.AGENTOS_URL, settings.AGENTOS_API_KEY
        ) | {
            "SYNC_INTERVAL_SECONDS": str(options.sync_interval),
            "EMAIL_BACKEND": "smtp",
            "EMAIL_HOST": "127.0.0.1",
            "EMAIL_PORT": str(smtp.port),
            "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32",
        }
        celery = serving.worker_and_beat(environment, Path(logs))
        try:
            serving.wait_for(lambda: SyncState.objects.filter(last_success_at__isnull=False).exists(), "a first sync")
            print(
                f"asking {options.holds} urgent holds, one in each sync interval of {options.sync_interval} s",
                file=sys.stderr,
            )
            asked = ask_holds(state, settings.AGENTOS_URL, options.holds, options.sync_interval)
            serving.wait_for(lambda: mails.about(asked) and hooks.about(asked), "every message", timeout=budget + 60)
            time.sleep(options.sync_interval)  # a while longer: any second message would arrive meanwhile
        finally:
            for process in celery:
                serving.stop(process)
            smtp.stop()
            receiver.shutdown()
    report(asked, mails, hooks, options, budget)


def ask_holds(state, platform_url: str, count: int, interval: float) -> dict[str, tuple[str, float]]:
    """Ask ``count`` holds through the simulator's control API, each at a random moment of its own interval; answer
    each hold id's kind and the moment just before it was asked."""
    asked, start = {}, time.time()
    with httpx.Client(base_url=platform_url, timeout=10) as client:
        for number in range(count):
            time.sleep(max(0.0, start + (number + random.random()) * interval - time.time()))
            hold_id, now = f"h_announce_{number}", datetime.now(UTC)
            escalating = number % 2 == 1
            hold = {
                "hold_id": hold_id,
                "question": f"Refund on {hold_id}?",
                "agent": "late-bot" if escalating else "llamaindex-support",
                "created_at": (now - timedelta(hours=2 if escalating else 0)).isoformat(),
                "expires_at": (now + timedelta(hours=1) if escalating else now + timedelta(minutes=5)).isoformat(),
            }
            moment = time.time()
            client.post("/_control/holds", json={"holds": [hold]}).raise_for_status()
            asked[hold_id] = ("escalation" if escalating else "reminder", moment)
    return asked


class Arrivals:
    """When each message about a bench hold arrived, by hold id (several, should a hold be announced twice)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.moments: dict[str, list[float]] = {}

    def add(self, text: str) -> None:
        moment = time.time()
        with self.lock:
            for hold_id in set(HOLD_ID.findall(text)):
                self.moments.setdefault(hold_id, []).append(moment)

    def about(self, hold_ids) -> bool:
        with self.lock:
            return all(hold_id in self.moments for hold_id in hold_ids)


class _Inbox:
    def __init__(self, arrivals: Arrivals) -> None:
        self.arrivals = arrivals

    async def handle_DATA(self, server, session, envelope):
        self.arrivals.add(email.message_from_bytes(envelope.content)["Subject"] or "")
        return "250 OK"


def _webhook_receiver(arrivals: Arrivals) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            arrivals.add(body.decode())
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def report(asked: dict, mails: Arrivals, hooks: Arrivals, options, budget: float) -> None:
    from holds.models import Hold

    first_seen = Hold.objects.filter(hold_id__in=asked).values_list("hold_id", "first_seen_at")
    mirrored = {hold_id: seen.timestamp() for hold_id, seen in first_seen}
    print(
        f"\nbench.announce: {len(asked)} urgent holds asked on the simulator, a real Celery worker (--concurrency 2) "
        f"and beat, SYNC_INTERVAL_SECONDS={options.sync_interval}; budget {budget} s (one sync interval + {SLACK} s)"
    )
    print(
        f"ask -> mirrored (the wait for sync)  {spread([mirrored[hold_id] - m for hold_id, (_, m) in asked.items()])}"
    )
    for channel, arrivals in (("email (SMTP)", mails), ("webhook", hooks)):
        for kind in ("reminder", "escalation", None):
            delays = [
                arrivals.moments[hold_id][0] - moment
                for hold_id, (held_kind, moment) in asked.items()
                if kind in (None, held_kind)
            ]
            print(f"ask -> {channel:12} {kind or 'all':10} {spread(delays)}  within budget: {_within(delays, budget)}")
        sending = [arrivals.moments[hold_id][0] - mirrored[hold_id] for hold_id in asked]
        print(f"mirrored -> {channel:12} (all)  {spread(sending)}")
        counts = sorted({len(arrivals.moments[hold_id]) for hold_id in asked})
        print(f"{channel} messages per hold: {', '.join(map(str, counts))}")
    print(f"machine load average (1 min) {os.getloadavg()[0]:.1f}")


def spread(delays: list[float]) -> str:
    return (
        f"p50 {statistics.median(delays):5.2f} s, p95 {setup.percentile(delays, 0.95):5.2f} s, "
        f"max {max(delays):5.2f} s (n={len(delays)})"
    )


def _within(delays: list[float], budget: float) -> str:
    return f"{sum(delay <= budget for delay in delays)}/{len(delays)}"


if __name__ == "__main__":
    main()
