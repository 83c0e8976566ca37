"""Is this request Slack's, and new? The one check every request to the request URL passes before anything is read.

Slack signs each request with the app's signing secret: ``X-Slack-Signature`` is ``v0=`` and the HMAC-SHA256 of
``v0:{X-Slack-Request-Timestamp}:{body}``, checked in constant time by slack_sdk's ``SignatureVerifier``, which also
refuses a timestamp more than 5 minutes off. A request seen once is refused after: its timestamp and signature are
remembered in the cache (Redis), by an atomic add, so two copies racing each other pass once between them, until the
timestamp itself is more than 5 minutes old. Remembered for 5 minutes from first sight instead, a request stamped in
the future (up to 5 minutes ahead is still fresh) would pass again after it was forgotten. Every check fails closed:
a missing secret, a malformed header, a body that is not UTF-8.
"""

from __future__ import annotations

import hashlib
import re
import time

from django.conf import settings
from django.core.cache import cache
from slack_sdk.signature import SignatureVerifier

TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"
SIGNATURE_HEADER = "X-Slack-Signature"
REPLAY_SECONDS = 5 * 60  # the timestamp's own window: a request older than that is refused anyway
TIMESTAMP = re.compile(r"[0-9]{1,12}")
SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


def verified(body: bytes, timestamp: str | None, signature: str | None) -> bool:
    """Whether ``body`` came from Slack, signed with our secret within 5 minutes, and was not seen before."""
    secret = settings.SLACK_SIGNING_SECRET
    if not (secret and isinstance(timestamp, str) and isinstance(signature, str)):
        return False
    if not (TIMESTAMP.fullmatch(timestamp) and SIGNATURE.fullmatch(signature)):
        return False
    try:
        valid = SignatureVerifier(secret).is_valid(body=body, timestamp=timestamp, signature=signature)
    except UnicodeDecodeError:
        return False
    if not valid:
        return False
    fresh_for = int(timestamp) + REPLAY_SECONDS - int(time.time())
    return cache.add(seen_key(timestamp, signature), 1, timeout=max(fresh_for, 0) + 1)


def seen_key(timestamp: str, signature: str) -> str:
    """The cache key that remembers a request by its timestamp and signature."""
    return "slackapp:seen:" + hashlib.sha256(f"{timestamp}:{signature}".encode()).hexdigest()
