"""Webhooks reach only public addresses and the networks an operator allows, and tell nothing of what they reached.

The suite allows 127.0.0.1/32 (tests/settings.py), where its receivers listen; these
tests take that leave away where they need to.
"""

import contextlib
import datetime
import ipaddress
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse

from audit.models import AuditEvent, EventKind
from notifications import destinations, notify, sending
from notifications.models import Notification, WebhookChannel
from reviewqueue.tls import trust_store

pytestmark = pytest.mark.django_db

LOOPBACK_ONLY = [ipaddress.ip_network("127.0.0.1/32")]
RECEIVERS_BODY = "internal page: root:x:0:0 and the admin token hunter2"


@contextlib.contextmanager
def receiver(
    status: int = 200, body: str = "ok", host: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None
):
    """An HTTP(S) receiver answering ``status`` with ``body``; ``.received`` keeps each request's headers."""
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            received.append(dict(self.headers))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body.encode())))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    if tls:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.received = received
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class RawListener:
    """A bare TCP port that accepts nothing by itself: ``connected()`` says whether anyone knocked."""

    def __init__(self, host: str, port: int):
        self.socket = socket.create_server((host, port))
        self.socket.settimeout(0.3)
        self.port = self.socket.getsockname()[1]

    def connected(self) -> bool:
        try:
            self.socket.accept()[0].close()
        except TimeoutError:
            return False
        return True


@contextlib.contextmanager
def raw_listener(host: str = "127.0.0.1", port: int = 0):
    listener = RawListener(host, port)
    try:
        yield listener
    finally:
        listener.socket.close()


def webhook_to(url: str, samples) -> Notification:
    """A webhook saved as the admin once allowed any URL, and the notification it is owed."""
    WebhookChannel.objects.create(name="ops", url=url, secret="s3cret", events=["expired"])
    notify.expired([samples["h_12"]])
    return Notification.objects.get(channel="webhook")


def sent(notification: Notification) -> Notification:
    sending.send(notification.pk)
    notification.refresh_from_db()
    return notification


# The address policy


