"""Write what sync listed into the mirror: new holds by COPY, changed ones in bulk, the unstorable to quarantine.

Writes go in batches of ``WRITE_BATCH`` holds, each in its own transaction with
the holds' items and the new holds' audit events, so that memory stays bounded
and the audit chain's head is locked only briefly. On PostgreSQL new holds, their
items and their ``hold_seen`` events are written with COPY, which costs a fraction
of INSERT's time per row; the rows are the ones the ORM would write (the audit
trail's come from ``audit.events.copying``, chain included). Changed holds are
few and are updated through the ORM.

One bad hold stops no other. Text the database cannot hold is made storable
(``jsonvalues.storable``); a hold that breaks the contract (``platform.UnreadableHold``)
or that no column here can hold as it is, such as an id too long to index, goes
to quarantine (``QuarantinedHold``) instead, checked in Python before the bulk
write. Should the database still refuse a batch, its holds are written one by
one, each in its own transaction, and those it refuses join the quarantine.
"""

from __future__ import annotations

import hashlib
import logging
import operator
from typing import NamedTuple

from django.db import DatabaseError, DataError, IntegrityError, connection, transaction
from django.utils import timezone

from audit import events as audit_events
from audit.models import AuditEvent, EventKind
from holds.mirror import mirrored, platform
from holds.models import Hold, HoldItem, QuarantinedHold
from holds.queue import filter_values as queue_filter_values
from reviewqueue import changes
from reviewqueue.jsonvalues import storable
from reviewqueue.sql import writes

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
    """Insert or update the holds with their items, in one transaction with the new holds' audit events.

    Returns the writes made: a changed hold that was closed here (by the expiry sweep,
    say) since the open holds were read is left closed.
    """
    now = timezone.now()
    new = [remote[w.hold_id] for w in writes if w.pk is None]
    with transaction.atomic():
        writes = _still_open(writes)
        changed = [
            mirrored.mirror(Hold(pk=w.pk, env=env), remote[w.hold_id].hold, remote[w.hold_id].digest, now)
            for w in writes
            if w.pk is not None
        ]
        if changed:
            Hold.objects.bulk_update(changed, mirrored.MIRRORED_FIELDS, batch_size=500)
            HoldItem.objects.filter(hold__in=[hold.pk for hold in changed]).delete()
            items = [item for hold in changed for item in mirrored.items_of(hold, remote[hold.hold_id].hold)]
            HoldItem.objects.bulk_create(items, batch_size=2000)
        if new:  # last in the transaction, as they end with the audit events: the chain's lock is held only briefly
            (_copy_new_holds if _inserts_by_copy() else _create_new_holds)(env, new, now)
        # The new holds' ids are not read back: their pages are not open yet, and the queue needs only their scope.
        arrived = [_Arrived(None, env, listed.hold.agent, listed.hold.capability) for listed in new]
        changes.publish("hold", changed + arrived)
    return writes


class _Arrived(NamedTuple):
    """What ``changes.publish`` reads of a new hold, without the cost of a model instance each."""

    pk: None
    env: str
    agent: str
    capability: str


def _still_open(writes: list[_Write]) -> list[_Write]:
    """The writes without the updates of holds no longer open, whose rows stay locked until the transaction ends.

    The lock keeps the expiry sweep and a decision from closing a hold between this
    check and its update, which would reopen it.
    """
    updated = [write.pk for write in writes if write.pk is not None]
    if not updated:
        return writes
    locked = Hold.objects.select_for_update().filter(pk__in=updated, status=Hold.Status.OPEN).order_by("pk")
    still_open = set(locked.values_list("pk", flat=True))
    return [write for write in writes if write.pk is None or write.pk in still_open]


def _inserts_by_copy() -> bool:
    """Whether new holds are written with COPY: PostgreSQL's; SQLite, for trying the app, goes through the ORM."""
    return connection.vendor == "postgresql"


