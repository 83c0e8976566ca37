"""One checkout served as docs/operating.md's production section runs it, for ``bench.capacity``.

gunicorn with ``WEB_CONCURRENCY`` workers, uvicorn for ``/events/``, a Celery worker with ``WORKER_CONCURRENCY``
processes and one beat, on a database and a Redis database of the stack's own, with the simulated platform in a
process of its own (``manage.py runplatform``) and a fake Slack (a thread of the bench's). Production settings,
``DEBUG`` off, the documented defaults (sync every 10 s, a 10 s undo window). Each process runs in a process group
of its own; ``stop`` ends them all.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import psycopg

from bench import serving, setup
from tests.helpers.processes import free_port

API_KEY = "capacity-bench-key"
SIGNING_SECRET = "capacity-slack-signing-secret"


class Stack:
    """The app's processes for the checkout at ``root`` on the database ``database``, Redis at ``redis_url``."""

    def __init__(self, label: str, root: Path, database: str, template: str, redis_url: str, options, logs: Path):
        self.label, self.root, self.database, self.redis_url = label, root, database, redis_url
        self.template, self.options = template, options
        self.logs = logs / label.replace(" ", "-")
        self.logs.mkdir(parents=True, exist_ok=True)
        self.database_url = f"{setup.SERVER}/{database}"
        self.web_port, self.events_port, self.platform_port = free_port(), free_port(), free_port()
        self.web_url = f"http://127.0.0.1:{self.web_port}"
        self.events_url = f"http://127.0.0.1:{self.events_port}"
        self.platform_url = f"http://127.0.0.1:{self.platform_port}"
        self.processes: dict[str, subprocess.Popen] = {}
        self.secret = os.urandom(24).hex()

    def environment(self, slack_api_url: str) -> dict:
        return serving.production_environment(
            self.web_port, self.database_url, self.redis_url, self.platform_url, API_KEY
        ) | {
            "SECRET_KEY": self.secret,  # the seed signs sessions and Slack buttons with it
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": slack_api_url,
            "WEB_CONCURRENCY": str(self.options.web),
            "WORKER_CONCURRENCY": str(self.options.workers),
        }

    def start(self, slack_api_url: str) -> None:
        with psycopg.connect(f"{setup.SERVER}/postgres", autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)")
            connection.execute(f"CREATE DATABASE {self.database} TEMPLATE {self.template}")
        import redis

        redis.Redis.from_url(self.redis_url).flushdb()
        environment = self.env = self.environment(slack_api_url)
        python = sys.executable
        subprocess.run([python, "manage.py", "migrate", "--verbosity", "0"], cwd=self.root, env=environment, check=True)
        serving.collectstatic_if_needed(environment, self.root)
        platform = [python, "manage.py", "runplatform", "--port", str(self.platform_port), "--api-key", API_KEY]
        self.run("platform", platform + ["--no-samples", "--generate", str(self.options.holds)], simulator=True)
        web = [python, "-m", "gunicorn", "reviewqueue.wsgi", "--bind", f"127.0.0.1:{self.web_port}"]
        self.run("web", web + ["--workers", str(self.options.web)])
        events = [python, "-m", "uvicorn", "reviewqueue.asgi:application", "--host", "127.0.0.1"]
        self.run("events", events + ["--port", str(self.events_port), "--workers", str(self.options.events)])
        celery = [python, "-m", "celery", "-A", "reviewqueue"]
        self.run("worker", celery + ["worker", "--loglevel", "WARNING", "--concurrency", str(self.options.workers)])
        self.run("beat", celery + ["beat", "--loglevel", "WARNING"])
        serving.wait_for(lambda: _answers(f"{self.web_url}/login/"), f"{self.label}: gunicorn", self.processes["web"])
        serving.wait_for(
            lambda: self.open_holds() >= self.options.holds,
            f"{self.label}: the first sync",
            self.processes["platform"],
            timeout=300,
        )

    def run(self, name: str, command: list[str], simulator: bool = False) -> None:
        """``command`` in the stack's checkout; the simulator with the tests' settings, which install it."""
        environment = self.env | {"DJANGO_SETTINGS_MODULE": "tests.settings"} if simulator else self.env
        self.processes[name] = serving.start(command, environment, self.logs / f"{name}.log", self.root)

    def seed(self, reviewers: int, auditors: int, scripts: int, slack_buttons: int) -> dict:
        """The scenario's people and pools: this checkout's bench/capacity/seed.py, run with the stack's own code
        on the stack's database, so that a baseline whose models differ (an older revision) is seeded alike."""
        environment = os.environ | {
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": self.database_url,
            "SECRET_KEY": self.secret,
            "PYTHONPATH": str(self.root),
        }
        counts = [str(count) for count in (reviewers, auditors, scripts, slack_buttons)]
        seeded = subprocess.run(
            [sys.executable, str(serving.ROOT / "bench" / "capacity" / "seed.py"), *counts],
            cwd=self.root, env=environment, capture_output=True, text=True,
        )  # fmt: skip
        if seeded.returncode:
            raise SystemExit(f"{self.label}: seeding failed:\n{seeded.stderr}")
        return json.loads(seeded.stdout)

    def query(self, sql: str, arguments=()) -> list[tuple]:
        with psycopg.connect(self.database_url) as connection:
            return connection.execute(sql, arguments).fetchall()

    def open_holds(self) -> int:
        return self.query("SELECT count(*) FROM holds_hold WHERE status = 'open'")[0][0]

    def still_undecided(self, pks: list[int]) -> list[int]:
        """Of ``pks``, in their order, the holds still open with no decision standing and nobody's claim running: what
        is left to decide. A hold whose decision was undone is claimed by its reviewer, who decides it again: given to
        another in the next step, it would be refused (a 409) while that claim runs."""
        left = {
            pk
            for (pk,) in self.query(
                "SELECT id FROM holds_hold hold WHERE id = ANY(%s) AND status = 'open'"
                " AND (claimed_by_id IS NULL OR claim_expires_at <= now()) AND NOT EXISTS"
                " (SELECT 1 FROM holds_decision d WHERE d.hold_id = hold.id AND d.state <> 'withdrawn')",
                [pks],
            )
        }
        return [pk for pk in pks if pk in left]

    def settled(self) -> bool:
        """No decision waiting to be sent, beyond its undo window, or under way."""
        return not self.query(
            "SELECT count(*) FROM holds_decision WHERE state = 'sending' AND created_at < now() - interval '15 seconds'"
        )[0][0]

    def exited(self) -> list[str]:
        return [name for name, process in self.processes.items() if process.poll() is not None]

    def cpu_seconds(self) -> dict[str, float]:
        """Each process's CPU seconds so far, its children's with it (gunicorn's workers, Celery's pool), and the
        PostgreSQL backends serving the stack's database now."""
        seconds = {name: _tree_cpu(process.pid) for name, process in self.processes.items()}
        backends = self.query("SELECT pid FROM pg_stat_activity WHERE datname = %s", [self.database])
        seconds |= {f"PostgreSQL {pid}": _cpu(pid) for (pid,) in backends}  # summed by the caller, per backend
        return seconds

    def connections(self) -> int:
        return self.query("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [self.database])[0][0]

    def platform_decisions(self) -> list[dict]:
        """The decision POSTs the platform received, each with the hold's platform id."""
        requests = httpx.get(f"{self.platform_url}/_control/requests", timeout=60).json()["requests"]
        return [
            request | {"hold_id": request["path"].split("/")[-2]}
            for request in requests
            if request["method"] == "POST" and request["path"].endswith("/decision")
        ]

    def stop(self) -> None:
        for process in self.processes.values():
            serving.stop(process)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _cpu(pid: int) -> float:
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system


def _tree_cpu(pid: int) -> float:
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return 0.0
    return _cpu(pid) + sum(_cpu(child.pid) for child in children)


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.5)
    return condition()
