"""The app as production runs it, on a PostgreSQL and a Redis of the caller's own (``tests.helpers.own_services``):
gunicorn, uvicorn for the pages' event streams, a Celery worker with its prefork pool, Celery beat, and the simulated
platform in a process of its own; and a reviewer deciding through its pages. For the fault test and ``bench.faults``.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys

import httpx
import psycopg

from tests.helpers import preloaded
from tests.helpers.processes import API_KEY, ROOT, free_port

PASSWORD = "pw"  # tests.settings hashes with MD5; the user is written straight into the app's database


class App:
    """The app's processes on a PostgreSQL and a Redis of the caller's own, each in its own process group, with
    ``holds`` open holds on its platform; ``variables`` are settings of the environment for them all."""

    def __init__(self, database_url: str, redis_url: str, logs, holds: int, **variables: str):
        self.logs = logs
        self.holds = holds
        self.web_port = free_port()
        self.platform_port = free_port()
        self.platform_url = f"http://127.0.0.1:{self.platform_port}"
        self.web_url = f"http://127.0.0.1:{self.web_port}"
        self.events_url = f"http://127.0.0.1:{free_port()}"
        self.environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "AGENTOS_URL": self.platform_url,
            "AGENTOS_API_KEY": API_KEY,
            "ALLOWED_HOSTS": "127.0.0.1",
            "REVIEWQUEUE_VAR_DIR": str(logs),
            "UNDO_SECONDS": "0",  # sent at once: what is measured is delivery
            "SYNC_INTERVAL_SECONDS": "2",  # beat's first sync comes one interval after it starts
            **variables,
        }
        self.processes: dict[str, subprocess.Popen | preloaded.Process] = {}

    def start(self, name: str, *arguments: str) -> None:
        with open(self.logs / f"{name}.log", "ab") as log:
            self.processes[name] = subprocess.Popen(
                [sys.executable, *arguments],
                cwd=ROOT,
                env=self.environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start_forked(self, name: str, module: str, *arguments: str) -> None:
        """A process without children of its own, forked from one that imported the libraries already (quicker)."""
        self.processes[name] = preloaded.start_module(
            module, list(arguments), self.environment, self.logs / f"{name}.log"
        )

    def start_all(self) -> None:
        self.start_forked("platform", "manage", "runplatform", "--port", str(self.platform_port), "--api-key", API_KEY,
                          "--no-samples", "--generate", str(self.holds))  # fmt: skip
        web = ["-m", "gunicorn", "reviewqueue.wsgi", "--bind", f"127.0.0.1:{self.web_port}", "--workers", "2"]
        self.start("web", *web)
        events_port = self.events_url.rsplit(":", 1)[1]
        events = ["-m", "uvicorn", "reviewqueue.asgi:application", "--host", "127.0.0.1", "--port", events_port]
        self.start("events", *events, "--no-access-log")
        self.start("worker", "-m", "celery", "-A", "reviewqueue", "worker", "--loglevel", "INFO", "--concurrency", "2")
        self.start_forked("beat", "celery", "-A", "reviewqueue", "beat", "--loglevel", "INFO")

    def pids(self) -> dict[str, int | None]:
        """Each process's id while it runs, None once it has exited."""
        return {name: process.pid if process.poll() is None else None for name, process in self.processes.items()}

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def stop(self) -> None:
        for process in self.processes.values():
            if isinstance(process, preloaded.Process):
                process.kill()
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)  # gunicorn's and the pool's processes with it
        for process in self.processes.values():
            process.wait()


def add_reviewer(database_url: str, username: str) -> str:
    """A reviewer written straight into the database the app runs on (the test process's Django runs on another)."""
    from django.contrib.auth.hashers import make_password

    from reviewqueue import roles

    with psycopg.connect(database_url, autocommit=True) as database:
        user = database.execute(
            "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,"
            " is_active, date_joined) VALUES (%s, false, %s, '', '', %s, false, true, now()) RETURNING id",
            (make_password(PASSWORD), username, f"{username}@example.com"),
        ).fetchone()[0]
        group = database.execute(
            "INSERT INTO auth_group (name) VALUES (%s) RETURNING id", (roles.REVIEWERS,)
        ).fetchone()[0]
        database.execute("INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)", (user, group))
    return username


def signed_in(base_url: str, username: str) -> httpx.Client | None:
    """A client signed in through the login form, or None while gunicorn does not answer yet."""
    client = httpx.Client(base_url=base_url, timeout=10)
    try:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get("/login/").text)[1]
        answer = client.post("/login/", data={"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD})
    except httpx.TransportError:
        return None
    assert answer.status_code == 302, answer.text
    return client


def reject(web: httpx.Client, pk: int) -> httpx.Response:
    """The hold page's "Reject all": a decision, stored, then delivered by the worker."""
    return web.post(
        f"/holds/{pk}/reject", data={"comment": "not now"}, headers={"X-CSRFToken": web.cookies["csrftoken"]}
    )


def first_event(events_url: str, web: httpx.Client) -> tuple[int, str]:
    """The status of a page's event stream, opened with ``web``'s session, and what it sent first."""
    with httpx.stream("GET", f"{events_url}/events/", cookies=web.cookies, timeout=10) as response:
        return response.status_code, next(response.iter_text(), "")


def answers(client: httpx.Client, path: str) -> bool:
    try:
        return client.get(path).status_code == 200
    except httpx.TransportError:
        return False


def open_hold_ids(database_url: str) -> list[int]:
    with psycopg.connect(database_url) as database:
        return [row[0] for row in database.execute("SELECT id FROM holds_hold WHERE status = 'open' ORDER BY id")]


def applied(database_url: str) -> set[int]:
    """The holds whose decision the platform applied, as the app recorded it; nothing while the database is down."""
    try:
        with psycopg.connect(database_url, connect_timeout=1) as database:
            return {row[0] for row in database.execute("SELECT hold_id FROM holds_decision WHERE state = 'applied'")}
    except psycopg.OperationalError:
        return set()


def idempotency_keys(database_url: str) -> dict[str, str]:
    """Each decided hold's platform id → its decision's Idempotency-Key."""
    with psycopg.connect(database_url) as database:
        rows = database.execute(
            "SELECT hold.hold_id, decision.idempotency_key FROM holds_decision decision"
            " JOIN holds_hold hold ON hold.id = decision.hold_id"
        )
        return {hold_id: str(key) for hold_id, key in rows}


def posted_decisions(platform: httpx.Client) -> list[dict]:
    """The decision POSTs the platform received (recorded as they arrive), each with the hold's platform id."""
    requests = platform.get("/_control/requests").json()["requests"]
    return [
        request | {"hold_id": request["path"].split("/")[-2]}
        for request in requests
        if request["method"] == "POST" and request["path"].endswith("/decision")
    ]


def slow_down(platform: httpx.Client, seconds: float, decisions: int) -> None:
    """The platform answers each of the next ``decisions`` decision POSTs ``seconds`` late."""
    platform.post("/_control/faults", json={"faults": [{"delay": seconds, "path_contains": "/decision"}] * decisions})


def decisions_under_way(platform: httpx.Client, slowed: int) -> int:
    """How many decision POSTs the platform received and has not answered yet, ``slowed`` having been slowed down:
    each took its delay when it arrived, and is recorded when answered."""
    pending = platform.post("/_control/faults", json={"faults": []}).json()["pending"]
    return slowed - pending - len(posted_decisions(platform))


def platform_hold(platform: httpx.Client, hold_id: str) -> dict:
    return platform.get(f"/v0/envs/default/holds/{hold_id}", headers={"Authorization": f"Bearer {API_KEY}"}).json()
