"""The app starts exactly as docs/operating.md's "Running in production" section says, from a clean copy of the
checkout.

The section's shell block is the script: its ``export`` line is the environment (with this
machine's Postgres, Redis and simulated platform in place of the placeholders), and its
commands run in order, one-shot ones to completion and the servers in the background.
The copy holds only what git would hand a new clone, so nothing made by earlier runs
(``var/``, ``staticfiles/``, a beat schedule) can hide a missing step.
"""

import contextlib
import os
import re
import secrets
import shlex
import signal
import subprocess
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.helpers.podman import clean_copy
from tests.helpers.processes import API_KEY, ROOT, free_port
from tests.helpers.waiting import wait_until

VENV_BIN = ROOT / ".venv" / "bin"
OPERATING = ROOT / "docs" / "operating.md"
ONE_SHOT_TIMEOUT = 300  # migrate on a fresh database, on a busy machine


@pytest.fixture
def clean_checkout(tmp_path) -> Path:
    """The checkout's tracked and untracked-but-not-ignored files, as a fresh clone would have them."""
    return clean_copy(tmp_path / "checkout")


@pytest.fixture
def background():
    """Start long-running processes, each in its own process group; stop them all at the end."""
    started = []

    def start(command: list[str], **options) -> subprocess.Popen:
        process = subprocess.Popen(command, start_new_session=True, **options)
        started.append(process)
        return process

    yield start
    for process in started:
        _signal_group(process, signal.SIGTERM)
    for process in started:
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            process.wait()


@pytest.mark.long
# Migrating from nothing and collectstatic, then every server: 118 s of the test alone in a clean clone's busy run,
# beyond the usual test's 120 s with its teardown.
@pytest.mark.timeout(2 * ONE_SHOT_TIMEOUT)
def test_the_documented_production_setup_syncs_holds_and_serves_the_login_page(
    clean_checkout, fresh_database, own_redis, simulated_platform, platform_state, background, tmp_path
):
    platform_state.load_samples()
    exports, commands = production_section(OPERATING)
    environment = production_environment(
        exports,
        {
            "SECRET_KEY": secrets.token_urlsafe(50),
            "DATABASE_URL": fresh_database,
            "REDIS_URL": own_redis,
            "AGENTOS_URL": simulated_platform.url,
            "AGENTOS_API_KEY": API_KEY,
        },
    )
    port = free_port()
    logs = tmp_path / "logs"
    logs.mkdir()

    for number, command in enumerate(commands):
        program = runnable(command, port)
        if program is None:
            continue
        log = open(logs / f"{number}-{Path(program[0]).name}.log", "wb")  # noqa: SIM115 (servers keep writing to it)
        if program[0].endswith(("gunicorn", "celery")):
            background(program, cwd=clean_checkout, env=environment, stdout=log, stderr=subprocess.STDOUT)
        else:
            finished = subprocess.run(
                program,
                cwd=clean_checkout,
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=ONE_SHOT_TIMEOUT,
            )
            assert finished.returncode == 0, f"{command!r} failed:\n{Path(log.name).read_text()}"

    open_hold_ids = {hold["hold_id"] for hold in platform_state.list_open("default", limit=100)[0]}
    assert open_hold_ids
    synced = wait_until(
        lambda: (ids := mirrored_hold_ids(fresh_database)) >= open_hold_ids and ids, timeout=90, interval=0.5
    )
    assert synced == open_hold_ids

    headers = {"Host": environment["ALLOWED_HOSTS"].split(",")[0]}
    if environment.get("PROXY_HTTPS_HEADER"):  # the documented proxy terminates TLS and says so in this header
        headers[environment["PROXY_HTTPS_HEADER"]] = "https"
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=10) as web:
        login = wait_until(lambda: answer(web, "/login/"), timeout=60, interval=0.5)
        stylesheet = re.search(r'<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"', login.text)
        assert login.status_code == 200 and 'name="password"' in login.text
        assert stylesheet and web.get(stylesheet.group(1)).status_code == 200  # collectstatic's output is served
        # The probes, as the page's Kubernetes example sends them: ready once every env synced and beat ran.
        assert web.get("/healthz").json() == {"status": "alive"}
        ready = wait_until(
            lambda: (response := web.get("/readyz")).status_code == 200 and response, timeout=90, interval=1
        )
        assert ready.json() == {"status": "ready"}  # the checks behind it are for the metrics scrapers alone


def production_section(page: Path) -> tuple[str, list[str]]:
    """The page's production shell block: its ``export`` statement and its other commands, comments dropped."""
    text = page.read_text()
    block = re.search(r"## Running in production\s+```sh\n(.*?)```", text, re.DOTALL)
    assert block, f"{page.name} has no shell block under 'Running in production'"
    lines = block.group(1).replace("\\\n", " ").splitlines()
    statements = [line.split("#")[0].strip() for line in lines]
    exports = [statement for statement in statements if statement.startswith("export ")]
    assert len(exports) == 1, "the production block should set its environment with one export"
    return exports[0], [statement for statement in statements if statement and not statement.startswith("export ")]


def production_environment(export: str, local: dict[str, str]) -> dict[str, str]:
    """The exported variables, with ``local`` in place of the values that point at real services."""
    variables = dict(assignment.split("=", 1) for assignment in shlex.split(export)[1:])
    placeholders = {name for name, value in variables.items() if "…" in value} - local.keys()
    assert not placeholders, f"the page leaves {placeholders} for the reader to fill in; give the test a value"
    return {"PATH": f"{VENV_BIN}:{os.environ['PATH']}", "HOME": os.environ.get("HOME", "/tmp"), **variables, **local}


def runnable(command: str, port: int) -> list[str] | None:
    """The documented command as this machine runs it: the project's virtualenv, and 127.0.0.1 for the web server.

    ``pip install`` is skipped: the virtualenv holds requirements.txt already.
    """
    words = shlex.split(command.replace("…", secrets.token_urlsafe(16)))
    if words[:2] == ["pip", "install"]:
        return None
    if "--bind" in words:
        words[words.index("--bind") + 1] = f"127.0.0.1:{port}"
    return [str(VENV_BIN / words[0]), *words[1:]]


def mirrored_hold_ids(database_url: str) -> set[str]:
    with psycopg.connect(database_url) as connection:
        try:
            return {row[0] for row in connection.execute("SELECT hold_id FROM holds_hold WHERE env = 'default'")}
        except psycopg.errors.UndefinedTable:
            return set()


def answer(web: httpx.Client, path: str) -> httpx.Response | None:
    try:
        return web.get(path)
    except httpx.TransportError:  # gunicorn still starting
        return None


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)
