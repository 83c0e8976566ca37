"""The devices a person hears of holds on by Web Push: adding one (its subscription, read strictly), removing one,
and the push services' own answer that one is gone (``prune``). Each is audited as a change to the person's settings.

What a browser's ``PushSubscription.toJSON()`` gives is untrusted input: the endpoint is a URL the worker will
post to, so it must be https on a public address (``destinations.PUSH_SERVICES``: loopback or private addresses
only where ``WEBPUSH_ALLOWED_NETWORKS`` lists them), and the keys must be the sizes RFC 8291 gives them. Nothing
is fetched while reading it: only the host's name is resolved, to check its addresses.
"""

from __future__ import annotations

import base64
import binascii

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit import events
from audit.events import roles_and_settings
from notifications import destinations
from notifications.models import Notification, PushSubscription
from reviewqueue import readers

MAX_ENDPOINT = 1000  # PushSubscription.endpoint's column; push services' endpoints are a few hundred characters
NAME_LENGTH = 60
MAX_BODY = 16_384  # bytes of the JSON a page sends: an endpoint, two keys and a name, with room to say what is long
P256DH_BYTES = 65  # an uncompressed P-256 point
AUTH_BYTES = 16


def enabled() -> bool:
    """Push is on once both VAPID keys are set."""
    return bool(settings.WEBPUSH_VAPID_PUBLIC_KEY and settings.WEBPUSH_VAPID_PRIVATE_KEY)


def read(data) -> dict[str, str]:
    """The fields of a new device from the JSON a page sent: ``{"name": …, "subscription": {"endpoint": …, "keys":
    {"p256dh": …, "auth": …}}}``. ``readers.BadValue`` names the first field refused and why."""
    if not isinstance(data, dict):
        raise readers.BadValue("subscription", "a device's subscription is needed")
    subscription = data.get("subscription")
    if not isinstance(subscription, dict) or not isinstance(subscription.get("keys"), dict):
        raise readers.BadValue("subscription", "a device's subscription is needed")
    name = _string(data.get("name", ""), "name", NAME_LENGTH) or "This device"
    endpoint = _string(subscription.get("endpoint"), "endpoint", MAX_ENDPOINT)
    if refused := destinations.refusal_on_save(endpoint, destinations.PUSH_SERVICES):
        raise readers.BadValue("endpoint", refused)
    keys = subscription["keys"]
    return {
        "name": name,
        "endpoint": endpoint,
        "p256dh": _key(keys.get("p256dh"), "p256dh", P256DH_BYTES),
        "auth": _key(keys.get("auth"), "auth", AUTH_BYTES),
    }


def _string(value, name: str, max_length: int) -> str:
    if not isinstance(value, str):
        raise readers.BadValue(name, "text is needed")
    return readers.text(value, name, max_length=max_length)


def _key(value, name: str, size: int) -> str:
    """A key in URL-safe base64 that decodes to ``size`` bytes, as the browser gave it."""
    value = _string(value, name, MAX_ENDPOINT)
    try:
        decoded = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise readers.BadValue(name, "is not a key in URL-safe base64") from None
    if len(decoded) != size:
        raise readers.BadValue(name, f"a key of {size} bytes is needed")
    return value


@transaction.atomic
def add(user, fields: dict[str, str]) -> PushSubscription:
    """Make the device ``fields`` read (``read``) one of ``user``'s. A browser subscribed again keeps its endpoint: the
    row is updated, and moves to ``user`` when someone else had subscribed it before."""
    device, created = PushSubscription.objects.update_or_create(
        endpoint=fields["endpoint"],
        defaults={**fields, "user": user},
        create_defaults={**fields, "user": user, "created_at": timezone.now()},
    )
    _audit(user, device, "added" if created else "changed", f"push notifications on {device.name}")
    return device


@transaction.atomic
def remove(user, device_id: int) -> PushSubscription | None:
    """Remove one of ``user``'s devices; None when they have no such device."""
    device = PushSubscription.objects.select_for_update().filter(pk=device_id, user=user).first()
    if device is None:
        return None
    _audit(user, device, "deleted", f"push notifications on {device.name} removed")
    _forget(device, "the device was removed")
    return device


@transaction.atomic
def prune(device_id: int, status: int) -> bool:
    """Remove a device its push service answered ``status`` (404 or 410) for: the browser unsubscribed, or the
    subscription expired. False when it was gone already."""
    device = PushSubscription.objects.select_for_update().filter(pk=device_id).select_related("user").first()
    if device is None:
        return False
    _audit(None, device, "deleted", f"push notifications on {device.name} ended: the push service answered {status}")
    _forget(device, "the device's subscription ended")
    return True


def _forget(device: PushSubscription, reason: str) -> None:
    """Delete ``device``; what was still to be pushed to it is resolved with ``reason``, never sent."""
    Notification.objects.filter(
        push_subscription=device, status=Notification.Status.PENDING, resolved_at__isnull=True
    ).update(resolved_at=timezone.now(), resolved_reason=reason)
    device.delete()


def _audit(actor, device: PushSubscription, action: str, message: str) -> None:
    events.append(
        roles_and_settings.setting_changed(
            actor=actor,
            model="notifications.pushsubscription",
            object_id=str(device.pk),
            object_repr=f"{device.name} of {device.user.get_username()}",
            action=action,
            message=message,
            # The push service's host: who carries the device's pushes, not the endpoint, which is the device's secret.
            details={"device": device.name, "push_service": httpx.URL(device.endpoint).host},
        )
    )
