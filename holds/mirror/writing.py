"""Write what sync listed into the mirror: new holds by COPY, changed ones in bulk, the unstorable to quarantine.

Writes go in batches of ``WRITE_BATCH`` holds, each in its own transaction with
the holds' items and the new holds' audit events, so that memory stays bounded
and the audit chain's head is locked only briefly. On PostgreSQL new holds, their
items and their ``hold_seen`` events are written with COPY, which costs a fraction
of INSERT's time per row; the rows are the ones the ORM would write (the audit
trail's come from ``audit.events.copying``, chain included). Changed holds are
few and are updated through the ORM.

One bad hold stops no other. Text the database cannot hold is made storable
(``agent_json.storable``); a hold that breaks the contract (``platform.UnreadableHold``)
or that no column here can hold as it is, such as an id too long to index, goes
to quarantine (``QuarantinedHold``) instead, checked in Python before the bulk
write. Should the database still refuse a batch, its holds are written one by
one, each in its own transaction, and those it refuses join the quarantine.
"""

from __future__ import annotations

import hashlib
import logging
from typing import NamedTuple

from django.db import DatabaseError, DataError, IntegrityError
from django.utils import timezone

from holds import lifecycle
from holds.mirror import mirrored, platform
from holds.models import Hold, QuarantinedHold
from holds.queue import filter_values as queue_filter_values
from reviewqueue.agent_json import storable
from reviewqueue.showing import shortened

logger = logging.getLogger(__name__)

WRITE_BATCH = 1000  # holds written per transaction
# Errors by which the database refuses a value, not fails: data exceptions, integrity
# violations, program limits (an index entry too large).
REFUSING_SQLSTATE_CLASSES = ("22", "23", "54")


def refresh_filter_values(env: str) -> None:
    """Make the filters offer the agents and capabilities of the env's open holds, as the mirror has them."""
    open_holds = Hold.objects.filter(env=env, status=Hold.Status.OPEN).order_by()
    queue_filter_values.replace_filter_values(env, set(open_holds.values_list("agent", "capability").distinct()))


def partition_storable(
    listed: list[platform.Hold | platform.UnreadableHold],
) -> tuple[dict[str, mirrored.Listed], list[platform.UnreadableHold]]:
    """The listed holds that can be stored, by hold id, and those that cannot."""
    remote, unreadable = {}, []
    for hold in listed:
        if isinstance(hold, platform.Hold):
            problem = mirrored.unstorable_ids(hold)
            if problem is None:
                remote[hold.hold_id] = mirrored.prepared(hold)
                continue
            hold = platform.UnreadableHold.of(hold.raw, problem)
        unreadable.append(hold)
    return remote, unreadable


KNOWN_COLUMNS = ("hold_id", "pk", "payload_digest", "status")


def known_holds(env: str, hold_ids: list[str]) -> dict[str, tuple[int, str, str]]:
    """The mirrored holds of ``hold_ids``, in any status: (pk, payload digest, status) by hold id."""
    known = {}
    for chunk in chunks(hold_ids, 5000):
        known |= {
            row[0]: row[1:] for row in Hold.objects.filter(env=env, hold_id__in=chunk).values_list(*KNOWN_COLUMNS)
        }
    return known


def store_listed(
    env: str, remote: dict[str, mirrored.Listed], known: dict[str, tuple[int, str, str]]
) -> tuple[int, int, list[platform.UnreadableHold]]:
    """Insert the listed holds not ``known`` and update the open ones whose payload changed.

    Returns how many were created and updated, and the holds the database refused.
    """
    writes = []
    for hold_id, remote_hold in remote.items():
        if hold_id not in known:
            writes.append(_Write(hold_id, None))
            continue
        pk, known_digest, status = known[hold_id]
        if status != Hold.Status.OPEN:
            continue  # closed here (expired, decided) after the platform's listing was made
        if known_digest != remote_hold.digest:
            writes.append(_Write(hold_id, pk))
    written, refused = [], []
    for batch in chunks(writes, WRITE_BATCH):
        batch_written, batch_refused = write_batch(env, remote, batch)
        written += batch_written
        refused += batch_refused
    return _count_new(written), len(written) - _count_new(written), refused


