"""The image of ``Containerfile``: its size, its build time cold and with the venv layer cached, and web's start.

    .venv/bin/python -m bench.container [--rounds 1]

Each round builds once with ``--no-cache`` (the base image kept: making it is Debian's mirror's time, not
ours) and once after a change to the code alone, which reuses the venv's layer, as a release does.
``--rounds 0`` times no build: it builds once with podman's cache as found (as the suite's container test
does) and times only the start, for a quick run. Then
web, worker and beat containers start against a fresh database (BENCH_DATABASE), Redis (BENCH_REDIS_URL,
default database 13, flushed) and the simulated platform; the clock runs from ``podman run`` of web to its
first /healthz 200, and to the first /readyz 200 (every env synced and a periodic task run).
"""

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench import setup
from tests.helpers.podman import IMAGE, Podman, clean_copy
from tests.helpers.processes import free_port

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
SIZE_GOAL_MB = 250


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        podman = Podman(Path(scratch))
        podman.ensure_base()
        context = clean_copy(Path(scratch) / "context")
        cold, cached = [], []
        for _ in range(options.rounds):
            cold.append(podman.build(context, "--no-cache"))
            (context / "reviewqueue" / "__init__.py").write_text(f"# {secrets.token_hex(4)}\n")  # a code change
            cached.append(podman.build(context))
        if not options.rounds:
            podman.build(context)
        size = podman.image_megabytes()
        healthy, ready = time_to_ready(podman)
    verdict = "met" if size <= SIZE_GOAL_MB else "NOT met"
    print(f"\nbench.container: {IMAGE}, {options.rounds} round(s); load average (1 min) {os.getloadavg()[0]:.1f}")
    print(f"image size:                         {size:6.0f} MB (goal <= {SIZE_GOAL_MB} MB: {verdict})")
    print(f"build, cold (--no-cache):           {seconds(cold)}")
    print(f"build, venv layer cached:           {seconds(cached)}")
    print(f"web container start -> /healthz 200: {healthy:5.1f} s")
    print(f"web container start -> /readyz 200:  {ready:5.1f} s (worker and beat started with it)")


def seconds(values: list[float]) -> str:
    if not values:
        return "not timed (--rounds 0)"
    return f"median {statistics.median(values):5.1f} s (min {min(values):.1f}, max {max(values):.1f})"


def time_to_ready(podman: Podman) -> tuple[float, float]:
    setup.django_on_fresh_database()
    import redis
    from django.conf import settings

    redis.Redis.from_url(REDIS_URL).flushdb()
    port = free_port()
    with setup.simulated_platform(10):
        environment = {
            "SECRET_KEY": secrets.token_urlsafe(50),
            "DATABASE_URL": f"{setup.SERVER}/{setup.DATABASE}",
            "REDIS_URL": REDIS_URL,
            "AGENTOS_URL": settings.AGENTOS_URL,
            "AGENTOS_API_KEY": settings.AGENTOS_API_KEY,
            "EMAIL_BACKEND": "console",
            "PORT": str(port),
        }
        names = [f"rq-bench-{secrets.token_hex(4)}-{command}" for command in ("web", "worker", "beat")]
        started = time.monotonic()
        try:
            for name in names:
                podman(
                    "run",
                    "--detach",
                    f"--name={name}",
                    f"--hostname={name}",
                    "--network=host",
                    "--read-only",
                    *[f"--env={key}={value}" for key, value in environment.items()],
                    IMAGE,
                    name.rsplit("-", 1)[1],
                )
            healthy = wait_for(f"http://127.0.0.1:{port}/healthz") - started
            ready = wait_for(f"http://127.0.0.1:{port}/readyz") - started
        finally:
            podman("rm", "--force", "--time=2", *names, check=False)
    return healthy, ready


def wait_for(url: str, timeout: float = 180) -> float:
    """The moment ``url`` first answered 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return time.monotonic()
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    sys.exit(f"{url} did not answer 200 within {timeout:.0f} s")


if __name__ == "__main__":
    main()