@pytest.mark.parametrize(
    "address, kind",
    [
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("2002:7f00:1::", "a loopback address"),  # 6to4 carrying 127.0.0.1
        ("64:ff9b::7f00:1", "a loopback address"),  # NAT64 carrying 127.0.0.1
        ("10.1.2.3", "a private address"),
        ("192.168.0.10", "a private address"),
        ("fd00::1", "a private address"),
        ("fe80::1", "a link-local address"),
        ("169.254.10.10", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("::ffff:169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("224.0.0.1", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("100.64.0.1", "an address that is not public"),
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
    ],
)
def test_only_public_addresses_may_be_reached(address, kind, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = []

    assert destinations.refusal(ipaddress.ip_address(address)) == kind


def test_an_operator_may_allow_a_network_but_never_the_metadata_service(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("169.254.0.0/16")]

    assert destinations.refusal(ipaddress.ip_address("10.20.30.40")) is None
    assert destinations.refusal(ipaddress.ip_address("::ffff:10.20.30.40")) is None
    assert destinations.refusal(ipaddress.ip_address("169.254.1.1")) is None
    assert destinations.refusal(ipaddress.ip_address("169.254.169.254")) == "a cloud metadata address"
    assert destinations.refusal(ipaddress.ip_address("192.168.1.1")) == "a private address"


# At save time: a field error in the admin


def webhook_form(url: str) -> dict:
    return {"name": "ops", "url": url, "format": "slack", "secret": "s3cret", "events": ["expired"], "active": "on"}


@pytest.mark.parametrize(
    "url, kind",
    [
        ("http://127.0.0.1:8080/hook", "a loopback address"),
        ("http://localhost:8080/hook", "a loopback address"),
        ("http://[::ffff:127.0.0.1]/hook", "a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
        ("http://[fd00::1]/hook", "a private address"),
        ("http://10.0.0.7/hook", "a private address"),
        ("http://[fe80::1]/hook", "a link-local address"),
        ("http://0.0.0.0:9/hook", "an unspecified address"),
        ("http://224.0.0.1/hook", "a multicast address"),
        ("ftp://hooks.example.com/hook", "starts with http:// or https://"),
    ],
)
def test_the_admin_refuses_a_webhook_that_would_reach_inside(admin_client, settings, url, kind):
    settings.WEBHOOK_ALLOWED_NETWORKS = []

    response = admin_client.post(reverse("admin:notifications_webhookchannel_add"), webhook_form(url))

    assert response.status_code == 200
    assert kind in " ".join(response.context["adminform"].form.errors["url"])
    assert not WebhookChannel.objects.exists()


def test_the_admin_saves_a_webhook_to_a_public_address_or_an_allowed_network(admin_client, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = [ipaddress.ip_network("10.5.0.0/16")]
    add = reverse("admin:notifications_webhookchannel_add")

    public = admin_client.post(add, webhook_form("https://8.8.8.8/hook"))
    relay = admin_client.post(add, webhook_form("http://10.5.0.9:8080/relay") | {"name": "relay"})

    assert public.status_code == relay.status_code == 302
    assert set(WebhookChannel.objects.values_list("name", flat=True)) == {"ops", "relay"}


# At send time: nothing connects


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "2130706433", "[::ffff:127.0.0.1]"])
def test_a_webhook_to_a_refused_address_connects_to_nothing(samples, settings, host):
    """Saved before the guard, or as a name that resolved elsewhere then: the send refuses it all the same."""
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    with raw_listener() as listener:
        notification = sent(webhook_to(f"http://{host}:{listener.port}/hook", samples))

        assert not listener.connected()
    assert notification.status == "failed"
    assert notification.last_error == (
        "not sent: the webhook's host resolves to a loopback address, which webhooks may not reach "
        "unless WEBHOOK_ALLOWED_NETWORKS allows it"
    )
    assert WebhookChannel.objects.get().failing


def test_a_name_is_resolved_once_and_the_post_goes_to_the_address_checked(samples, monkeypatch):
    """DNS rebinding: the name answers an allowed address to the check, then another; only the first is reached."""
    real_getaddrinfo = socket.getaddrinfo
    asked = []

    def rebinding(host, port, *args, **kwargs):
        if host != "rebinding.test":
            return real_getaddrinfo(host, port, *args, **kwargs)
        asked.append(host)
        answer = "127.0.0.1" if len(asked) == 1 else "127.0.0.2"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with receiver() as checked, raw_listener("127.0.0.2", checked.server_port) as elsewhere:
        notification = sent(webhook_to(f"http://rebinding.test:{checked.server_port}/hook", samples))

        assert not elsewhere.connected()
    assert notification.status == "sent"
    assert asked == ["rebinding.test"]
    assert checked.received[0]["Host"] == f"rebinding.test:{checked.server_port}"


def self_signed(tmp_path, name: str) -> tuple[str, str]:
    """A certificate for ``name`` (its own issuer) and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_file), str(key_file)


@pytest.fixture
def trusting(monkeypatch):
    """Make one certificate file the process's whole trust store, and forget that store after the test."""

    def trust(cert_file):
        monkeypatch.setenv("SSL_CERT_FILE", cert_file)
        trust_store.cache_clear()  # it is kept for the process, read from the environment just changed

    yield trust
    trust_store.cache_clear()


def test_over_https_the_checked_address_is_reached_with_the_names_sni_and_certificate(
    samples, monkeypatch, tmp_path, trusting
):
    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, port, *args, **kwargs: (
            [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
            if host == "hooks.test"
            else real_getaddrinfo(host, port, *args, **kwargs)
        ),
    )
    cert_file, key_file = self_signed(tmp_path, "hooks.test")
    trusting(cert_file)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert_file, key_file)
    server_names = []
    tls.sni_callback = lambda connection, server_name, context: server_names.append(server_name)

    with receiver(tls=tls) as hooks:
        notification = sent(webhook_to(f"https://hooks.test:{hooks.server_port}/hook", samples))

    assert notification.status == "sent"
    assert server_names == ["hooks.test"]
    assert hooks.received[0]["Host"] == f"hooks.test:{hooks.server_port}"


# What a failure records: a status and fixed words


@pytest.mark.parametrize(
    "status, outcome, recorded",
    [
        (403, "failed", "webhook answered 403: refused"),
        (404, "failed", "webhook answered 404: refused"),
        (302, "failed", "webhook answered 302: a redirect, not followed"),
        (503, "pending", "webhook answered 503: unavailable"),
    ],
)
def test_a_failed_delivery_records_the_status_never_the_receivers_body(samples, status, outcome, recorded):
    with receiver(status=status, body=RECEIVERS_BODY) as hooks:
        notification = sent(webhook_to(f"http://127.0.0.1:{hooks.server_port}/hook", samples))

    assert (notification.status, notification.last_error) == (outcome, recorded)
    assert [attempt.message for attempt in notification.attempts_made.all()] == [recorded]
    webhook = WebhookChannel.objects.get()
    assert webhook.last_error == (recorded if outcome == "failed" else "")
    failures = AuditEvent.objects.filter(kind=EventKind.NOTIFICATION_FAILED)
    assert [event.payload["error"] for event in failures] == ([recorded] if outcome == "failed" else [])
    assert not AuditEvent.objects.filter(payload__icontains="hunter2").exists()


@contextlib.contextmanager
def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield port


@contextlib.contextmanager
def hanging_up_port():
    """Accepts each connection and closes it without a word."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        listener.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                listener.accept()[0].close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()


@contextlib.contextmanager
def silent_port():
    """Accepts connections and never answers."""
    with raw_listener() as listener:
        yield listener.port


@pytest.mark.parametrize("port_that", [closed_port, hanging_up_port, silent_port], ids=["closed", "hangs up", "silent"])
def test_any_connection_error_is_recorded_as_one_word(samples, settings, port_that):
    """Closed, open and hanging up, or open and silent: the record cannot tell the ports apart."""
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    with port_that() as port:
        notification = sent(webhook_to(f"http://127.0.0.1:{port}/hook", samples))

    assert (notification.status, notification.last_error) == ("pending", "unreachable")
    assert [attempt.message for attempt in notification.attempts_made.all()] == ["unreachable"]
