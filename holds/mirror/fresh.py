"""A fresh read of one hold where it matters: as a reviewer opens its page, and before their decision is stored,
whatever the channel (the page's confirm, the API, a Slack press).

The mirror learns of a hold decided, cancelled or changed elsewhere only when the
reconciling walk reaches it (``sync.keep_up``), minutes later. A mirror older than
``FRESH_FOR`` is read again from the platform (``GET /holds/{id}``), one request
with a short timeout; a hold ended there is recorded as sync records it, so the page
shows it ended and offers no form. A slow or failing platform costs the reviewer at
most the timeout: the page then shows the mirror as it is.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from holds.mirror import platform, single_read
from holds.models import Hold

logger = logging.getLogger(__name__)

FRESH_FOR = timedelta(seconds=5)  # a mirror younger than this is shown as it is
CONNECT_TIMEOUT = 1.0
READ_TIMEOUT = 1.5  # seconds a reviewer may wait for the platform before the mirror is shown


def refresh(hold: Hold) -> bool:
    """Read ``hold`` from the platform when it is open in a mirror older than ``FRESH_FOR``, and record what the
    platform says (``single_read.record_read``). Returns whether the mirror changed: then the caller reads the hold
    again."""
    if hold.status != Hold.Status.OPEN or hold.last_synced_at > timezone.now() - FRESH_FOR:
        return False
    try:
        with platform.PlatformClient(
            settings.AGENTOS_URL,
            settings.AGENTOS_API_KEY,
            connect_timeout=min(CONNECT_TIMEOUT, settings.AGENTOS_CONNECT_TIMEOUT),
            read_timeout=min(READ_TIMEOUT, settings.AGENTOS_READ_TIMEOUT),
        ) as client:
            remote = client.get_hold(hold.env, hold.hold_id)
    except platform.NotFound:
        remote = None
    except platform.PlatformError as error:  # unavailable, slow, malformed: the mirror is shown as it is
        logger.info("fresh read of hold %s skipped: %s", hold, error)
        return False
    return single_read.record_read(hold, remote)