def _create_new_holds(env: str, new: list[mirrored.Listed], now) -> None:
    """Insert new holds, their items and their ``hold_seen`` events through the ORM."""
    holds = [mirrored.mirror(Hold(env=env, first_seen_at=now), listed.hold, listed.digest, now) for listed in new]
    Hold.objects.bulk_create(holds, batch_size=1000)
    pairs = list(zip(holds, new, strict=True))
    items = [item for hold, listed in pairs for item in mirrored.items_of(hold, listed.hold)]
    HoldItem.objects.bulk_create(items, batch_size=2000)
    audit_events.record_many(_seen(hold, listed.hold) for hold, listed in pairs)


COPIED_HOLD_COLUMNS = ("id", "env", "first_seen_at", "hold_id", *mirrored.MIRRORED_FIELDS)
JSON_HOLD_COLUMNS = frozenset({"actions", "files", "platform_decision"})  # and the payload, dumped already
ITEM_COLUMNS = ("hold_id", "position", "item_id", "title", "data")


def _copy_new_holds(env: str, new: list[mirrored.Listed], now) -> None:
    """Insert new holds, their items and their ``hold_seen`` events with COPY: the rows ``_create_new_holds`` writes.

    Each table's rows are made as its COPY asks for them, so that the database
    files the rows before (in its indexes) while the next are made.
    """
    # Columns sync does not mirror (claims, digests, any added later) get their defaults, as bulk_create gives them.
    template = Hold(env=env, first_seen_at=now)
    defaults = {
        field.column: field.get_db_prep_save(field.pre_save(template, add=True), connection)
        for field in Hold._meta.concrete_fields
        if field.column not in COPIED_HOLD_COLUMNS
    }
    default_values = tuple(defaults.values())
    copied_values = operator.itemgetter(*COPIED_HOLD_COLUMNS)
    ids = writes.new_ids(Hold, len(new))
    items, seen = [], []

    def hold_rows():
        for pk, (remote, digest, canonical) in zip(ids, new, strict=True):
            columns = {"id": pk, "env": env, "first_seen_at": now}
            columns |= mirrored.fields_of(remote, digest, now, first_seen_at=now, closed_at=None)
            for name in JSON_HOLD_COLUMNS:
                columns[name] = writes.json_text(columns[name])
            columns["payload"] = canonical  # the JSON of the digest: valid JSON of the same value
            items.extend(
                (pk, position, item.id, item.title, writes.json_text(item.data))
                for position, item in enumerate(remote.items)
            )
            seen.append(_seen(_SeenHold(pk, env, remote.hold_id, remote.run_id, remote.agent), remote))
            yield copied_values(columns) + default_values

    writes.copy(Hold, (*COPIED_HOLD_COLUMNS, *defaults), hold_rows())
    writes.copy(HoldItem, ITEM_COLUMNS, items)
    with audit_events.copying(seen) as audit_rows:
        writes.copy(AuditEvent, audit_events.COPY_COLUMNS, audit_rows)


class _SeenHold(NamedTuple):
    """What the audit trail reads of a hold (``audit.events.Entry.hold``), for a hold written without a model
    instance."""

    pk: int
    env: str
    hold_id: str
    run_id: str
    agent: str


def _seen(hold, remote: platform.Hold) -> audit_events.Entry:
    """The ``hold_seen`` event of a new hold (made storable, as ``mirrored.prepared`` makes it: its payload is
    clean)."""
    return audit_events.Entry(
        EventKind.HOLD_SEEN,
        hold=hold,
        clean=True,
        payload={
            "question": remote.question,
            "items": [{"id": item.id, "title": item.title, "data": item.data} for item in remote.items],
        },
    )


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
        row.hold_id = storable(_shortened(hold.hold_id))
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


def _shortened(text: str, limit: int = platform.EXCERPT_LENGTH) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def chunks(values: list, size: int):
    for start in range(0, len(values), size):
        yield values[start : start + size]
