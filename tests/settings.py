"""Settings for the test suite: the real Postgres and Redis on this machine unless told otherwise."""

import os
import re

os.environ.setdefault("SECRET_KEY", "test-secret-key")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reviewqueue")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
os.environ.setdefault("AGENTOS_API_KEY", "test-api-key")
os.environ.setdefault("EMAIL_BACKEND", "console")  # pytest-django swaps in its in-memory outbox anyway
os.environ.setdefault("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.1/32")  # the tests' webhook receivers listen there


def _worker_redis_url(url: str, worker: str) -> str:
    """The Redis database of pytest-xdist worker ``gwN``: the N-th counting down from ``url``'s, past 13 and 14.

    Each worker flushes and fills its own (broker, cache), so no two may share one: with the
    default db 15, gw0 uses 15, gw1 12, gw2 11, …; 13 and 14 are the benches'. A run of
    ``-n 4`` with REDIS_URL=…/8 uses 8, 7, 6 and 5. (pytest-django gives each worker a
    test database of its own, ``test_<name>_gwN``.)
    """
    match = re.fullmatch(r"(.*/)(\d+)", url)
    if not match:
        raise RuntimeError(f"REDIS_URL must end in a database number for a run with pytest-xdist, not {url!r}")
    candidates = [db for db in range(int(match[2]), -1, -1) if db not in (13, 14) or db == int(match[2])]
    number = int(worker.removeprefix("gw"))
    if number >= len(candidates):
        raise RuntimeError(f"too few Redis databases below {url!r} for pytest-xdist worker {worker}")
    return f"{match[1]}{candidates[number]}"


# Once per worker: the Celery and Django processes a test starts inherit the worker's own URL as it is.
_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker and os.environ.get("REVIEWQUEUE_TEST_REDIS_WORKER") != _worker:
    os.environ["REDIS_URL"] = _worker_redis_url(os.environ["REDIS_URL"], _worker)
    os.environ["REVIEWQUEUE_TEST_REDIS_WORKER"] = _worker

from reviewqueue.settings import *  # noqa: E402,F403

if "simulator" not in INSTALLED_APPS:  # noqa: F405
    INSTALLED_APPS.append("simulator")  # noqa: F405  (runplatform's own test)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    DATABASES["default"]["ENGINE"] = "tests.database"  # noqa: F405  (a cheaper flush between transactional tests)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # noqa: F405
# No test asks the test client for a static file (Chromium's live servers serve them from the apps' folders), and
# WhiteNoise reads every file under STATIC_ROOT each time a test client builds its middleware: once the benches
# have collected the production files into the checkout, that was a tenth of a second for every client made.
STATIC_ROOT = None
