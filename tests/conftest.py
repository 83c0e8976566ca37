"""Fixtures shared by the suite: a simulated platform on 127.0.0.1, a client for it, users, Celery, Chromium.

Fixtures, and the hook that orders the run; what tests share besides fixtures is in tests/helpers/.
"""

import email
import ipaddress
import os
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import redis
from aiosmtpd.controller import Controller
from playwright.sync_api import sync_playwright

from holds.mirror import platform, sync
from reviewqueue import processcache, roles
from simulator.server import PlatformServer
from simulator.state import PlatformState
from tests.helpers import preloaded
from tests.helpers.asgi_server import AsgiLiveServer
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS
from tests.helpers.escalation import FINANCE_LEADS
from tests.helpers.fake_slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.helpers.processes import API_KEY, free_port, suite_database_url
from tests.helpers.template_database import migrated_template
from tests.helpers.users import make_user


def pytest_collection_modifyitems(items):
    """The long tests run first, so that pytest-xdist shares them out among its workers while the quick ones wait:
    at the end of the run, a worker still busy with a long test would leave the others idle. Long are the tests
    marked so, then those that drive Chromium or start Celery's processes; otherwise the order is pytest's own."""

    def rank(item) -> int:
        if item.get_closest_marker("long"):
            return 0
        if item.get_closest_marker("browser") or "celery_processes" in item.fixturenames:
            return 1
        return 2

    items.sort(key=rank)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, request, tmp_path_factory):
    """pytest-django's test database is a copy of the suite's migrated template (tests/helpers/template_database.py),
    which leaves its ``migrate`` nothing to do, rather than a database migrated from nothing by every process."""
    from django.conf import settings

    if request.config.getvalue("nomigrations") or not settings.DATABASES["default"]["ENGINE"].startswith("tests."):
        return
    _, template = migrated_template(tmp_path_factory)
    settings.DATABASES["default"].setdefault("TEST", {})["TEMPLATE"] = template


@pytest.fixture(autouse=True)
def read_afresh():
    """Each test reads the approval policies, cached values and everything else a process keeps from its own database
    and cache: the last test's are gone."""
    processcache.forget_all()


@pytest.fixture
def platform_state() -> PlatformState:
    return PlatformState()


@pytest.fixture
def simulated_platform(platform_state, settings):
    """A simulated platform served over real HTTP on 127.0.0.1, which the app is configured to use."""
    with PlatformServer(platform_state, host="127.0.0.1", port=0, api_key=API_KEY) as server:
        settings.AGENTOS_URL = server.url
        settings.AGENTOS_API_KEY = API_KEY
        yield server


@pytest.fixture
def platform_client(simulated_platform, settings):
    settings.AGENTOS_READ_TIMEOUT = 2.0
    with platform.PlatformClient.from_settings() as client:
        yield client


@pytest.fixture
def immediate_delivery(settings):
    """No undo window (UNDO_SECONDS=0): a sent decision is delivered at once, for tests about delivery itself."""
    settings.UNDO_SECONDS = 0


@pytest.fixture
def celery_processes(simulated_platform, settings, tmp_path):
    """Start real Celery processes (worker, beat) on Redis against the test database.

    Call the returned function with ``"worker"`` or ``"beat"``; everything it started
    is stopped at the end of the test. Tests using it need
    ``django_db(transaction=True)`` so the processes see the test's rows.
    """
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    started = []
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": suite_database_url(),
        "REDIS_URL": settings.CELERY_BROKER_URL,
        "AGENTOS_URL": simulated_platform.url,
        "AGENTOS_API_KEY": API_KEY,
        "REVIEWQUEUE_VAR_DIR": str(tmp_path),
    }

    def start(kind: str, **extra_env) -> preloaded.Process:
        options = {
            "worker": ["--pool", "solo", "--without-heartbeat", "--without-gossip", "--without-mingle"],
            "beat": [],
        }[kind]
        arguments = ["-A", "reviewqueue", kind, "--loglevel", "INFO", *options]
        process = preloaded.start_module("celery", arguments, {**environment, **extra_env}, tmp_path / f"{kind}.log")
        started.append(process)
        return process

    yield start
    # Killed, not stopped: the test is over, and a warm shutdown only waits out the broker's poll (about 2 s each).
    for process in started:
        process.kill()
    for process in started:
        process.wait()


@pytest.fixture
def alice(db):
    return make_user("alice", roles.REVIEWERS, first_name="Alice", last_name="Adams")


@pytest.fixture
def bob(db):
    return make_user("bob", roles.REVIEWERS, first_name="Bob", last_name="Brown")


@pytest.fixture
def audrey(db):
    return make_user("audrey", roles.AUDITORS)


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def samples(platform_client, platform_state, db):
    """The simulator's sample holds, mirrored: a dict of hold id → Hold."""
    from holds.models import Hold

    platform_state.load_samples()
    sync.sync_env(platform_client, "default")
    return {hold.hold_id: hold for hold in Hold.objects.all()}


