"""Live updates under load: commit → event at many open streams, memory per stream, and the queue's req/s by server.

    .venv/bin/python -m bench.live [--streams 200] [--events 40] [--most 3000] [--step 500]
                                   [--rounds 4] [--duration 5] [--warm-up 1] [--open 2000] [--port 8301] [--fresh]

Prepares its database (BENCH_DATABASE, default ``reviewqueue_bench_live``) as bench/http.py does, with
``--open`` holds and no history, and keeps it. Then serves it three ways at once, production settings, DEBUG off:

- gunicorn, 2 workers, ``LIVE_EVENTS=0``: today's pages, which poll;
- gunicorn, 2 workers, ``LIVE_EVENTS=1``: the pages of the split setup, whose ``/events/`` a proxy sends to uvicorn;
- uvicorn ``reviewqueue.asgi:application``, 2 workers, ``LIVE_EVENTS=1``: one ASGI server for everything, and
  the event streams of both live setups.

1. The queue page's req/s, p50 and p99 with Debian's wrk (``-t2 -c8``) on each, in interleaved rounds (each
   round loads the three back to back, the order turning), as bench/http.py measures pages.
2. ``--streams`` streams opened on uvicorn by real SSE clients (httpx, one connection each, one reviewer's
   session: the bench lifts the per-session cap), then ``--events`` claims and releases committed in this process
   one after another: for each, the time from its commit to its event at each stream, and to the last stream.
3. Streams opened by ``--step`` up to ``--most``: the two workers' resident memory (from /proc) after each step,
   and whether every stream still hears a probe event within 10 s; the most streams held is the last step all did.

BENCH_REDIS_URL is the servers' and this process's Redis (default database 3); the streams' caps are raised for
the bench only (LIVE_STREAMS_PER_SESSION, LIVE_STREAMS_PER_PROCESS).
"""

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time
import warnings
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench import http as http_bench
from bench import serving, setup

