"""Settings for the test suite: the real Postgres and Redis on this machine unless told otherwise."""

import os

os.environ.setdefault("SECRET_KEY", "test-secret-key")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reviewqueue")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
os.environ.setdefault("AGENTOS_API_KEY", "test-api-key")
os.environ.setdefault("EMAIL_BACKEND", "console")  # pytest-django swaps in its in-memory outbox anyway
os.environ.setdefault("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.1/32")  # the tests' webhook receivers listen there

from reviewqueue.settings import *  # noqa: E402,F403

if "simulator" not in INSTALLED_APPS:  # noqa: F405
    INSTALLED_APPS.append("simulator")  # noqa: F405  (runplatform's own test)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # noqa: F405