@pytest.fixture
def large_refunds(db):
    from approvals.models import ApprovalPolicy

    return ApprovalPolicy.objects.create(
        name="Large refunds",
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=Decimal(500),
        approvals_required=2,
    )


@pytest.fixture
def refund(platform_state, platform_client):
    """A 1,200.00 refund, mirrored from the platform."""
    from holds.models import Hold

    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_big",
            "question": "Refund 1,200.00 on order A-9001?",
            "items": [{"id": "call_1", "title": "Refund A-9001", "data": {"order_id": "A-9001", "amount": "1200.00"}}],
        },
    )
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id="h_big")


@pytest.fixture(scope="session")
def asgi_server():
    """The app under uvicorn, as production may serve it (``reviewqueue.asgi``): every page and its event stream,
    for the tests of live updates. The other browser tests keep pytest-django's WSGI ``live_server``, where the
    stream answers 204 and the pages poll."""
    server = AsgiLiveServer()
    yield server
    server.stop()


@pytest.fixture
def asgi_live_server(asgi_server, transactional_db):
    """``asgi_server`` for one test, as pytest-django's helper readies ``live_server``: a transactional database
    (the server's threads see what the test commits) and its host allowed."""
    asgi_server._live_server_modified_settings.enable()
    yield asgi_server
    asgi_server._live_server_modified_settings.disable()


@pytest.fixture(scope="session")
def playwright():
    """Playwright's driver, once a process: its sync API allows one at a time."""
    # Playwright's sync API keeps an event loop in this thread; Django's guard against
    # database calls from async code would refuse the test's own (synchronous) queries.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as driver:
        yield driver
    del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


@pytest.fixture(scope="session")
def browser(playwright):
    """One Chromium for every browser test a process runs; each test opens contexts of its own on it."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture
def smtp_server():
    """A real SMTP server on 127.0.0.1 that keeps what it receives."""

    class Inbox:
        messages = []

        async def handle_DATA(self, server, session, envelope):
            self.messages.append(email.message_from_bytes(envelope.content))
            return "250 OK"

    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield controller, inbox.messages
    controller.stop()


@pytest.fixture
def mail(smtp_server, settings):
    """Mail sent in this process through SMTP to a real aiosmtpd server; answers its inbox."""
    controller, inbox = smtp_server
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": controller.port, "timeout": 5},
        }
    }
    return inbox


@pytest.fixture
def webhook_receiver():
    """An HTTP receiver on 127.0.0.1 answering the queued statuses (then 200) and keeping each request."""
    received, statuses = [], []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((dict(self.headers), body))
            status = statuses.pop(0) if statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.received, server.statuses = received, statuses
    server.url = f"http://127.0.0.1:{server.server_port}/hook"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def push_service(settings, monkeypatch, tmp_path):
    """A push service on 127.0.0.1 (``tests.helpers.push_service``), with push on: VAPID keys of its own, the
    stand-in's loopback address allowed, and its certificate authority the process's whole trust store."""
    from notifications import push
    from reviewqueue.tls import trust_store
    from tests.helpers.push_service import PushService, vapid_keys

    settings.WEBPUSH_VAPID_PUBLIC_KEY, settings.WEBPUSH_VAPID_PRIVATE_KEY = vapid_keys()
    settings.WEBPUSH_CONTACT = "mailto:operators@example.com"
    settings.WEBPUSH_ALLOWED_NETWORKS = [ipaddress.ip_network("127.0.0.1/32")]
    service = PushService(settings.WEBPUSH_VAPID_PUBLIC_KEY)
    monkeypatch.setenv("SSL_CERT_FILE", service.ca_file(tmp_path))
    trust_store.cache_clear()  # kept for the process, read from the environment just changed
    push.vapid.cache_clear()
    yield service
    service.stop()
    trust_store.cache_clear()
    push.vapid.cache_clear()


@pytest.fixture
def fiona(db):
    return make_user("fiona", FINANCE_LEADS, first_name="Fiona", last_name="Finch")


@pytest.fixture
def gus(db):
    return make_user("gus", FINANCE_LEADS, roles.REVIEWERS)


@pytest.fixture
def fake_slack():
    """A fake Slack on 127.0.0.1 (tests/helpers/fake_slack.py): its Web API and the presses' response_urls."""
    with FakeSlack() as slack:
        yield slack


@pytest.fixture
def slack_app(fake_slack, settings):
    """The Slack app on (its signing secret set), its Web API the fake's; no bot token."""
    settings.SLACK_SIGNING_SECRET = SIGNING_SECRET
    settings.SLACK_API_URL = fake_slack.api_url
    settings.SLACK_BOT_TOKEN = ""
    return fake_slack


@pytest.fixture
def slack_bot(slack_app, settings):
    """The Slack app with a bot token: messages posted and updated by the bot, Reject asking for a reason."""
    settings.SLACK_BOT_TOKEN = BOT_TOKEN
    return slack_app