REDIS_URL = http_bench.REDIS_URL
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Server:
    label: str
    port: int
    url: str = ""
    master_pid: int = 0
    rounds: list[dict] = field(default_factory=list)

    def median(self, key: str) -> float:
        return statistics.median(result[key] for result in self.rounds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--events", type=int, default=40)
    parser.add_argument("--most", type=int, default=3000, help="the most streams to try to open")
    parser.add_argument("--step", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--duration", type=int, default=5, help="seconds of each wrk run")
    parser.add_argument(
        "--warm-up", type=int, default=1, help="seconds of each server's wrk run before the rounds (0: none)"
    )
    parser.add_argument("--open", type=int, default=2000)
    parser.add_argument("--port", type=int, default=8301)
    parser.add_argument("--fresh", action="store_true")
    options = parser.parse_args()
    options.closed = options.audit = 0  # bench.http's prepare: no history, which the queue does not read
    if "BENCH_DATABASE" not in os.environ:
        setup.DATABASE = "reviewqueue_bench_live"
    os.environ["REDIS_URL"] = REDIS_URL  # this process publishes where the servers subscribe
    wrk = http_bench.ensure_wrk()
    warnings.filterwarnings("ignore", "No directory at")

    prepared = f"bench.live: {options.open} open holds"
    reuse = not options.fresh and http_bench.database_comment() == prepared
    setup.django_on_database(fresh=not reuse)
    if not reuse:
        http_bench.prepare(options)
        http_bench.set_database_comment(prepared)
    from django.conf import settings

    settings.LIVE_EVENTS = True
    database_url = os.environ["DATABASE_URL"]
    servers = [
        Server("gunicorn WSGI, LIVE_EVENTS=0 (today: pages poll)", options.port),
        Server("gunicorn WSGI, LIVE_EVENTS=1 (split: /events/ on uvicorn)", options.port + 2),
        Server("uvicorn ASGI for everything, LIVE_EVENTS=1", options.port + 4),
    ]
    secret = secrets.token_urlsafe(50)
    with serving.stopped_at_exit(), tempfile.TemporaryDirectory() as logs, ExitStack() as running:
        for server, live, command in zip(servers, ("0", "1", "1"), ("gunicorn", "gunicorn", "uvicorn"), strict=True):
            environment = serving.production_environment(
                server.port, database_url, REDIS_URL, http_bench.UNUSED_PLATFORM_URL, "bench-unused-key"
            ) | {
                "SECRET_KEY": secret,  # one session signed in on all three
                "LIVE_EVENTS": live,
                "LIVE_STREAMS_PER_SESSION": "100000",
                "LIVE_STREAMS_PER_PROCESS": "100000",
            }
            serving.collectstatic_if_needed(environment)
            log = Path(logs) / f"{command}-{server.port}.log"
            if command == "gunicorn":
                server.url = running.enter_context(serving.gunicorn(environment, server.port, log))
            else:
                server.url, server.master_pid = running.enter_context(uvicorn(environment, server.port, log))
        session = serving.sign_in(servers[0].url, http_bench.REVIEWER).cookies["sessionid"]
        queue_rps(wrk, servers, session, database_url, options)
        print_rps(servers, options)
        latency_and_memory(servers[2], session, options)


@contextmanager
def uvicorn(environment: dict, port: int, log: Path, workers: int = 2):
    """uvicorn serving ``reviewqueue.asgi`` with ``workers`` processes on 127.0.0.1:``port``."""
    process = serving.start(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "reviewqueue.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--no-access-log",
            "--log-level",
            "warning",
            "--timeout-graceful-shutdown",
            "2",
        ],
        environment,
        log,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        serving.wait_for(lambda: serving._answers(url), f"uvicorn on port {port} (log: {log})", process)
        yield url, process.pid
    finally:
        serving.stop(process)


# 1. The queue's req/s


def queue_rps(wrk: Path, servers: list[Server], session: str, database_url: str, options) -> None:
    pages = {}
    for server in servers:
        checkout = http_bench.Checkout(serving.ROOT, database_url, server.port, [], url=server.url)
        checkout.cookies[http_bench.REVIEWER] = f"sessionid={session}"
        page = http_bench.Page("/", "/", http_bench.REVIEWER)
        http_bench.check_page(checkout, page)
        if options.warm_up:
            http_bench.run_wrk(wrk, checkout, page, duration=options.warm_up)
        pages[server.port] = checkout, page
    for number in range(1, options.rounds + 1):
        turned = servers[number % len(servers) :] + servers[: number % len(servers)]
        for server in turned:
            checkout, page = pages[server.port]
            server.rounds.append(http_bench.run_wrk(wrk, checkout, page, options.duration))
        print(f"round {number}/{options.rounds} done", file=sys.stderr, flush=True)


def print_rps(servers: list[Server], options) -> None:
    today = servers[0].median("rps")
    print(
        f"\nbench.live: the queue page (/, 50 rows of {options.open:,} open holds), 2 workers each, DEBUG=0; "
        f"wrk -t2 -c8 -d{options.duration}s; medians of {options.rounds} interleaved rounds\n"
    )
    print("| server | req/s | p50 ms | p99 ms | req/s against today |")
    print("|---|---:|---:|---:|---:|")
    for server in servers:
        print(
            f"| {server.label} | {server.median('rps'):.0f} | {server.median('p50'):.1f} | "
            f"{server.median('p99'):.1f} | {server.median('rps') / today:.2f} |"
        )
    spread = ", ".join(f"{min(r['rps'] for r in s.rounds):.0f}-{max(r['rps'] for r in s.rounds):.0f}" for s in servers)
    print(f"\nreq/s range over the rounds: {spread}")


# 2 and 3. Streams


class Streams:
    """SSE clients on an asyncio loop of their own thread: each stream notes when each event reached it."""

    def __init__(self, url: str, session: str):
        self.url, self.session = url, session
        self.arrivals: dict[int, list[float]] = {}
        self.opened = 0
        self.failed = 0
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.client = self._run(self._client())
        self.tasks = []

    def _run(self, coroutine, timeout=None):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    async def _client(self):
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
        return httpx.AsyncClient(base_url=self.url, cookies={"sessionid": self.session}, timeout=None, limits=limits)

    def open(self, count: int) -> None:
        """Open ``count`` more streams, 50 at a time, each until it has said hello."""
        self._run(self._open(count))

    async def _open(self, count: int):
        for start in range(0, count, 50):
            ready = [self.loop.create_future() for _ in range(min(50, count - start))]
            self.tasks += [self.loop.create_task(self._stream(each)) for each in ready]
            await asyncio.gather(*ready)

    async def _stream(self, ready):
        try:
            async with self.client.stream("GET", "/events/") as response:
                if response.status_code != 200:
                    raise httpx.HTTPStatusError("refused", request=response.request, response=response)
                number = None
                async for line in response.aiter_lines():
                    if line.startswith("event: hello"):
                        self.opened += 1
                        ready.set_result(True)
                    elif line.startswith("id: "):
                        number = int(line[4:])
                    elif line.startswith("data: ") and number is not None:
                        self.arrivals.setdefault(number, []).append(time.perf_counter())
                        number = None
        except Exception:  # noqa: BLE001 - a stream the server refused or dropped counts as failed, whatever the cause
            self.failed += 1
            if not ready.done():
                ready.set_result(False)

    def close(self):
        for task in self.tasks:
            self.loop.call_soon_threadsafe(task.cancel)
        self._run(self.client.aclose(), timeout=30)


def latency_and_memory(server: Server, session: str, options) -> None:
    from django.db import transaction

    from holds import lifecycle
    from holds.models import Hold
    from reviewqueue import changes

    user = _reviewer()
    hold = Hold.objects.filter(status="open").order_by("pk").first()
    streams = Streams(server.url, session)
    workers = _children(server.master_pid)
    baseline = _rss(workers)
    try:
        streams.open(options.streams)
        print(
            f"\n{streams.opened} streams open on uvicorn ({len(workers)} workers), {streams.failed} refused",
            file=sys.stderr,
        )
        to_each, to_last = [], []
        for number in range(options.events):
            committed = {}
            with transaction.atomic():
                transaction.on_commit(lambda committed=committed: committed.setdefault("at", time.perf_counter()))
                (lifecycle.claim if number % 2 == 0 else lifecycle.release_claim)(hold, user)
            event_id = changes.latest_id()
            arrived = _wait_for(streams, event_id, streams.opened)
            to_each += [at - committed["at"] for at in arrived]
            to_last.append(max(arrived) - committed["at"] if len(arrived) == streams.opened else float("inf"))
            time.sleep(0.05)
        print(
            f"\ncommit → event at {streams.opened} open streams, {options.events} events (claims and releases, one "
            f"at a time), uvicorn 2 workers:\n"
        )
        print("| measure | p50 ms | p95 ms | max ms |")
        print("|---|---:|---:|---:|")
        for label, values in (("to each stream", to_each), ("to the last of them", to_last)):
            print(
                f"| {label} | {setup.percentile(values, 0.5) * 1000:.1f} | "
                f"{setup.percentile(values, 0.95) * 1000:.1f} | {max(values) * 1000:.1f} |"
            )

        print("\n| streams open | refused or dropped | RSS of the 2 workers MB | per stream KB | all heard a probe |")
        print("|---:|---:|---:|---:|---|")
        _memory_row(streams, workers, baseline, hold, user)
        while streams.opened < options.most:
            streams.open(min(options.step, options.most - streams.opened))
            if not _memory_row(streams, workers, baseline, hold, user):
                break
    finally:
        streams.close()


def _memory_row(streams: Streams, workers: list[int], baseline: int, hold, user) -> bool:
    from holds import lifecycle
    from reviewqueue import changes

    lifecycle.release_claim(hold, user) if hold.claimed_by_id else lifecycle.claim(hold, user)
    heard = len(_wait_for(streams, changes.latest_id(), streams.opened, timeout=10))
    rss = _rss(workers)
    per_stream = (rss - baseline) / streams.opened / 1024 if streams.opened else 0
    everyone = heard == streams.opened and not streams.failed
    print(
        f"| {streams.opened} | {streams.failed} | {rss / 2**20:.0f} | {per_stream:.1f} | "
        f"{'yes' if everyone else f'no: {heard}'} |",
        flush=True,
    )
    return everyone


def _wait_for(streams: Streams, event_id: int, count: int, timeout: float = 5) -> list[float]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and len(streams.arrivals.get(event_id, ())) < count:
        time.sleep(0.002)
    return list(streams.arrivals.get(event_id, ()))


def _reviewer():
    from django.contrib.auth.models import User

    return User.objects.get(username=http_bench.REVIEWER)


def _children(pid: int) -> list[int]:
    """The worker processes of uvicorn's supervisor ``pid`` (not multiprocessing's resource tracker)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(int(child))
    return found


def _rss(pids: list[int]) -> int:
    """Resident memory of the processes, in bytes (from /proc/PID/statm)."""
    return sum(int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE for pid in pids)


if __name__ == "__main__":
    main()
