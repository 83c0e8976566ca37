"""From an agent's ask on the platform to the urgent hold's push at every subscribed reviewer's device.

    .venv/bin/python -m bench.push [--reviewers 1000] [--holds 2] [--sync-interval 10]

A real Celery worker (``--concurrency 2``) and beat run with docs/operating.md's production settings (``DEBUG``
off, the project's whole schedule, ``SYNC_INTERVAL_SECONDS`` from ``--sync-interval``) on a fresh database
(BENCH_DATABASE, default ``reviewqueue_bench_push``) and Redis (BENCH_REDIS_URL, default database 12, flushed), with
the simulated platform and the tests' push service (``tests/helpers/push_service.py``: HTTPS on 127.0.0.1 with a
certificate authority of its own, given to the worker as ``SSL_CERT_FILE``; it checks each push's VAPID signature
and decrypts it with the device's keys). Every reviewer has one device and the default preferences: an expiry
reminder is pushed.

Each hold expires in 5 minutes (inside ``EXPIRY_REMINDER_MINUTES``: the sync that mirrors it reminds every reviewer
of it) and is asked at a random moment of its own sync interval, one at a time, far enough apart that no device's
pace (``push_pacing.PACE``) holds a push back. The clock starts just before the ask and stops when the push service
has decrypted the push to each device. The budget is one sync interval plus 5 s, at the 95th percentile over every
device and hold. The worker's CPU (its pool's processes with it) is read before the first ask and after the last
push, and given per push.
"""

import argparse
import os
import random
import secrets
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psutil

from bench import serving, setup

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
SLACK = 5  # seconds the budget allows beyond one sync interval


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reviewers", type=int, default=1000, help="subscribed reviewers, one device each")
    parser.add_argument("--holds", type=int, default=2, help="urgent holds asked, one after another")
    parser.add_argument("--sync-interval", type=int, default=10, help="SYNC_INTERVAL_SECONDS of the worker and beat")
    options = parser.parse_args()
    if "BENCH_DATABASE" not in os.environ:
        setup.DATABASE = "reviewqueue_bench_push"
    setup.django_on_fresh_database()

    import redis
    from django.conf import settings

    from holds.models import SyncState
    from notifications import push_pacing
    from tests.helpers.push_service import PushService, vapid_keys

    redis.Redis.from_url(REDIS_URL).flushdb()
    public, private = vapid_keys()
    service = PushService(public)
    devices = subscribed_reviewers(service, options.reviewers)
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
            "WEBPUSH_VAPID_PUBLIC_KEY": public,
            "WEBPUSH_VAPID_PRIVATE_KEY": private,
            "WEBPUSH_CONTACT": "mailto:operators@example.com",
            "WEBPUSH_ALLOWED_NETWORKS": "127.0.0.1/32",
            "SSL_CERT_FILE": service.ca_file(logs),
        }
        worker, beat = serving.worker_and_beat(environment, Path(logs))
        try:
            serving.wait_for(lambda: SyncState.objects.filter(last_success_at__isnull=False).exists(), "a first sync")
            spacing = push_pacing.PACE.total_seconds() + options.sync_interval
            cpu_before = tree_cpu(worker.pid)
            asked = {}
            for number in range(options.holds):
                hold_id = f"h_push_{number}"
                asked[hold_id] = ask(state, settings.AGENTOS_URL, hold_id, options.sync_interval)
                expected = len(asked) * len(devices)
                serving.wait_for(
                    lambda expected=expected: len(service.received) >= expected,
                    f"every device's push of {hold_id}",
                    worker,
                    timeout=budget + 120,
                    interval=0.05,
                )
                if number + 1 < options.holds:
                    time.sleep(max(0.0, asked[hold_id] + spacing - time.time()))
            cpu = tree_cpu(worker.pid) - cpu_before
        finally:
            serving.stop(worker)
            serving.stop(beat)
            service.stop()
    report(service, asked, len(devices), cpu, options, budget)


