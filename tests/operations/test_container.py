"""The image of ``Containerfile`` runs the queue end to end, as docs/operating.md says, from a clean checkout.

The image is built on a Debian 13 base made here (tests/helpers/podman.py). The containers run read-only,
as user 10001, on the host's network, against this machine's PostgreSQL and Redis and the simulated
platform: ``migrate`` to completion, then ``web``, ``worker`` and ``beat``. Skipped where podman is not
installed; ``.ci/run`` installs it.
"""

import json
import re
import secrets
import subprocess
import time

import httpx
import psycopg
import pytest

from tests.helpers.forms import fields_of
from tests.helpers.podman import BUILD_TIMEOUT, IMAGE, Podman, clean_copy
from tests.helpers.podman import installed as podman_installed
from tests.helpers.processes import API_KEY, ROOT, free_port
from tests.helpers.waiting import wait_until

pytestmark = [
    pytest.mark.long,
    pytest.mark.timeout(BUILD_TIMEOUT + 300),  # the first test builds the image
    pytest.mark.skipif(not podman_installed(), reason="podman, runc or mmdebstrap is missing (.ci/run installs them)"),
]

PASSWORD = "container-reviews"


@pytest.fixture(scope="module")
def podman(tmp_path_factory) -> Podman:
    return Podman(tmp_path_factory.mktemp("podman"))


@pytest.fixture(scope="module")
def image(podman, tmp_path_factory) -> str:
    """The image built from a clean copy of the checkout on a Debian 13 base made here (both cached by podman)."""
    podman.ensure_base()
    seconds = podman.build(clean_copy(tmp_path_factory.mktemp("context")))
    print(f"\nimage {IMAGE}: {podman.image_megabytes():.0f} MB, built in {seconds:.0f} s (podman's cache as found)")
    return IMAGE


@pytest.fixture
def containers(podman, image, fresh_database, own_redis, simulated_platform):
    """Start a container of ``image`` with the production environment; every one started is removed at the end."""
    port = free_port()
    environment = {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": fresh_database,
        "REDIS_URL": own_redis,
        "AGENTOS_URL": simulated_platform.url,
        "AGENTOS_API_KEY": API_KEY,
        "ALLOWED_HOSTS": "review.example.com",
        # http: the test's client speaks plain HTTP, and would keep an https site's Secure cookies to itself.
        "SITE_URL": "http://review.example.com",
        # The shipped proxy settings, as compose passes them on: requests come from 127.0.0.1, which they do not trust.
        **shipped_proxy_settings(),
        "METRICS_ALLOWED_IPS": "10.0.0.0/8",
        "EMAIL_BACKEND": "console",
        "PORT": str(port),
        "SYNC_INTERVAL_SECONDS": "2",
        "UNDO_SECONDS": "0",
    }
    names = []

    def start(command: str, *arguments: str, detach: bool = True, without: str = "") -> subprocess.CompletedProcess:
        name = f"rq-test-{secrets.token_hex(4)}-{command}"
        names.append(name)
        settings = [f"--env={key}={value}" for key, value in environment.items() if key != without]
        return podman(
            "run",
            *(["--detach"] if detach else []),
            f"--name={name}",
            f"--hostname={name}",  # on the host's network a container takes the host's name, which Celery's node uses
            "--network=host",
            "--read-only",
            "--tmpfs=/tmp",
            *settings,
            image,
            command,
            *arguments,
            check=False,
            timeout=300,
        )

    start.port = port
    start.names = names
    yield start
    for name in names:
        podman("rm", "--force", "--time=2", name, check=False)


def test_a_missing_setting_stops_the_container_with_its_name(containers):
    stopped = containers("web", detach=False, without="SECRET_KEY")
    assert stopped.returncode == 78
    assert "SECRET_KEY must be set" in stopped.stderr and "Traceback" not in stopped.stderr


