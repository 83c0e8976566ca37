"""Record what one read of one hold found: a hold that left the listing, one our expiry sweep closed, a fresh read
as a reviewer opens it, the platform's answer to a decision.

A hold ended on the platform is closed here as sync closes it (audit, notifications,
an expiry's claim); one still open there is mirrored anew if it changed, unless it
closed here meanwhile.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from audit import events as audit_events
from audit.models import EventKind
from holds.mirror import mirrored, platform
from holds.models import Hold, HoldItem
from holds.sweeps import expiry
from notifications import notify
from reviewqueue import changes

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

    A hold ended there is closed here as sync closes it (audit, notifications, an
    expiry's claim); one still open there is mirrored anew if it changed, unless it
    closed here meanwhile. Returns whether the mirror changed.
    """
    now = timezone.now()
    if remote is None:
        hold.status, hold.closed_at, hold.last_synced_at = Hold.Status.GONE, now, now
        with transaction.atomic():
            hold.save(update_fields=["status", "closed_at", "last_synced_at"])
            _resolve_notifications(hold)
            changes.publish("hold", [hold])
        return True
    if remote.status != Hold.Status.OPEN:
        _record_ending(hold, remote)
        if hold.status == Hold.Status.EXPIRED:
            expiry.expired_on_platform(hold)
        return True
    if mirrored.prepared(remote).digest == hold.payload_digest:
        Hold.objects.filter(pk=hold.pk).update(last_synced_at=now)
        return False
    with transaction.atomic():
        if not Hold.objects.select_for_update().filter(pk=hold.pk, status=Hold.Status.OPEN).exists():
            return False  # closed here (decided, expired) since it was read: left closed
        record_hold(hold, remote)
        changes.publish("hold", [hold])
    return True


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
            Hold.objects.filter(pk=hold.pk).update(status=Hold.Status.GONE, last_synced_at=timezone.now())
            changes.publish("hold", [hold])
            continue
        if final.status != Hold.Status.OPEN:  # still open there (clocks differ a little): ask again next time
            _record_ending(hold, final)


def _record_ending(hold: Hold, final: platform.Hold) -> None:
    """Save how a hold ended on the platform, and put an expiry or a decision made elsewhere on the audit trail."""
    audited = {Hold.Status.EXPIRED: EventKind.EXPIRED, Hold.Status.DECIDED: EventKind.DECIDED_ELSEWHERE}
    with transaction.atomic():
        was = hold.status
        record_hold(hold, final)
        if hold.status != was:
            _resolve_notifications(hold)
        if hold.status in audited and hold.status != was:
            audit_events.record(
                audited[hold.status], hold=hold, payload={"decided_by": hold.decided_by, "decided_at": hold.decided_at}
            )


def _resolve_notifications(hold: Hold) -> None:
    """The platform says the hold ended: resolve what people were asked to act on (see ``notify.resolve_for_holds``)."""
    if hold.status == Hold.Status.DECIDED:
        who = f" by {hold.decided_by}" if hold.decided_by else ""
        notify.resolve_for_holds([hold.pk], notify.RESOLVED_BY_DECISION, f"decided{who} on the platform")
    elif hold.status != Hold.Status.OPEN:
        notify.resolve_for_holds([hold.pk], notify.RESOLVED_BY_CLOSING, hold.get_status_display().lower())


def record_hold(hold: Hold, remote: platform.Hold) -> None:
    """Save what the platform says of one mirrored hold (after a fetch or a decision's answer).

    Should its ids now be past storing, only its status and decision are saved: the
    rest stays as mirrored, so that recording how it ended never fails.
    """
    problem = mirrored.unstorable_ids(remote)
    if problem:
        logger.warning("hold %s: keeping the mirrored ids, as the platform's now cannot be stored: %s", hold, problem)
        mirrored.mirror_ending(hold, mirrored.prepared(remote).hold, timezone.now())
        hold.save(update_fields=mirrored.ENDING_FIELDS)
        changes.publish("hold", [hold])
        return
    listed = mirrored.prepared(remote)
    mirrored.mirror(hold, listed.hold, listed.digest, timezone.now())
    with transaction.atomic():
        hold.save(update_fields=mirrored.MIRRORED_FIELDS)
        hold.items.all().delete()
        HoldItem.objects.bulk_create(mirrored.items_of(hold, listed.hold))
        changes.publish("hold", [hold])
