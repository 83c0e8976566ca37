"""A stranger's guesses, a forged header, a shared cache and an unattended screen get nothing.

The sign-in brake (django-axes with reviewqueue/signin.py), the client address
behind proxies, Cache-Control and the Content-Security-Policy on every page, and
the session idle timeout; the browser test at the end loads the main pages in
Chromium under the real policy.
"""

import ipaddress
import re
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.apps import apps
from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from reviewqueue import roles
from tests.helpers import browser as chromium
from tests.helpers.duplicates import every_duplicate
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# An HTML opening tag with the Django tags and quoted values in it (which may hold a ">").
OPENING_TAG = re.compile(r"<[a-zA-Z](?:\{%.*?%\}|\{\{.*?\}\}|\"[^\"]*\"|'[^']*'|[^>])*>", re.DOTALL)
HX_TRIGGER = re.compile(r"hx-trigger\s*=\s*(\"[^\"]*\"|'[^']*')")
POLL_MARKER = re.compile(r"(?<![\w-])data-(?:poll|heartbeat)(?![\w-])")


def sign_in(client, username, password, address="203.0.113.7", form="login", **headers):
    return client.post(reverse(form), {"username": username, "password": password}, REMOTE_ADDR=address, **headers)


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


@pytest.fixture
def root(db):
    return make_user("root", is_staff=True, is_superuser=True)


# The sign-in brake


def test_after_too_many_wrong_passwords_even_the_right_one_is_refused_with_a_time_to_wait(client, alice, settings):
    for _ in range(settings.SIGN_IN_FAILURE_LIMIT - 1):
        assert sign_in(client, "alice", "guess").status_code == 200

    locking = sign_in(client, "alice", "guess")
    right = sign_in(client, "alice", "pw")

    assert locking.status_code == right.status_code == 429
    assert "Try again in 15 minutes." in right.content.decode()
    assert not signed_in(client)


def test_the_lockout_ends_after_its_time_and_the_wait_shown_counts_down(client, alice, settings):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        for _ in range(settings.SIGN_IN_FAILURE_LIMIT):
            sign_in(client, "alice", "guess")
        traveller.shift(timedelta(minutes=10, seconds=30))
        assert "Try again in 5 minutes." in sign_in(client, "alice", "pw").content.decode()

        traveller.shift(timedelta(minutes=5))
        assert sign_in(client, "alice", "pw").status_code == 302

    assert signed_in(client)


def test_an_administrator_lifts_a_lockout_early_with_the_command_the_readme_names(client, alice, settings):
    for _ in range(settings.SIGN_IN_FAILURE_LIMIT):
        sign_in(client, "alice", "guess")

    call_command("axes_reset_username", "alice")

    assert sign_in(client, "alice", "pw").status_code == 302


def test_one_address_guessing_many_usernames_is_stopped(client, alice, bob, settings):
    for n in range(settings.SIGN_IN_FAILURE_LIMIT):
        sign_in(client, f"user{n}", "guess", address="198.51.100.5")

    assert sign_in(client, "bob", "pw", address="198.51.100.5").status_code == 429
    assert sign_in(client, "bob", "pw", address="198.51.100.6").status_code == 302


def test_one_username_guessed_from_many_addresses_is_stopped(client, alice, bob, settings):
    for n in range(settings.SIGN_IN_FAILURE_LIMIT):
        sign_in(client, "alice", "guess", address=f"198.51.100.{n + 10}")

    assert sign_in(client, "alice", "pw", address="192.0.2.1").status_code == 429
    assert sign_in(client, "bob", "pw", address="192.0.2.1").status_code == 302


def test_the_admin_login_form_counts_with_ours_and_is_stopped_too(client, root, settings):
    for n in range(settings.SIGN_IN_FAILURE_LIMIT):
        sign_in(client, "root", "guess", form="admin:login" if n % 2 else "login")

    for form in ("admin:login", "login"):
        refused = sign_in(client, "root", "pw", form=form)
        assert refused.status_code == 429 and "Try again in" in refused.content.decode(), form
    assert not signed_in(client)


