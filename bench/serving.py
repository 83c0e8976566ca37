"""The app served as docs/operating.md's production section runs it, for the benchmarks that go through HTTP.

gunicorn with ``DEBUG`` off on 127.0.0.1, production settings plus the bench's bare
view (``bench.http_settings``), static files collected, and people signed in through
the real login form. Every process started here runs in a process group of its own,
which ``stopped`` ends, on errors and Ctrl-C too.
"""

import os
import re
import secrets
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_MODULE = "bench.http_settings"
PASSWORD = "bench-password-7f3a"  # the bench's users only, on the bench's own database


def production_environment(
    port: int, database_url: str, redis_url: str, agentos_url: str, agentos_api_key: str
) -> dict:
    """The environment of docs/operating.md's production section, with this machine's services in its placeholders.

    Without ``DATABASE_CONN_MAX_AGE``: reviewqueue/asgi.py sets it to 0 for an ASGI server, and a bench that imported
    it (the tests' helpers do) would otherwise have gunicorn open a database connection for every request.
    """
    inherited = {name: value for name, value in os.environ.items() if name != "DATABASE_CONN_MAX_AGE"}
    return {
        **inherited,
        "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE,
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SITE_URL": f"http://127.0.0.1:{port}",
        "AGENTOS_URL": agentos_url,
        "AGENTOS_API_KEY": agentos_api_key,
        "EMAIL_BACKEND": "console",  # no SMTP server here; nothing the benchmarks do sends mail
    }


def collectstatic_if_needed(environment: dict, root: Path = ROOT) -> None:
    """Run ``collectstatic`` in the checkout at ``root`` when its manifest is missing or older than a file under
    static/ or an app's static/ (``webapp/static/``, say)."""
    manifest = root / "staticfiles" / "staticfiles.json"
    files = [path for source in [root / "static", *root.glob("*/static")] for path in source.rglob("*")]
    newest = max((path.stat().st_mtime for path in files if path.is_file()), default=0)
    if manifest.exists() and manifest.stat().st_mtime >= newest:
        return
    print("collecting static files ...", file=sys.stderr, flush=True)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "--verbosity", "0"],
        cwd=root,
        env=environment,
        check=True,
    )


@contextmanager
def stopped_at_exit():
    """Turn SIGTERM into SystemExit, so ``finally`` blocks stop what the benchmark started."""

    def leave(signum, frame):
        raise SystemExit(f"stopped by signal {signum}")

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def start(command: list[str], environment: dict, log: Path, root: Path = ROOT) -> subprocess.Popen:
    """Start ``command`` in the checkout at ``root``, in a process group of its own, its output to ``log``."""
    with open(log, "ab") as output:
        return subprocess.Popen(
            command, cwd=root, env=environment, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )


def worker_and_beat(environment: dict, logs: Path, concurrency: int = 2) -> list[subprocess.Popen]:
    """A Celery worker (``concurrency`` processes in its pool) and beat with ``environment``, each logging to a file
    in ``logs``."""
    return [
        start(
            [sys.executable, "-m", "celery", "-A", "reviewqueue", *kind, "--loglevel", "INFO"],
            environment,
            logs / f"{kind[0]}.log",
        )
        for kind in (["worker", "--concurrency", str(concurrency)], ["beat"])
    ]


def stop(process: subprocess.Popen) -> None:
    """End the process's whole group (gunicorn's and Celery's own workers with it)."""
    for signum, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def gunicorn(environment: dict, port: int, log: Path, workers: int = 2, root: Path = ROOT):
    """gunicorn serving the checkout at ``root`` on 127.0.0.1:``port``; yields its base URL once it answers."""
    process = start(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "reviewqueue.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
        ],
        environment,
        log,
        root,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(url), f"gunicorn on port {port} (log: {log})", process)
        yield url
    finally:
        stop(process)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/login/", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def wait_for(
    condition, what: str, process: subprocess.Popen | None = None, timeout: float = 60.0, interval: float = 0.1
):
    """Poll ``condition`` every ``interval`` seconds until it is truthy and return it; exit naming ``what`` on timeout
    or when ``process`` died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if outcome := condition():
            return outcome
        if process is not None and process.poll() is not None:
            raise SystemExit(f"{what} exited with {process.returncode}")
        time.sleep(interval)
    raise SystemExit(f"gave up waiting for {what} after {timeout:.0f} s")


def create_user(username: str, group: str | None = None, superuser: bool = False):
    """A user who can sign in through gunicorn's login form with PASSWORD, in ``group`` or a superuser."""
    from django.contrib.auth.models import Group, User
    from django.test import override_settings

    # Hashed as the production settings hash, not with the test settings' fast hasher, which they refuse.
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"]):
        user = User.objects.create_user(
            username, email=f"{username}@example.com", password=PASSWORD, is_staff=superuser, is_superuser=superuser
        )
    if group:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


def sign_in(base_url: str, username: str) -> httpx.Client:
    """A client signed in as ``username`` through the login form, with its session and CSRF cookies."""
    client = httpx.Client(base_url=base_url, timeout=30)
    token = csrf_token(client.get("/login/").text)
    answer = client.post("/login/", data={"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD})
    if answer.status_code != 302 or "sessionid" not in client.cookies:
        raise SystemExit(f"signing in as {username} failed with {answer.status_code}")
    return client


def csrf_token(html: str) -> str:
    """The CSRF token of the (first) form in ``html``."""
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
