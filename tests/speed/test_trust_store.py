"""Outgoing HTTPS loads its trust store once a process, however many clients the syncs, deliveries and webhooks
open, and the tests' forgetting of process caches leaves it."""

import httpx
import pytest

from holds.mirror import platform
from notifications import notify, sending
from notifications.models import Notification, WebhookChannel
from reviewqueue import processcache
from reviewqueue.tls import trust_store

pytestmark = pytest.mark.django_db


def test_clients_of_the_platform_and_of_webhooks_share_one_trust_store_loaded_once(
    samples, webhook_receiver, monkeypatch
):
    loads = []
    load = httpx.create_ssl_context
    monkeypatch.setattr(httpx, "create_ssl_context", lambda: loads.append(1) or load())
    trust_store.cache_clear()
    WebhookChannel.objects.create(name="ops", url=webhook_receiver.url, secret="s3cret", events=["expired"])

    for hold in list(samples.values())[:3]:
        with platform.PlatformClient.from_settings() as client:
            assert client.get_hold("default", hold.hold_id).hold_id == hold.hold_id
        notify.expired([hold])
        processcache.forget_all()
    for notification in Notification.objects.filter(channel="webhook"):
        sending.send(notification.pk)

    assert len(webhook_receiver.received) == 3
    assert len(loads) == 1