def subscribed_reviewers(service, count: int) -> list:
    """``count`` reviewers (no password, no email: push is their only channel besides the bell), each with one device
    of ``service``; written in bulk."""
    from django.contrib.auth.models import Group, User
    from django.utils import timezone

    from notifications.models import PushSubscription
    from reviewqueue import roles

    reviewers = Group.objects.get_or_create(name=roles.REVIEWERS)[0]
    users = User.objects.bulk_create(
        User(username=f"push-reviewer-{number}", password="!" + secrets.token_hex(8)) for number in range(count)
    )
    User.groups.through.objects.bulk_create(User.groups.through(user=user, group=reviewers) for user in users)
    now = timezone.now()
    devices = []
    for user in users:
        subscription = service.device()
        devices.append(
            PushSubscription(
                user=user,
                name="Phone",
                endpoint=subscription["endpoint"],
                p256dh=subscription["keys"]["p256dh"],
                auth=subscription["keys"]["auth"],
                created_at=now,
            )
        )
    return PushSubscription.objects.bulk_create(devices)


def ask(state, platform_url: str, hold_id: str, interval: float) -> float:
    """Ask one urgent hold through the simulator's control API at a random moment of the next sync interval; answer
    the moment just before the ask."""
    time.sleep(random.random() * interval)
    now = datetime.now(UTC)
    hold = {
        "hold_id": hold_id,
        "question": f"Refund on {hold_id}?",
        "agent": "llamaindex-support",
        "expires_at": (now + timedelta(minutes=5)).isoformat(),
    }
    moment = time.time()
    with httpx.Client(base_url=platform_url, timeout=10) as client:
        client.post("/_control/holds", json={"holds": [hold]}).raise_for_status()
    return moment


def tree_cpu(pid: int) -> float:
    """The CPU seconds, user and system, of a process and its children (Celery's pool)."""
    process = psutil.Process(pid)
    total = 0.0
    for member in [process, *process.children(recursive=True)]:
        try:
            times = member.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def report(service, asked: dict[str, float], devices: int, cpu: float, options, budget: float) -> None:
    from holds.models import Hold

    pks = dict(Hold.objects.filter(hold_id__in=asked).values_list("pk", "hold_id"))
    mirrored = dict(Hold.objects.filter(hold_id__in=asked).values_list("pk", "first_seen_at"))
    delays = [push.at - asked[pks[push.content["hold"]]] for push in service.received]  # this machine's clock
    sending = [push.at - mirrored[push.content["hold"]].timestamp() for push in service.received]
    per_hold = sorted(len([push for push in service.received if push.content["hold"] == pk]) for pk in pks)
    print(
        f"\nbench.push: {len(asked)} urgent holds, {devices} subscribed reviewers (one device each), a real Celery "
        f"worker (--concurrency 2) and beat, SYNC_INTERVAL_SECONDS={options.sync_interval}; budget {budget} s "
        f"(one sync interval + {SLACK} s)"
    )
    print(
        f"ask -> push decrypted at the device  p50 {statistics.median(delays):5.2f} s, "
        f"p95 {setup.percentile(delays, 0.95):5.2f} s, max {max(delays):5.2f} s (n={len(delays)}); "
        f"within budget: {sum(delay <= budget for delay in delays)}/{len(delays)}"
    )
    print(
        f"mirrored -> push decrypted          p50 {statistics.median(sending):5.2f} s, "
        f"p95 {setup.percentile(sending, 0.95):5.2f} s, max {max(sending):5.2f} s"
    )
    print(f"pushes per hold: {', '.join(map(str, per_hold))}; refused by the service: {len(service.refused)}")
    print(f"worker CPU: {cpu:.1f} s in all, {cpu / max(len(delays), 1) * 1000:.1f} ms a push")
    print(f"machine load average (1 min) {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
