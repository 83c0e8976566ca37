"""The devices a person hears of holds on by Web Push: adding one (its subscription, read strictly), removing one,
and the push services' own answer that one is gone (``prune``). Each is audited as a change to the person's settings.

What a browser's ``PushSubscription.toJSON()`` gives is untrusted input: the endpoint is a URL the worker will
post to, so it must be https on a public address (``destinations.PUSH_SERVICES``: loopback or private addresses
only where ``WEBPUSH_ALLOWED_NETWORKS`` lists them), and the keys must be the sizes RFC 8291 gives them. Nothing
is fetched while reading it: only the host's name is resolved, to check its addresses.
"""

from __future__ import annotations

import binascii

import httpx
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit import events
from audit.events import roles_and_settings
from notifications import destinations, push, push_pacing
from notifications.models import Notification, PushSubscription
from reviewqueue import readers

MAX_ENDPOINT = PushSubscription._meta.get_field("endpoint").max_length  # push services' are a few hundred characters
NAME_LENGTH = PushSubscription._meta.get_field("name").max_length
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
        "p256dh": _point(_key(keys.get("p256dh"), "p256dh", P256DH_BYTES)),
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
        decoded = push.decoded(value)
    except (binascii.Error, ValueError):
        raise readers.BadValue(name, "is not a key in URL-safe base64") from None
    if len(decoded) != size:
        raise readers.BadValue(name, f"a key of {size} bytes is needed")
    return value


def _point(value: str) -> str:
    """The device's public key, which every push is encrypted for: a point of P-256, as every browser's is."""
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), push.decoded(value))
    except ValueError:
        raise readers.BadValue("p256dh", "is not a P-256 public key, as a browser gives") from None
    return value


@transaction.atomic
def add(user, fields: dict[str, str]) -> PushSubscription:
    """Make the device ``fields`` read (``read``) one of ``user``'s. A browser subscribed again keeps its endpoint: the
    row is updated, and moves to ``user`` when someone else had subscribed it before, nothing still to be pushed to
    the previous owner going with it."""
    before = PushSubscription.objects.select_for_update(no_key=True).filter(endpoint=fields["endpoint"]).first()
    if before is not None and before.user_id != user.pk:
        _resolve_pending(before, "the device was subscribed by someone else")
    owned = {**fields, "user": user}
    # Not update_or_create, whose FOR UPDATE would stop a push's foreign-key check at COMMIT; get_or_create for a new
    # endpoint, as a browser subscribing twice at once makes both requests insert it.
    if before is None:
        device, created = PushSubscription.objects.select_for_update(no_key=True).get_or_create(
            endpoint=fields["endpoint"], defaults={**owned, "created_at": timezone.now()}
        )
    else:
        device, created = before, False
    if not created:
        for name, value in owned.items():
            setattr(device, name, value)
        device.save(update_fields=list(owned))
    events.append(_audited(user, device, "added" if created else "changed", f"push notifications on {device.name}"))
    return device


@transaction.atomic
def remove(user, device_id: int) -> PushSubscription | None:
    """Remove one of ``user``'s devices; None when they have no such device."""
    device = PushSubscription.objects.select_for_update(no_key=True).filter(pk=device_id, user=user).first()
    if device is None:
        return None
    _resolve_pending(device, "the device was removed")
    deleted = _audited(user, device, "deleted", f"push notifications on {device.name} removed")
    device.delete()  # before the audit: the audit chain's head comes last
    events.append(deleted)
    return device


@transaction.atomic
def prune(device_id: int, status: int) -> bool:
    """Remove a device its push service answered ``status`` (404 or 410) for: the browser unsubscribed, or the
    subscription expired. False when it was gone already."""
    device = (
        PushSubscription.objects.select_for_update(of=("self",), no_key=True)
        .filter(pk=device_id)
        .select_related("user")
        .first()
    )
    if device is None:
        return False
    _resolve_pending(device, "the device's subscription ended")
    answered = f"push notifications on {device.name} ended: the push service answered {status}"
    deleted = _audited(None, device, "deleted", answered)
    device.delete()  # before the audit: the audit chain's head comes last
    events.append(deleted)
    return True


def test(user, device_id: int) -> tuple[PushSubscription | None, str]:
    """Push a test notification to one of ``user``'s devices now, at most once in its pace (``push_pacing.PACE``):
    the device (None when they have no such device) and what came of it, in words; a device whose subscription
    ended is removed."""
    device = PushSubscription.objects.filter(pk=device_id, user=user).first()
    if device is None:
        return None, ""
    if push_pacing.take_turns([device.pk], timezone.now()):
        return device, f"{device.name} was sent a push moments ago: try again in a few seconds."
    try:
        push.send(device, push.test_content())
    except push.Gone as gone:
        prune(device.pk, gone.status)
        return device, f"{device.name}'s subscription has ended, so it was removed: subscribe it again."
    except (push.Unavailable, push.Refused) as failure:
        return device, f"The test did not reach {device.name}: {failure}."
    return device, ""


def _resolve_pending(device: PushSubscription, reason: str) -> None:
    """What was still to be pushed to ``device`` is resolved with ``reason``, never sent. The notification rows are
    taken before the audit chain's head, as every transaction takes them (see ``notifications.ending``)."""
    Notification.objects.filter(
        push_subscription=device, status=Notification.Status.PENDING, resolved_at__isnull=True
    ).update(resolved_at=timezone.now(), resolved_reason=reason)


def _audited(actor, device: PushSubscription, action: str, message: str) -> events.Entry:
    return roles_and_settings.setting_changed(
        actor=actor,
        model="notifications.pushsubscription",
        object_id=str(device.pk),
        object_repr=f"{device.name} of {device.user.get_username()}",
        action=action,
        message=message,
        # The push service's host: who carries the device's pushes, not the endpoint, which is the device's secret.
        details={"device": device.name, "push_service": httpx.URL(device.endpoint).raw_host.decode("ascii")},
    )