def test_a_forged_forwarded_for_header_does_not_reset_the_count(client, alice, settings):
    for n in range(settings.SIGN_IN_FAILURE_LIMIT):
        sign_in(client, f"user{n}", "guess", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")

    assert sign_in(client, "bob", "pw", HTTP_X_FORWARDED_FOR="192.0.2.200").status_code == 429


def test_behind_a_trusted_proxy_two_clients_are_counted_apart(client, alice, bob, settings):
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.2")]
    for n in range(settings.SIGN_IN_FAILURE_LIMIT):
        sign_in(client, f"user{n}", "guess", address="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.5")

    blocked = sign_in(client, "bob", "pw", address="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.5")
    other = sign_in(client, "bob", "pw", address="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.6")

    assert (blocked.status_code, other.status_code) == (429, 302)


def test_a_failed_sign_in_with_a_nul_in_its_headers_is_counted_not_a_500(client, alice, settings):
    for _ in range(settings.SIGN_IN_FAILURE_LIMIT):
        failed = sign_in(client, "alice", "guess", HTTP_USER_AGENT="curl\x00", HTTP_ACCEPT="text/html\x00")
        assert failed.status_code in (200, 429)

    assert sign_in(client, "alice", "pw").status_code == 429


# Headers on every page


@pytest.fixture
def auditor_client(db):
    auditor = make_user("ada", roles.AUDITORS)
    client = Client()
    client.force_login(auditor)
    return client


def test_no_page_or_download_with_hold_or_audit_data_may_be_cached(alice_client, auditor_client, samples, alice):
    decision = decisions.submit(
        samples["h_12"], alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(samples["h_12"])
    )
    image = samples["h_14"]
    reviewer_pages = [
        reverse("queue"),
        reverse("hold", args=[image.pk]),
        reverse("run-context", args=[image.pk]),
        reverse("decision-status", args=[samples["h_12"].pk]),
        reverse("notifications"),
        reverse("notification-bell"),
        reverse("hold-file", args=[image.pk, image.files[0]["id"]]),
    ]
    auditor_pages = [
        reverse("audit:list"),
        reverse("audit:export"),
        reverse("audit:decision", args=[decision.pk]),
        reverse("audit:hold-timeline", args=[samples["h_12"].pk]),
    ]

    for client, url in [(alice_client, url) for url in reviewer_pages] + [
        (auditor_client, url) for url in auditor_pages
    ]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Cache-Control"] == "private, no-store", url


def test_every_page_forbids_inline_scripts_and_styles_and_gives_its_own_scripts_a_nonce(alice_client):
    response = alice_client.get(reverse("queue"))

    policy = response["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    nonce = directives["script-src"].split("'nonce-")[1].split("'")[0]
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert directives["style-src"].startswith("'self'") and directives["frame-ancestors"] == "'none'"
    assert f'nonce="{nonce}"' in response.content.decode()


# The session idle timeout


def test_a_session_nobody_uses_for_the_idle_time_is_signed_out(client, alice, settings):
    idle = timedelta(minutes=settings.SESSION_IDLE_MINUTES)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        sign_in(client, "alice", "pw")
        traveller.shift(idle - timedelta(minutes=5))
        assert client.get(reverse("queue")).status_code == 200  # used: the idle time starts again

        traveller.shift(idle - timedelta(minutes=5))
        assert client.get(reverse("queue")).status_code == 200

        traveller.shift(idle + timedelta(minutes=1))
        response = client.get(reverse("queue"))

    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_background_polls_do_not_keep_a_session_alive_and_then_send_the_page_to_sign_in(client, alice, settings):
    idle = timedelta(minutes=settings.SESSION_IDLE_MINUTES)
    poll = {"HTTP_HX_REQUEST": "true", "HTTP_X_POLL": "1", "HTTP_HX_CURRENT_URL": "http://testserver/holds/7/"}
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        sign_in(client, "alice", "pw")
        traveller.shift(idle - timedelta(minutes=5))
        assert client.get(reverse("notification-bell"), **poll).status_code == 200

        traveller.shift(timedelta(minutes=6))
        response = client.get(reverse("notification-bell"), **poll)

    assert response["HX-Redirect"] == reverse("login") + "?next=/holds/7/"


def test_a_short_idle_time_never_signs_out_someone_at_work(client, alice, settings):
    settings.SESSION_IDLE_MINUTES, settings.SESSION_COOKIE_AGE = 1, 60
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        sign_in(client, "alice", "pw")
        for _ in range(6):  # three minutes of work, a page every 30 s
            traveller.shift(timedelta(seconds=30))
            assert client.get(reverse("queue")).status_code == 200

        traveller.shift(timedelta(seconds=61))
        response = client.get(reverse("queue"))

    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_use_is_noted_at_most_once_a_tenth_of_the_idle_time_and_at_least_once_a_minute(client, alice, settings):
    def session_ends():
        return Session.objects.get(session_key=client.session.session_key).expire_date

    settings.SESSION_IDLE_MINUTES, settings.SESSION_COOKIE_AGE = 5, 300  # a tenth: 30 s
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        start = timezone.now()
        sign_in(client, "alice", "pw")
        client.get(reverse("queue"))
        traveller.shift(timedelta(seconds=29))
        client.get(reverse("queue"))
        not_noted = session_ends()
        traveller.shift(timedelta(seconds=1))
        client.get(reverse("queue"))
        noted_after_a_tenth = session_ends()

        settings.SESSION_IDLE_MINUTES, settings.SESSION_COOKIE_AGE = 480, 480 * 60  # a tenth: 48 minutes
        traveller.shift(timedelta(seconds=60))
        client.get(reverse("queue"))
        noted_after_a_minute = session_ends()

    assert not_noted == start + timedelta(minutes=5)
    assert noted_after_a_tenth == start + timedelta(seconds=30, minutes=5)
    assert noted_after_a_minute == start + timedelta(seconds=90, minutes=480)


def test_every_poll_in_the_templates_says_it_is_a_background_poll():
    """An ``hx-trigger`` with ``every`` repeats without anyone at work: app.js marks the requests of an element with
    ``data-poll`` (or the hold page's ``data-heartbeat``) ``X-Poll``, which the idle timeout does not count as use."""
    folders = [Path(folder) for engine in settings.TEMPLATES for folder in engine["DIRS"]]
    folders += [Path(app.path) / "templates" for app in apps.get_app_configs() if Path(app.path).is_relative_to(ROOT)]
    polls, unmarked = [], []
    for template in sorted(path for folder in folders for path in folder.rglob("*.html")):
        for tag in OPENING_TAG.findall(template.read_text()):
            if any("every" in trigger for trigger in HX_TRIGGER.findall(tag)):
                polls.append(template.name)
                if not POLL_MARKER.search(tag):
                    unmarked.append(f"{template.relative_to(ROOT)}: {tag}")

    assert {"queue.html", "_bell.html", "_presence.html", "_decision_status.html"} <= set(polls)  # the walk finds them
    assert unmarked == []


# In a real browser


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_main_pages_run_under_the_policy_without_a_single_violation(browser, live_server, samples):
    make_user("root", roles.REVIEWERS, roles.AUDITORS, is_staff=True, is_superuser=True)
    carol = make_user("carol", roles.REVIEWERS)
    hold = samples["h_14"]
    context = browser.new_context(base_url=live_server.url)
    context.add_init_script(
        "window.violations = [];"
        "document.addEventListener('securitypolicyviolation',"
        " e => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    page = context.new_page()
    problems = []
    page.on("console", lambda message: message.type in ("error", "warning") and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))

    page.goto("/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill("pw")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()
    seen = {}
    for url in [
        "/",
        f"/holds/{hold.pk}/",
        "/notifications/",
        "/notifications/preferences",
        "/audit/",
        "/audit/stats/",
        f"/audit/holds/{hold.pk}/",
        "/admin/",
        "/admin/holds/hold/",
        f"/admin/auth/user/{carol.pk}/change/",
    ]:
        page.goto(url)
        chromium.stop_live_updates(page)  # opened, and checked, as the page loaded
        page.wait_for_load_state("networkidle")
        seen[url] = page.evaluate("window.violations")
    page.goto(f"/holds/{hold.pk}/")
    expect(page.locator("#run")).not_to_be_empty()  # htmx loaded the run, without eval
    page.get_by_role("radio", name="Approve").first.check()
    page.get_by_role("button", name="Review decision").click()
    expect(page.get_by_role("heading", name="Check your decision")).to_be_visible()
    seen["summary"] = page.evaluate("window.violations")
    chromium.close_quietly(context)

    assert {url: found for url, found in seen.items() if found} == {}
    assert [problem for problem in problems if "Content Security Policy" in problem or "eval" in problem] == []
