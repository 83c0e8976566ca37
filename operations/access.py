"""Who may scrape /metrics: a bearer token (``METRICS_TOKEN``) or an address in ``METRICS_ALLOWED_IPS``."""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings

from reviewqueue.forwarded import client_ip


def metrics_enabled() -> bool:
    return bool(settings.METRICS_TOKEN or settings.METRICS_ALLOWED_IPS)


def may_scrape(request) -> bool:
    """A matching ``Authorization: Bearer`` token, or a client address inside an allowed network."""
    if settings.METRICS_TOKEN:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), settings.METRICS_TOKEN.encode()):
            return True
    address = client_ip(request)
    if address is None or not settings.METRICS_ALLOWED_IPS:
        return False
    client = ipaddress.ip_address(address)
    return any(client in network for network in settings.METRICS_ALLOWED_IPS)
