"""Who may scrape /metrics: a bearer token (``METRICS_TOKEN``) or an address in ``METRICS_ALLOWED_IPS``."""

from __future__ import annotations

import hmac

from django.conf import settings

from reviewqueue import forwarded


def metrics_enabled() -> bool:
    return bool(settings.METRICS_TOKEN or settings.METRICS_ALLOWED_IPS)


def may_scrape(request) -> bool:
    """A matching ``Authorization: Bearer`` token, or a client address inside an allowed network."""
    if settings.METRICS_TOKEN:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), settings.METRICS_TOKEN.encode()):
            return True
    client = forwarded.route(request).client  # the address itself: no need to write it out and read it back
    return client is not None and any(client in network for network in settings.METRICS_ALLOWED_IPS)
