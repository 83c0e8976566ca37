"""Start-up refuses malformed settings with a message naming the variable."""

import os
import re
import secrets

import pytest

from tests.helpers.preloaded import run_module, start_django
from tests.helpers.processes import ROOT


@pytest.mark.parametrize(
    "variable, value",
    [
        ("AGENTOS_URL", "agentos.example.com"),
        ("SYNC_INTERVAL_SECONDS", "often"),
        ("AGENTOS_READ_TIMEOUT", "-1"),
        ("DEBUG", "perhaps"),
        ("REDIS_URL", "127.0.0.1:6379"),
        ("DATABASE_URL", "nonsense://"),
        ("TRUSTED_PROXIES", "10.0.0.2, proxy.internal"),
        ("TRUSTED_PROXIES", "0.0.0.0/0"),
        ("PROXY_HTTPS_HEADER", "X-Forwarded-Proto: https"),
        ("EMAIL_BACKEND", "pigeon"),
        ("SESSION_IDLE_MINUTES", "0"),
        ("WEBHOOK_ALLOWED_NETWORKS", "chat.internal"),
    ],
)
def test_a_malformed_value_stops_start_up_naming_the_variable(variable, value, tmp_path):
    started = start_django(**{variable: value, "REVIEWQUEUE_VAR_DIR": str(tmp_path)})

    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr
    assert variable in started.stderr.splitlines()[-1]


@pytest.mark.parametrize("value", ["1", "0"])
def test_the_retired_proxy_count_stops_start_up_pointing_at_trusted_proxies(value, tmp_path):
    started = start_django(TRUSTED_PROXY_COUNT=value, REVIEWQUEUE_VAR_DIR=str(tmp_path))

    last_line = started.stderr.splitlines()[-1]
    assert started.returncode != 0
    assert "TRUSTED_PROXY_COUNT is no longer read" in last_line and "TRUSTED_PROXIES" in last_line


def test_without_database_and_redis_urls_the_embedded_defaults_are_used(tmp_path):
    code = "from django.conf import settings as s; print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL)"

    started = start_django(code, REVIEWQUEUE_VAR_DIR=str(tmp_path))

    assert started.stdout.split() == ["django.db.backends.sqlite3", "filesystem://"]


@pytest.mark.parametrize("variable", ["SECRET_KEY", "AGENTOS_API_KEY"])
def test_a_production_start_without_a_secret_is_refused(variable, tmp_path):
    started = start_django(**{variable: "", "DEBUG": "0", "REVIEWQUEUE_VAR_DIR": str(tmp_path)})

    assert variable in started.stderr.splitlines()[-1]


def test_production_mail_is_smtp_unless_console_mail_is_chosen(tmp_path):
    code = "from django.conf import settings as s; print(s.MAILERS['default']['BACKEND'].rsplit('.', 2)[-2])"

    unset = start_django(code, DEBUG="0", EMAIL_BACKEND="", REVIEWQUEUE_VAR_DIR=str(tmp_path))
    chosen = start_django(code, DEBUG="0", EMAIL_BACKEND="console", REVIEWQUEUE_VAR_DIR=str(tmp_path))
    smtp = start_django(
        code, DEBUG="0", EMAIL_BACKEND="", EMAIL_HOST="smtp.example.com", REVIEWQUEUE_VAR_DIR=str(tmp_path)
    )
    quickstart = start_django(code, DEBUG="1", EMAIL_BACKEND="", REVIEWQUEUE_VAR_DIR=str(tmp_path))

    assert "EMAIL_HOST" in unset.stderr.splitlines()[-1]
    assert (chosen.stdout, smtp.stdout, quickstart.stdout) == ("console\n", "smtp\n", "console\n")


def test_only_the_quickstart_installs_the_simulated_platform(tmp_path):
    code = "from django.apps import apps; print(apps.is_installed('simulator'))"

    production = start_django(code, DEBUG="0", AGENTOS_API_KEY="k", REVIEWQUEUE_VAR_DIR=str(tmp_path))
    quickstart = start_django(
        code + "; from django.core.management import get_commands; print(get_commands()['runplatform'])",
        DEBUG="1",
        REVIEWQUEUE_VAR_DIR=str(tmp_path),
    )

    assert (production.stdout, quickstart.stdout) == ("False\n", "True\nsimulator\n"), (
        production.stderr + quickstart.stderr
    )


def documented_production_environment() -> dict[str, str]:
    """The variables docs/operating.md's production section exports, with real values where it writes "…"."""
    page = (ROOT / "docs" / "operating.md").read_text()
    section = page.split("## Running in production", 1)[1]
    export = re.search(r"^export (.*?)(?<!\\)$", section, re.MULTILINE | re.DOTALL).group(1)
    variables = dict(re.findall(r"(\w+)=(\S+)", export))
    stand_ins = {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": "postgres://reviewqueue:secret@db.example.com:5432/reviewqueue",
        "REDIS_URL": "redis://redis.example.com:6379/0",
        "AGENTOS_API_KEY": "a-production-key",
    }
    for name, value in variables.items():
        if "…" in value:
            assert name in stand_ins, f"docs/operating.md leaves {name} to the reader: give the test a stand-in for it"
            variables[name] = stand_ins[name]
    return variables


def test_check_deploy_finds_no_issue_in_the_documented_production_environment():
    environment = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "reviewqueue.settings"}
    environment |= documented_production_environment()

    checked = run_module("manage", ["check", "--deploy", "--fail-level", "WARNING"], environment)

    assert "SITE_URL" in environment and "EMAIL_HOST" in environment
    assert checked.returncode == 0, checked.stderr
    assert "System check identified no issues" in checked.stdout


def test_an_https_site_redirects_to_https_sends_hsts_and_reads_the_proxys_https_header_from_trusted_proxies(tmp_path):
    code = (
        "from django.conf import settings as s;"
        " print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.PROXY_HTTPS_HEADER, s.TRUSTED_PROXIES,"
        " s.SESSION_COOKIE_AGE)"
    )

    https = start_django(
        code,
        SITE_URL="https://review.example.com",
        PROXY_HTTPS_HEADER="X-Forwarded-Ssl",
        TRUSTED_PROXIES="10.0.0.2, 2001:db8::/32",
        SESSION_IDLE_MINUTES="30",
        REVIEWQUEUE_VAR_DIR=str(tmp_path),
    )
    plain = start_django(code, REVIEWQUEUE_VAR_DIR=str(tmp_path))

    assert https.stdout.strip() == (
        "True 31536000 HTTP_X_FORWARDED_SSL [IPv4Network('10.0.0.2/32'), IPv6Network('2001:db8::/32')] 1800"
    )
    assert plain.stdout.strip() == "False 0 HTTP_X_FORWARDED_PROTO [] 28800"
