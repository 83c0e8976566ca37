"""The app's own processes (Celery's worker and beat, a fresh Django, the test identity provider's commands), forked
from a process that has already imported the libraries they share.

Each such process is a new Python that imports Django, Celery, kombu, psycopg and httpx before it does anything: that
was most of what one cost, and the suite starts many. Here they fork from a server process of
:mod:`multiprocessing`'s ``forkserver`` kind, started once per test process, which imports those third-party libraries
and nothing of the app's. Each child then sets the environment it is given, reads the settings, sets Django up and runs
the same entry point a command line would (the module ``python -m`` would run, ``celery`` or ``manage`` for instance),
so what it does is what a process started from the shell does: settings, caches and connections are all its own.
"""

import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers.processes import ROOT

# Third-party modules only: none reads the environment or Django's settings when imported, so a child forked after
# them still sees the environment it is given.
SHARED_LIBRARIES = [
    "django.db.models",
    "django.db.backends.postgresql.base",
    "django.contrib.admin.options",
    "django.forms",
    "django.http",
    "django.template.defaulttags",
    "django.urls",
    "psycopg",
    "httpx",
    "redis",
    "kombu.transport.redis",
    "celery.app",
    "celery.bin.celery",
    "celery.apps.worker",
    "celery.apps.beat",
    "celery.worker.consumer",
    # What django.setup() imports next for the API (Django Ninja: pydantic, and Django's test client and Jinja2
    # through its settings module) and Slack: a fifth of a worker's start. Not Ninja or django-axes themselves, whose
    # modules read the settings when imported, nor prometheus_client, which reads PROMETHEUS_MULTIPROC_DIR.
    "pydantic",
    "pydantic.fields",
    "slack_sdk.web",
    "slack_sdk.signature",
    "jinja2",
    "django.test.client",
]

TIMEOUT = 60  # seconds for a process the caller waits on

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(SHARED_LIBRARIES)


class Process:
    """A started process, with the part of :class:`subprocess.Popen`'s interface the tests use."""

    def __init__(self, process: multiprocessing.Process):
        self._process = process

    @property
    def pid(self) -> int:
        return self._process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def kill(self) -> None:
        self._process.kill()

    def wait(self) -> int:
        self._process.join()
        return self._process.exitcode


def start_module(module: str, arguments: list[str], environment: dict[str, str], log: Path) -> Process:
    """``python -m <module> <arguments>`` (``celery`` for a worker or beat) started with exactly ``environment``, in
    the checkout, writing its output to ``log``."""
    process = _context.Process(target=_run_module, args=(module, arguments, environment, str(log), str(log)))
    process.start()
    return Process(process)


def run_module(
    module: str, arguments: list[str], environment: dict[str, str], timeout: float = TIMEOUT
) -> subprocess.CompletedProcess:
    """``python -m <module> <arguments>`` with exactly ``environment``, in the checkout (``manage`` for manage.py); its
    exit code and output, as :func:`subprocess.run` gives them."""
    command = ["python", "-m", module, *arguments]
    return _run_to_end(command, _run_module, module, arguments, environment, timeout=timeout)


def start_django(code: str = "", **variables) -> subprocess.CompletedProcess:
    """Set Django up in a fresh process with exactly these variables (and no database or Redis URL), then run
    ``code``; its exit code and output, as :func:`subprocess.run` gives them."""
    environment = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    environment |= {"DJANGO_SETTINGS_MODULE": "reviewqueue.settings", "SECRET_KEY": "s", "EMAIL_BACKEND": "console"}
    environment |= variables
    return _run_to_end(["django", code], _run_django, code, environment)


def _run_to_end(command: list[str], target, *arguments, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """Run ``target(*arguments, stdout, stderr)`` in a forked process and wait for it; one that runs past ``timeout``
    seconds is killed."""
    with tempfile.TemporaryDirectory() as output:
        stdout, stderr = Path(output, "stdout"), Path(output, "stderr")
        process = _context.Process(target=target, args=(*arguments, str(stdout), str(stderr)))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(command, timeout)
        return subprocess.CompletedProcess(command, process.exitcode, stdout.read_text(), stderr.read_text())


def _run_django(code: str, environment: dict[str, str], stdout: str, stderr: str) -> None:
    _become(environment, stdout, stderr)
    exec(compile(f"import django; django.setup(); {code}", "<start_django>", "exec"), {"__name__": "__main__"})


def _run_module(module: str, arguments: list[str], environment: dict[str, str], stdout: str, stderr: str) -> None:
    _become(environment, stdout, stderr)
    sys.argv = [module, *arguments]
    runpy.run_module(module, run_name="__main__", alter_sys=True)  # multiprocessing turns SystemExit into the exit code


def _become(environment: dict[str, str], stdout: str, stderr: str) -> None:
    """Take on a process's own environment, working directory and output, as if just started from the shell."""
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    for descriptor, path in ((1, stdout), (2, stderr)):
        output = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(output, descriptor)
        os.close(output)
