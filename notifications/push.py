"""Web Push: what one push says, and its delivery to a device's push service (RFC 8030), encrypted for that device
(RFC 8291, by http-ece) and signed with the installation's VAPID key (RFC 8292, by py-vapid).

A push passes through the browser vendor's push service, so by default it carries no agent text: the hold's id,
its agent, its amounts read for certain (one that is not would show the agent's text), and the time left, in fixed
words. ``WEBPUSH_PAYLOAD=summary`` adds the question, cut short.
Its Approve… and Reject… are the hold's one-tap links bound to the person (``hold_links``): each opens the link's
page, where claims, four eyes, team scopes, possible duplicates and the audit apply as for any link; nothing is
decided from the notification itself.

The post goes where ``destinations`` checked, as a webhook's does (``destinations.PUSH_SERVICES``). The answer:
2xx delivered; 404 or 410 ``Gone`` (the device's subscription ended: it is pruned); 429 or 5xx ``Unavailable``
(retried with backoff); anything else ``Refused``. What a failure records is the status and fixed words, never
the push service's answer.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import http_ece
import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.core import checks
from django.urls import reverse
from django.utils import timezone
from py_vapid import Vapid02, VapidException

from notifications import destinations, hold_links, rendering
from notifications.models import Notification, PushSubscription
from reviewqueue import processcache, tls

# A push older than this is worth nothing to a reviewer: the push service may drop it rather than keep it longer.
LONGEST_TTL = timedelta(hours=1)
IN_FLIGHT = 16  # posts under way at once from one batch
UNREACHABLE = "push service unreachable"  # every connection error, whatever its cause, as webhooks say it
VAPID_LIFETIME = timedelta(hours=12)  # RFC 8292 allows at most 24 hours
SUMMARY = "summary"


class Gone(Exception):
    """The push service answered 404 or 410: the device's subscription ended for good."""

    def __init__(self, status: int):
        super().__init__(f"push service answered {status}: the subscription ended")
        self.status = status


class Unavailable(Exception):
    """The push service could not take the push now (429, 5xx, unreachable): retry later."""


class Refused(Exception):
    """The push service refused the push, or it may not be posted there: retrying would not help."""


def payload(
    notification: Notification,
    links: hold_links.ActionLinks | None,
    amounts: list[str],
    folded: int = 0,
    now: datetime | None = None,
) -> dict:
    """What the device is told of ``notification``: its hold's ``links`` for the recipient and ``amounts``
    (``hold_links``), and ``folded`` more holds waiting besides."""
    now = now or timezone.now()
    hold = notification.hold
    label = Notification.Event(notification.event).label
    facts = []
    if hold is not None:
        facts = [hold.agent, *amounts]
        if hold.expires_at:
            facts.append(_time_left(hold.expires_at, now))
    elif notification.holds:
        facts.append(_holds(len(notification.holds)))
    body = " · ".join(filter(None, facts))
    if settings.WEBPUSH_PAYLOAD == SUMMARY and hold is not None:
        body = f"{rendering.short(hold.question)}\n{body}"
    if folded:
        body = f"{body}\n{_holds(folded, more=True)}".strip()
    return {
        "id": notification.pk,
        "event": notification.event,
        "title": f"{label}: hold {hold.pk}" if hold is not None else label,
        "body": body,
        "tag": f"hold-{hold.pk}" if hold is not None else f"notification-{notification.pk}",
        "hold": hold.pk if hold is not None else None,
        "links": {
            "open": links.open if links else notification.link,
            "approve": links.approve if links else None,
            "reject": links.reject if links else None,
        },
    }


def test_content() -> dict:
    """What "Send a test notification" pushes: fixed words, and the queue to open."""
    queue = settings.SITE_URL + reverse("queue")
    return {
        "id": 0,
        "event": "test",
        "title": "Review Queue",
        "body": "A test notification: this device will hear of holds.",
        "tag": "test",
        "hold": None,
        "links": {"open": queue, "approve": None, "reject": None},
    }


