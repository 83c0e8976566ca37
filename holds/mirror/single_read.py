"""Record what one read of one hold found: a hold that left the listing, one our expiry sweep closed, a fresh read
as a reviewer opens it.

What each finds is written by the hold's life's actions (``holds.lifecycle``).
"""

from __future__ import annotations

import logging

from django.db.models import F
from django.utils import timezone

from holds import lifecycle
from holds.mirror import mirrored, platform
from holds.models import Hold

logger = logging.getLogger(__name__)


def record_vanished(client: platform.PlatformClient, env: str, vanished: list[str]) -> int:
    """Fetch each hold that left the open list once, and record how it ended."""
    closed = 0
    for hold in Hold.objects.filter(env=env, hold_id__in=vanished, status=Hold.Status.OPEN):
        try:
            final = client.get_hold(env, hold.hold_id)
        except platform.MalformedHold as error:
            logger.warning(
                "sync of %s: hold %s left the open list, but its end cannot be read: %s", env, hold.hold_id, error
            )
            continue  # asked again next sync
        except platform.NotFound:
            final = None
        if final is not None and final.status == Hold.Status.OPEN:
            continue  # opened after the listing began: the next sync sees it listed
        record_read(hold, final)
        closed += 1
    return closed


def record_read(hold: Hold, remote: platform.Hold | None) -> bool:
    """Record what one read of a hold open in the mirror found (``remote``; None: the platform has no such hold).

    A hold ended there is closed here as sync closes it (``lifecycle.close``); one still
    open there is mirrored anew if it changed, unless it closed here meanwhile. Returns
    whether the mirror changed.
    """
    if remote is None:
        lifecycle.close_gone(hold)
        return True
    if remote.status != Hold.Status.OPEN:
        lifecycle.close(hold, remote)
        return True
    if mirrored.prepared(remote).digest == hold.payload_digest:
        Hold.objects.filter(pk=hold.pk).update(last_synced_at=timezone.now())
        return False
    return lifecycle.record_changed(hold, remote)


def confirm_expired_here(client: platform.PlatformClient, env: str) -> None:
    """Ask the platform how each hold our expiry sweep closed really ended (it may have been decided just in time)."""
    unconfirmed = Hold.objects.filter(
        env=env, status=Hold.Status.EXPIRED, expired_here_at__isnull=False, last_synced_at__lt=F("expired_here_at")
    )
    for hold in unconfirmed:
        try:
            final = client.get_hold(env, hold.hold_id)
        except platform.MalformedHold as error:
            logger.warning("sync of %s: the end of hold %s cannot be read: %s", env, hold.hold_id, error)
            continue  # asked again next sync
        except platform.NotFound:
            lifecycle.close_gone(hold)
            continue
        if final.status != Hold.Status.OPEN:  # still open there (clocks differ a little): ask again next time
            lifecycle.close(hold, final)
