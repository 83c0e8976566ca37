"""Mirror the platform's open holds into the database.

One sync of an env lists every open hold, inserts the new ones and updates the
changed ones in bulk, and leaves unchanged ones alone: a hold's payload digest
tells whether anything changed, so the queries do not grow with the number of
unchanged holds. A hold that left the open list is fetched once to record how
it ended; nothing is ever deleted, and a hold closed here is never reopened by a
listing that predates its closing. A failure while listing writes nothing; any
failure is recorded on the env's ``SyncState``.

Two syncs of one env never overlap: each takes a lease on the env's
``SyncState`` row with a compare-and-set update, which works on every database
and expires by itself if a worker dies mid-sync.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
import uuid
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from audit import events as audit_events
from audit.models import EventKind
from holds import expiry, platform
from holds.models import Hold, HoldItem, SyncState
from holds.jsonvalues import UNSTORABLE, scalars, storable

logger = logging.getLogger(__name__)

LEASE = timedelta(minutes=10)

MIRRORED_FIELDS = [
    "run_id",
    "agent",
    "capability",
    "status",
    "question",
    "intent",
    "details",
    "actions",
    "files",
    "created_at",
    "expires_at",
    "last_synced_at",
    "closed_at",
    "decided_by",
    "decided_at",
    "platform_decision",
    "payload",
    "payload_digest",
    "search_text",
]


@dataclasses.dataclass
class SyncResult:
    env: str
    skipped: bool = False
    open: int = 0
    created: int = 0
    updated: int = 0
    closed: int = 0
    error: str = ""


def sync_all(client: platform.PlatformClient, envs: list[str]) -> list[SyncResult]:
    return [sync_env(client, env) for env in envs]


def sync_env(client: platform.PlatformClient, env: str) -> SyncResult:
    """Sync one env, unless another sync of it holds the lease (then ``skipped`` is set)."""
    token = _acquire_lease(env)
    if token is None:
        logger.info("sync of %s skipped: another sync holds the lease", env)
        return SyncResult(env=env, skipped=True)
    started = time.monotonic()
    result = SyncResult(env=env)
    try:
        remote = {hold.hold_id: _storable(hold) for hold in client.open_holds(env)}
        result.open = len(remote)
        result.created, result.updated, vanished = _store_open_holds(env, remote)
        result.closed = _record_vanished_holds(client, env, vanished)
        _confirm_expired_here(client, env)
    except platform.PlatformError as error:
        result.error = str(error)
        logger.warning("sync of %s failed: %s", env, error)
    except Exception as error:  # recorded so the queue warns, then raised for the task's log
        result.error = f"{type(error).__name__}: {error}"
        raise
    finally:
        _finish(env, token, result, duration_ms=int((time.monotonic() - started) * 1000))
    return result


def payload_digest(payload: dict) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _acquire_lease(env: str) -> str | None:
    SyncState.objects.get_or_create(env=env)
    now = timezone.now()
    token = str(uuid.uuid4())
    taken = (
        SyncState.objects.filter(env=env)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(lease_token=token, lease_until=now + LEASE, last_started_at=now)
    )
    return token if taken else None


def _finish(env: str, token: str, result: SyncResult, duration_ms: int) -> None:
    now = timezone.now()
    changes = {"lease_token": "", "lease_until": None, "duration_ms": duration_ms}
    if result.error:
        changes |= {"last_error": result.error, "last_error_at": now, "failing_since": Coalesce("failing_since", Value(now))}
    else:
        changes |= {
            "failing_since": None,
            "last_success_at": now,
            "open_count": result.open,
            "created_count": result.created,
            "updated_count": result.updated,
            "closed_count": result.closed,
        }
    SyncState.objects.filter(env=env, lease_token=token).update(**changes)


def _store_open_holds(env: str, remote: dict[str, platform.Hold]) -> tuple[int, int, list[Hold]]:
    """Insert new and update changed open holds.

    Returns how many were created and updated, and the mirror's open holds that
    the platform no longer lists.
    """
    columns = ("hold_id", "pk", "payload_digest", "status")
    known = {row[0]: row[1:] for row in Hold.objects.filter(env=env, status=Hold.Status.OPEN).values_list(*columns)}
    vanished = [hold_id for hold_id in known if hold_id not in remote]
    unseen = [hold_id for hold_id in remote if hold_id not in known]
    for chunk in _chunks(unseen, 5000):  # closed holds listed again; usually none
        known |= {row[0]: row[1:] for row in Hold.objects.filter(env=env, hold_id__in=chunk).values_list(*columns)}
    now = timezone.now()
    new, changed = [], []
    for hold_id, remote_hold in remote.items():
        digest = payload_digest(remote_hold.raw)
        if hold_id not in known:
            new.append(_mirror(Hold(env=env, first_seen_at=now), remote_hold, digest, now))
            continue
        pk, known_digest, status = known[hold_id]
        if status != Hold.Status.OPEN:
            continue  # closed here (expired, decided) after the platform's listing was made
        if known_digest != digest:
            changed.append(_mirror(Hold(pk=pk, env=env), remote_hold, digest, now))
    with transaction.atomic():
        Hold.objects.bulk_create(new, batch_size=1000)
        Hold.objects.bulk_update(changed, MIRRORED_FIELDS, batch_size=500)
        HoldItem.objects.filter(hold__in=[hold.pk for hold in changed]).delete()
        HoldItem.objects.bulk_create(
            [item for hold in new + changed for item in _items(hold, remote[hold.hold_id])],
            batch_size=2000,
        )
        audit_events.record_many(
            audit_events.Entry(EventKind.HOLD_SEEN, hold=hold, payload={
                "question": hold.question,
                "items": [{"id": item.id, "title": item.title, "data": item.data} for item in remote[hold.hold_id].items],
            })
            for hold in new
        )  # last in the transaction: the audit chain's lock is held only briefly
    return len(new), len(changed), vanished


def _chunks(values: list, size: int):
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _record_vanished_holds(client: platform.PlatformClient, env: str, vanished: list[str]) -> int:
    """Fetch each hold that left the open list once, and record how it ended."""
    closed = 0
    for hold in Hold.objects.filter(env=env, hold_id__in=vanished, status=Hold.Status.OPEN):
        try:
            final = client.get_hold(env, hold.hold_id)
        except platform.NotFound:
            now = timezone.now()
            hold.status, hold.closed_at, hold.last_synced_at = Hold.Status.GONE, now, now
            hold.save(update_fields=["status", "closed_at", "last_synced_at"])
            closed += 1
            continue
        if final.status == Hold.Status.OPEN:
            continue  # opened after the listing began: the next sync sees it listed
        _record_ending(hold, final)
        if hold.status == Hold.Status.EXPIRED:
            expiry.expired_on_platform(hold)
        closed += 1
    return closed


def _confirm_expired_here(client: platform.PlatformClient, env: str) -> None:
    """Ask the platform how each hold our expiry sweep closed really ended (it may have been decided just in time)."""
    unconfirmed = Hold.objects.filter(
        env=env, status=Hold.Status.EXPIRED, expired_here_at__isnull=False, last_synced_at__lt=F("expired_here_at")
    )
    for hold in unconfirmed:
        try:
            final = client.get_hold(env, hold.hold_id)
        except platform.NotFound:
            Hold.objects.filter(pk=hold.pk).update(status=Hold.Status.GONE, last_synced_at=timezone.now())
            continue
        if final.status != Hold.Status.OPEN:  # still open there (clocks differ a little): ask again next time
            _record_ending(hold, final)


def _record_ending(hold: Hold, final: platform.Hold) -> None:
    """Save how a hold ended on the platform, and put an expiry or a decision made elsewhere on the audit trail."""
    audited = {Hold.Status.EXPIRED: EventKind.EXPIRED, Hold.Status.DECIDED: EventKind.DECIDED_ELSEWHERE}
    with transaction.atomic():
        was = hold.status
        record_hold(hold, final)
        if hold.status in audited and hold.status != was:
            audit_events.record(audited[hold.status], hold=hold,
                                payload={"decided_by": hold.decided_by, "decided_at": hold.decided_at})


def record_hold(hold: Hold, remote: platform.Hold) -> None:
    """Save what the platform says of one mirrored hold (after a fetch or a decision's answer)."""
    remote = _storable(remote)
    _mirror(hold, remote, payload_digest(remote.raw), timezone.now())
    with transaction.atomic():
        hold.save(update_fields=MIRRORED_FIELDS)
        hold.items.all().delete()
        HoldItem.objects.bulk_create(_items(hold, remote))


def _storable(remote: platform.Hold) -> platform.Hold:
    """The hold with any NUL or lone surrogate replaced; the same object in the usual case, where there is none."""
    if not UNSTORABLE.search(json.dumps(remote.raw, ensure_ascii=False)):
        return remote
    return platform.parse_hold(storable(remote.raw))


def _mirror(hold: Hold, remote: platform.Hold, digest: str, now) -> Hold:
    """Copy the platform's view of a hold onto a model instance (not saved)."""
    hold.hold_id = remote.hold_id
    hold.run_id = remote.run_id
    hold.agent = remote.agent
    hold.capability = remote.capability
    hold.status = remote.status if remote.status in Hold.Status.values else Hold.Status.OPEN
    hold.question = remote.question
    hold.intent = remote.intent
    hold.details = remote.details
    hold.actions = list(remote.actions)
    hold.files = [dataclasses.asdict(file) for file in remote.files]
    hold.created_at = remote.created_at or hold.first_seen_at or now
    hold.expires_at = remote.expires_at
    hold.last_synced_at = now
    hold.closed_at = None if hold.status == Hold.Status.OPEN else (hold.closed_at or now)
    hold.decided_by = remote.decision.decided_by if remote.decision else ""
    hold.decided_at = remote.decision.decided_at if remote.decision else None
    hold.platform_decision = remote.raw.get("decision")
    hold.payload = remote.raw
    hold.payload_digest = digest
    hold.search_text = search_text(remote)
    return hold


def search_text(remote: platform.Hold) -> str:
    """The hold, run and item ids and every scalar inside the items' data, lower-cased, one a line."""
    values = [remote.hold_id, remote.run_id]
    for item in remote.items:
        values.append(item.id)
        values.extend(scalars(item.data))
    return "\n".join(str(value).lower() for value in values if value not in (None, ""))


def _items(hold: Hold, remote: platform.Hold) -> list[HoldItem]:
    return [
        HoldItem(hold=hold, position=position, item_id=item.id, title=item.title, data=item.data)
        for position, item in enumerate(remote.items)
    ]