class _Write(NamedTuple):
    """A hold to insert (``pk`` None) or update."""

    hold_id: str
    pk: int | None


def _count_new(writes: list[_Write]) -> int:
    return sum(1 for write in writes if write.pk is None)


def write_batch(
    env: str, remote: dict[str, mirrored.Listed], writes: list[_Write]
) -> tuple[list[_Write], list[platform.UnreadableHold]]:
    """Write a batch in one transaction or, should the database refuse it, hold by hold; returns what was written and
    refused."""
    try:
        return _write(env, remote, writes), []
    except DatabaseError as error:
        if not _refused(error):
            raise
        logger.warning("sync of %s: the database refused a bulk write (%s); writing hold by hold", env, error)
    written, refused = [], []
    for write in writes:
        try:
            written += _write(env, remote, [write])
        except DatabaseError as error:
            if not _refused(error):
                raise
            reason = "the database refused it: " + str(error).strip().splitlines()[0]
            refused.append(platform.UnreadableHold.of(remote[write.hold_id].hold.raw, reason))
    return written, refused


def _write(env: str, remote: dict[str, mirrored.Listed], writes: list[_Write]) -> list[_Write]:
    """Insert or update the holds of ``writes`` (``lifecycle.mirror_listed``); returns the writes made."""
    new = [remote[write.hold_id] for write in writes if write.pk is None]
    changed = {write.pk: remote[write.hold_id] for write in writes if write.pk is not None}
    updated = lifecycle.mirror_listed(env, new, changed)
    return [write for write in writes if write.pk is None or write.pk in updated]


def _refused(error: DatabaseError) -> bool:
    """Whether the database refused a value (as opposed to failing, e.g. losing its connection)."""
    sqlstate = getattr(error.__cause__, "sqlstate", None) or ""
    return isinstance(error, DataError | IntegrityError) or sqlstate[:2] in REFUSING_SQLSTATE_CLASSES


def quarantine(env: str, unreadable: list[platform.UnreadableHold], whole_listing: bool = True) -> int:
    """Keep one quarantine row per hold that could not be mirrored and, given the ``whole_listing``, drop the rows
    of the others.

    Returns how many holds of ``unreadable`` are in quarantine. With none, as usual, that costs one read.
    """
    now = timezone.now()
    entries = {_quarantine_key(hold): hold for hold in unreadable}
    known = {row.key: row for row in QuarantinedHold.objects.filter(env=env).only("key", "times_seen")}
    gone = [row.pk for key, row in known.items() if key not in entries]
    if gone and whole_listing:
        QuarantinedHold.objects.filter(pk__in=gone).delete()
    known = {key: row for key, row in known.items() if key in entries}
    new = []
    for key, hold in entries.items():
        row = known.get(key) or QuarantinedHold(env=env, key=key, first_seen_at=now, times_seen=0)
        row.hold_id = storable(shortened(hold.hold_id, platform.EXCERPT_LENGTH))
        row.reason, row.excerpt = storable(hold.reason), storable(hold.excerpt)
        row.last_seen_at, row.times_seen = now, row.times_seen + 1
        if row.pk is None:
            new.append(row)
            logger.warning("sync of %s: hold %r quarantined: %s", env, row.hold_id, row.reason)
    QuarantinedHold.objects.bulk_create(new)
    QuarantinedHold.objects.bulk_update(
        list(known.values()), ["hold_id", "reason", "excerpt", "last_seen_at", "times_seen"]
    )
    return len(entries)


def _quarantine_key(hold: platform.UnreadableHold) -> str:
    identity = f"id:{hold.hold_id}" if hold.hold_id else f"excerpt:{hold.excerpt}"
    return hashlib.sha256(identity.encode(errors="surrogatepass")).hexdigest()


def chunks(values: list, size: int):
    for start in range(0, len(values), size):
        yield values[start : start + size]