def _time_left(expires_at: datetime, now: datetime) -> str:
    minutes = int((expires_at - now).total_seconds() // 60)
    if minutes < 1:
        return "expires now"
    return f"{minutes} min left" if minutes < 120 else f"{minutes // 60} h left"


def _holds(count: int, more: bool = False) -> str:
    more_words = " more" if more else ""
    return f"{count}{more_words} hold{'s' if count != 1 else ''} waiting"


@dataclasses.dataclass(frozen=True)
class Prepared:
    """One push ready to post: where (checked, ``destinations``), its headers and its encrypted body."""

    destination: destinations.Destination
    headers: dict
    body: bytes


def prepare(
    device: PushSubscription, content: dict, expires_at: datetime | None, now: datetime, signatures: dict
) -> Prepared:
    """``content`` encrypted for ``device``, with its headers, to post to the address checked for its push service;
    raises ``Refused`` or ``Unavailable``. ``expires_at``: past it the push is worthless (its TTL). ``signatures``
    keeps each push service's VAPID header for the pushes prepared with it."""
    try:
        destination = destinations.pinned(device.endpoint, destinations.PUSH_SERVICES)
    except destinations.Refused as refused:
        raise Refused(f"not sent: {refused}") from None
    except destinations.Unresolvable:
        raise Unavailable(UNREACHABLE) from None
    ttl = LONGEST_TTL if expires_at is None else min(LONGEST_TTL, max(expires_at - now, timedelta(0)))
    url = httpx.URL(device.endpoint)
    audience = f"{url.scheme}://{url.netloc.decode('ascii')}"
    if audience not in signatures:
        signatures[audience] = _signed(audience, now)
    headers = {
        "Host": destination.host_header,
        "Content-Type": "application/octet-stream",
        "Content-Encoding": "aes128gcm",
        "TTL": str(int(ttl.total_seconds())),
        "Urgency": "high",
        **signatures[audience],
    }
    body = encrypted(device, json.dumps(content, separators=(",", ":")).encode())
    return Prepared(destination, headers, body)


def post_all(prepared: list[Prepared]) -> list[Exception | None]:
    """Post every push, ``IN_FLIGHT`` at a time, over connections kept alive; each one's outcome in order: None when
    delivered, else the ``Gone``, ``Unavailable`` or ``Refused`` it met. Threads, not an event loop: the caller may
    be inside one (an ASGI server's, a test's browser)."""
    if not prepared:
        return []
    # One client per push service's name: a connection is only reused for the name its certificate was checked for.
    clients = {
        name: httpx.Client(trust_env=False, verify=tls.trust_store(), follow_redirects=False)
        for name in {push.destination.server_name for push in prepared}
    }
    try:
        with ThreadPoolExecutor(max_workers=min(IN_FLIGHT, len(prepared))) as posting:
            return list(posting.map(lambda push: _post(clients[push.destination.server_name], push), prepared))
    finally:
        for client in clients.values():
            client.close()


def _post(client: httpx.Client, push: Prepared) -> Exception | None:
    try:
        response = client.post(
            push.destination.url,
            content=push.body,
            headers=push.headers,
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            extensions={"sni_hostname": push.destination.server_name},
        )
    except (httpx.HTTPError, OSError):
        return Unavailable(UNREACHABLE)
    status = response.status_code
    if status in (404, 410):
        return Gone(status)
    if status == 429 or status >= 500:
        return Unavailable(f"push service answered {status}: unavailable")
    if not 200 <= status < 300:
        return Refused(f"push service answered {status}: refused")
    return None


def send(device: PushSubscription, content: dict) -> None:
    """Push ``content`` to one device now (a test notification); raises what ``post_all`` would answer."""
    [outcome] = post_all([prepare(device, content, None, timezone.now(), {})])
    if outcome is not None:
        raise outcome


def encrypted(device: PushSubscription, body: bytes) -> bytes:
    """``body`` encrypted for ``device`` as RFC 8291 says (aes128gcm), with a key of its own for this push."""
    return http_ece.encrypt(
        body,
        private_key=ec.generate_private_key(ec.SECP256R1()),
        dh=decoded(device.p256dh),
        auth_secret=decoded(device.auth),
        version="aes128gcm",
    )


def _signed(audience: str, now: datetime) -> dict[str, str]:
    """The VAPID ``Authorization`` header for a push service at ``audience``."""
    claims = {"aud": audience, "exp": int((now + VAPID_LIFETIME).timestamp()), "sub": settings.WEBPUSH_CONTACT}
    return vapid().sign(claims)


@processcache.kept_for_the_process
def vapid() -> Vapid02:
    """The installation's VAPID key, read from the settings once a process."""
    return Vapid02.from_string(settings.WEBPUSH_VAPID_PRIVATE_KEY)


def decoded(value: str) -> bytes:
    """A key as browsers write it, URL-safe base64 without its padding, as bytes."""
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def check_keys(**kwargs) -> list[checks.CheckMessage]:
    """The VAPID settings, checked at start: both keys or neither, a readable private key, its own public key, and a
    contact the push services accept (mailto: or https:)."""
    public, private = settings.WEBPUSH_VAPID_PUBLIC_KEY, settings.WEBPUSH_VAPID_PRIVATE_KEY
    if not public and not private:
        return []
    if not (public and private):
        problem = "set both WEBPUSH_VAPID_PUBLIC_KEY and WEBPUSH_VAPID_PRIVATE_KEY, or neither"
        return [checks.Error(problem, id="notifications.E001")]
    try:
        key = Vapid02.from_string(private)
        key.sign({"aud": "https://push.example", "sub": settings.WEBPUSH_CONTACT})
    except VapidException:
        problem = "WEBPUSH_CONTACT must be a mailto: address or an https:// URL"
        return [checks.Error(problem, id="notifications.E002")]
    except (ValueError, TypeError):
        problem = "WEBPUSH_VAPID_PRIVATE_KEY cannot be read: `manage.py makevapidkeys` prints a pair"
        return [checks.Error(problem, id="notifications.E003")]
    if public_key_of(key) != public.rstrip("="):
        problem = "WEBPUSH_VAPID_PUBLIC_KEY is not the private key's public key"
        return [checks.Error(problem, id="notifications.E004")]
    return []


def public_key_of(key: Vapid02) -> str:
    """The public key as browsers take it (``applicationServerKey``): the uncompressed point in URL-safe base64."""
    point = key.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(point).decode("ascii").rstrip("=")
