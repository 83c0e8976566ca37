"""Start-up refuses malformed settings with a message naming the variable."""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def start_django(code: str = "", **variables) -> subprocess.CompletedProcess:
    """Set Django up in a fresh process with exactly these variables (and no database or Redis URL)."""
    environment = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    environment |= {"DJANGO_SETTINGS_MODULE": "reviewqueue.settings", "SECRET_KEY": "s", **variables}
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        env=environment, cwd=ROOT, capture_output=True, text=True, timeout=60,
    )


@pytest.mark.parametrize(
    "variable, value",
    [
        ("AGENTOS_URL", "agentos.example.com"),
        ("SYNC_INTERVAL_SECONDS", "often"),
        ("AGENTOS_READ_TIMEOUT", "-1"),
        ("DEBUG", "perhaps"),
        ("REDIS_URL", "127.0.0.1:6379"),
        ("DATABASE_URL", "nonsense://"),
    ],
)
def test_a_malformed_value_stops_start_up_naming_the_variable(variable, value, tmp_path):
    started = start_django(**{variable: value, "REVIEWQUEUE_VAR_DIR": str(tmp_path)})

    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr
    assert variable in started.stderr.splitlines()[-1]


def test_without_database_and_redis_urls_the_embedded_defaults_are_used(tmp_path):
    code = "from django.conf import settings as s; print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL)"

    started = start_django(code, REVIEWQUEUE_VAR_DIR=str(tmp_path))

    assert started.stdout.split() == ["django.db.backends.sqlite3", "filesystem://"]


@pytest.mark.parametrize("variable", ["SECRET_KEY", "AGENTOS_API_KEY"])
def test_a_production_start_without_a_secret_is_refused(variable, tmp_path):
    started = start_django(**{variable: "", "DEBUG": "0", "REVIEWQUEUE_VAR_DIR": str(tmp_path)})

    assert variable in started.stderr.splitlines()[-1]