def test_migrate_web_worker_and_beat_run_the_queue_read_only_and_deliver_a_decision_once(
    containers, podman, platform_state, fresh_database
):
    platform_state.load_samples()
    migrated = containers("migrate", detach=False)
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    made = containers("manage", "createuser", "alice", "--role", "reviewer", "--password", PASSWORD, detach=False)
    assert made.returncode == 0, made.stderr[-3000:]

    started = time.monotonic()
    for command in ("web", "worker", "beat"):
        assert containers(command).returncode == 0
    web_name, worker_name, beat_name = containers.names[-3:]
    headers = {"Host": "review.example.com", "Origin": "http://review.example.com"}  # as the proxy passes them on
    with httpx.Client(base_url=f"http://127.0.0.1:{containers.port}", headers=headers, timeout=10) as web:
        wait_until(lambda: ready(web), timeout=120, interval=0.5)
        print(f"\nweb, worker and beat started -> /readyz 200 in {time.monotonic() - started:.1f} s")

        for name in (web_name, worker_name, beat_name):
            assert podman("exec", name, "id", "-u").stdout.strip() == "10001"
            assert podman("exec", name, "touch", "/app/written", check=False).returncode != 0  # the root is read-only
        assert podman("healthcheck", "run", web_name, check=False).returncode == 0
        assert podman("healthcheck", "run", worker_name, check=False, timeout=60).returncode == 0

        hold_pk, hold_id = first_open_hold(fresh_database)
        sign_in(web)
        decided = reject_every_item(web, hold_pk)
        assert decided.status_code == 302, decided.text[-2000:]
        path = f"/holds/{hold_id}/decision"
        wait_until(lambda: decision_state(fresh_database, hold_pk) == "applied", timeout=60, interval=0.5)

        # Last, as it locks 127.0.0.1 out: a forwarded address from an untrusted peer counts for nothing.
        forged = web.get("/metrics", headers={"X-Forwarded-For": "10.9.9.9"})
        assert forged.status_code == 401 and "reviewqueue_" not in forged.text
        assert brake_locks_by_the_real_address(web) == 429
        assert lockout_addresses(fresh_database) == ["127.0.0.1"]
    assert len(decisions_posted(platform_state, path)) == 1

    podman("stop", "--time=10", web_name, worker_name, beat_name, timeout=60)  # SIGTERM, then SIGKILL after 10 s
    for state in (found["State"] for found in json.loads(podman("inspect", web_name, worker_name, beat_name).stdout)):
        assert state["ExitCode"] == 0, f"exited {state['ExitCode']}: not within the stop timeout, or not cleanly"


def shipped_proxy_settings() -> dict[str, str]:
    """``TRUSTED_PROXIES`` and ``PROXY_HTTPS_HEADER`` as ``.env.example`` sets them."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    given = dict(line.split("=", 1) for line in lines if line.strip() and not line.startswith("#"))
    return {name: given[name] for name in ("TRUSTED_PROXIES", "PROXY_HTTPS_HEADER")}


def brake_locks_by_the_real_address(web: httpx.Client) -> int:
    """Failed sign-ins "from" 203.0.113.7 up to the limit, then alice's right password "from" 203.0.113.8."""
    with httpx.Client(base_url=web.base_url, headers=web.headers, timeout=10) as stranger:
        for n in range(5):  # SIGN_IN_FAILURE_LIMIT's default
            failed = attempt_sign_in(stranger, f"nobody{n}", "guess", "203.0.113.7")
            assert failed.status_code in (200, 429), failed.text[-2000:]
        return attempt_sign_in(stranger, "alice", PASSWORD, "203.0.113.8").status_code


def attempt_sign_in(client: httpx.Client, username: str, password: str, forwarded_for: str) -> httpx.Response:
    headers = {"X-Forwarded-For": forwarded_for}
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get("/login/", headers=headers).text)[1]
    form = {"csrfmiddlewaretoken": token, "username": username, "password": password}
    return client.post("/login/", data=form, headers=headers)


def lockout_addresses(database_url: str) -> list[str]:
    with psycopg.connect(database_url) as connection:
        rows = connection.execute("SELECT payload->>'ip' FROM audit_auditevent WHERE kind = 'locked_out'").fetchall()
    return [row[0] for row in rows]


def ready(web: httpx.Client) -> bool:
    try:
        return web.get("/readyz").status_code == 200
    except httpx.TransportError:
        return False


def first_open_hold(database_url: str) -> tuple[int, str]:
    with psycopg.connect(database_url) as connection:
        return connection.execute(
            "SELECT id, hold_id FROM holds_hold WHERE status = 'open' AND env = 'default' ORDER BY id LIMIT 1"
        ).fetchone()


def decision_state(database_url: str, hold_pk: int) -> str | None:
    with psycopg.connect(database_url) as connection:
        found = connection.execute("SELECT state FROM holds_decision WHERE hold_id = %s", [hold_pk]).fetchone()
    return found and found[0]


def sign_in(web: httpx.Client) -> None:
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', web.get("/login/").text)[1]
    answer = web.post("/login/", data={"csrfmiddlewaretoken": token, "username": "alice", "password": PASSWORD})
    assert answer.status_code == 302 and "sessionid" in web.cookies, answer.text[-2000:]


def reject_every_item(web: httpx.Client, hold_pk: int) -> httpx.Response:
    """The hold page's form with every item rejected, then "Send decision" on its summary, as a browser sends them."""
    page = web.get(f"/holds/{hold_pk}/")
    form = fields_of(page.text, "decide-form")
    for action in set(re.findall(r'name="([^"]+-action)"', page.text)):
        form[action] = ["reject"]
    summary = web.post(f"/holds/{hold_pk}/review", data=form)
    assert summary.status_code == 200, summary.text[-2000:]
    return web.post(f"/holds/{hold_pk}/review", data={**fields_of(summary.text, "confirm-form"), "confirm": "yes"})


def decisions_posted(platform_state, path: str) -> list[dict]:
    return [r for r in platform_state.requests if r["method"] == "POST" and r["path"].endswith(path)]
