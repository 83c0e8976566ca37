"""Mirror the platform's open holds into the database.

One sync of an env lists every open hold, inserts the new ones and updates the
changed ones in bulk, and leaves unchanged ones alone: a hold's payload digest
tells whether anything changed, so the queries do not grow with the number of
unchanged holds. A hold that left the open list is fetched once to record how
it ended; nothing is ever deleted, and a hold closed here is never reopened by a
listing that predates its closing. A failure while listing closes nothing (what
was listed before it is written, as the batches arrive); any failure is recorded
on the env's ``SyncState``, with whose fault it was.

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
one, each in its own transaction, and those it refuses join the quarantine. The
usual sync, with nothing in quarantine, pays nothing for this: whether the env
has quarantined holds comes with the read of its sync state.

Every interval, ``keep_up`` lists only the tail of the listing: from the cursor of
its last page, kept on the env's ``SyncState`` (the [assumed] property that lets it
is in ``platform.Page``), which answers that page's holds and every new one, in one
or two requests however many are open. Holds that end or change elsewhere are found
by the reconciling walk: the whole listing, walked a few pages each interval so that
one walk takes about ``SYNC_RECONCILE_MINUTES``; the mirrored open holds it did not
list (``ListedInWalk`` keeps those it did) have left. ``sync_env`` walks the whole
listing at once, as the first sync does and as a refused cursor makes the next do.

Two syncs of one env never overlap: each takes a lease on the env's
``SyncState`` row with a compare-and-set update, which works on every database
and expires by itself if a worker dies mid-sync.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import operator
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import DatabaseError, DataError, IntegrityError, connection, transaction
from django.db.models import Exists, F, OuterRef, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from audit import events as audit_events
from audit.models import AuditEvent, EventKind
from holds import signals
from holds.mirror import amounts, platform
from holds.models import Hold, HoldItem, ListedInWalk, QuarantinedHold, SyncState
from holds.queue import filter_values as queue_filter_values
from holds.sweeps import expiry
from notifications import notify
from reviewqueue import changes, readahead
from reviewqueue.jsonvalues import UNSTORABLE, may_need_storable, scalars, storable
from reviewqueue.sql import writes

logger = logging.getLogger(__name__)

LEASE = timedelta(minutes=10)
WRITE_BATCH = 1000  # holds written per transaction
# The longest id kept in an indexed column: a PostgreSQL btree entry holds at most
# 2,704 bytes, and 500 characters take at most 2,000 in UTF-8 (with the env beside it).
MAX_INDEXED_LENGTH = 500
# Errors by which the database refuses a value, not fails: data exceptions, integrity
# violations, program limits (an index entry too large).
REFUSING_SQLSTATE_CLASSES = ("22", "23", "54")

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
    "amount",
]


@dataclasses.dataclass
class SyncResult:
    env: str
    skipped: bool = False
    open: int = 0
    created: int = 0
    updated: int = 0
    closed: int = 0
    quarantined: int = 0
    error: str = ""
    error_source: str = ""  # a SyncState.ErrorSource


def sync_all(client: platform.PlatformClient, envs: list[str]) -> list[SyncResult]:
    return [sync_env(client, env) for env in envs]


def keep_up_all(client: platform.PlatformClient, envs: list[str]) -> list[SyncResult]:
    return [keep_up(client, env) for env in envs]


def sync_env(client: platform.PlatformClient, env: str) -> SyncResult:
    """Sync one env by walking its whole listing at once, unless another sync of it holds the lease (then
    ``skipped`` is set)."""
    return _leased(env, lambda previous, result, progress: _walk_whole(client, env, previous, result, progress))


def keep_up(client: platform.PlatformClient, env: str) -> SyncResult:
    """The periodic sync of one env: the tail of its listing, then the next pages of the reconciling walk.

    An env never walked whole is walked whole at once (its first sync). A kept cursor
    the platform refuses is counted (``cursor_refusals``), logged, and followed by a
    whole walk at once, which gives out new cursors.
    """

    def step(previous: SyncState, result: SyncResult, progress: dict) -> None:
        if previous.last_walk_started_at is None:
            _walk_whole(client, env, previous, result, progress)
            return
        result.open = previous.open_count  # as the last count left it, until a walk ends and counts again
        try:
            _follow_tail(client, env, previous, result, progress)
            _walk_on(client, env, previous, result, progress)
            _confirm_expired_here(client, env)
        except platform.CursorRefused as error:
            logger.warning("sync of %s: %s; walking the whole listing instead", env, error)
            SyncState.objects.filter(env=env).update(cursor_refusals=F("cursor_refusals") + 1)
            for name in ("open", "created", "updated", "closed"):
                setattr(result, name, 0)  # the whole walk counts again what the tail had written
            progress.clear()
            _walk_whole(client, env, previous, result, progress)

    return _leased(env, step)


def _leased(env: str, sync: Callable[[SyncState, SyncResult, dict], None]) -> SyncResult:
    """Run ``sync(previous state, result, progress)`` under the env's lease, then record its result and, when it
    succeeded, its ``progress`` (changes to the env's ``SyncState``)."""
    leased = _acquire_lease(env)
    if leased is None:
        logger.info("sync of %s skipped: another sync holds the lease", env)
        return SyncResult(env=env, skipped=True)
    token, previous = leased
    started = time.monotonic()
    result = SyncResult(env=env)
    progress = {}
    try:
        sync(previous, result, progress)
    except platform.PlatformError as error:
        result.error, result.error_source = str(error), SyncState.ErrorSource.PLATFORM
        logger.warning("sync of %s failed: %s", env, error)
    except Exception as error:  # recorded so the queue warns, then raised for the task's log
        result.error, result.error_source = f"{type(error).__name__}: {error}", SyncState.ErrorSource.REVIEW_QUEUE
        raise
    finally:
        seconds = time.monotonic() - started
        _finish(env, token, result, duration_ms=int(seconds * 1000), progress=progress)
        try:
            signals.sync_finished.send(sender=None, env=env, seconds=seconds, failed=bool(result.error))
        except DatabaseError:  # logged: the metrics' counters must not replace the sync's own outcome or exception
            logger.exception("counting the sync of %s for the metrics failed", env)
    return result


def _walk_whole(
    client: platform.PlatformClient, env: str, previous: SyncState, result: SyncResult, progress: dict
) -> None:
    """List every open hold at once and mirror the listing: new and changed holds a batch at a time, written while
    the next pages are read; once the last page is read, the vanished holds, quarantine and filters."""
    started = timezone.now()
    known_open = {row[0]: row[1:] for row in Hold.objects.filter(env=env, status=Hold.Status.OPEN).values_list(*_KNOWN)}
    listed, scopes, unreadable, refused = set(), set(), [], []
    last_cursor = None
    for holds, cursor in _batches_of_pages(client.open_pages(env)):
        last_cursor = cursor
        remote, batch_unreadable = _storable(holds)
        unreadable += batch_unreadable
        listed |= remote.keys()
        scopes |= {(listed_hold.hold.agent, listed_hold.hold.capability) for listed_hold in remote.values()}
        known = {hold_id: known_open[hold_id] for hold_id in remote if hold_id in known_open}
        known |= _known(env, [hold_id for hold_id in remote if hold_id not in known_open])  # closed ones listed again
        created, updated, batch_refused = _store_listed(env, remote, known)
        result.created += created
        result.updated += updated
        refused += batch_refused
    result.open = len(listed)
    listed |= {hold.hold_id for hold in unreadable}  # an unreadable hold is still listed
    vanished = [hold_id for hold_id in known_open if hold_id not in listed]
    if unreadable or refused or previous.in_quarantine:
        result.quarantined = _quarantine(env, unreadable + refused)
    result.closed = _record_vanished_holds(client, env, vanished)
    if result.created or result.updated or vanished or result.open != previous.open_count:
        # The filters' choices change only with the open holds; an unchanged resync neither reads nor writes them.
        queue_filter_values.replace_filter_values(env, scopes)
    _confirm_expired_here(client, env)
    if previous.walk_started_at is not None:  # this walk stands for the one under way
        ListedInWalk.objects.filter(env=env).delete()
    progress |= {
        "tail_cursor": last_cursor or "",
        "walk_cursor": "",
        "walk_started_at": None,
        "last_walk_started_at": started,
        "last_walk_ended_at": timezone.now(),
    }


READ_AHEAD_PAGES = 2 * WRITE_BATCH // platform.PAGE_SIZE  # listed while a batch is written: the next two batches


def _batches_of_pages(
    pages: Iterator[platform.Page],
) -> Iterator[tuple[list[platform.Hold | platform.UnreadableHold], str | None]]:
    """The listed holds in batches of at least ``WRITE_BATCH`` (whole pages; the last batch may be smaller), each
    with the cursor that led to its last page; the pages are read ahead, while the batch before is written."""
    holds, cursor = [], None
    for page in readahead.read_ahead(pages, READ_AHEAD_PAGES):
        holds += page.holds
        cursor = page.cursor
        if len(holds) >= WRITE_BATCH or not page.next_cursor:
            yield holds, cursor
            holds = []


def _follow_tail(
    client: platform.PlatformClient, env: str, previous: SyncState, result: SyncResult, progress: dict
) -> None:
    """List from the kept cursor of the listing's last page: that page again and whatever is new."""
    last_cursor = previous.tail_cursor or None
    listed = []
    for page in client.open_pages(env, last_cursor):
        listed += page.holds
        last_cursor = page.cursor
    _store_part(env, listed, previous, result)
    progress["tail_cursor"] = last_cursor or ""


def _walk_on(
    client: platform.PlatformClient, env: str, previous: SyncState, result: SyncResult, progress: dict
) -> None:
    """List the next pages of the reconciling walk under way, or begin one when it is due; end it after its last page.

    A walk begins ``SYNC_RECONCILE_MINUTES`` after the last began, and lists as many
    pages each interval as spread the listing's pages (as many as its open holds
    last filled) over four fifths of that period, leaving the rest for holds asked
    meanwhile.
    """
    now = timezone.now()
    period = timedelta(minutes=settings.SYNC_RECONCILE_MINUTES)
    walk_started = previous.walk_started_at
    if walk_started is None:
        if previous.last_walk_started_at is not None and now < previous.last_walk_started_at + period:
            return
        walk_started = now
        progress["walk_started_at"] = walk_started
        ListedInWalk.objects.filter(env=env).delete()  # left by a walk that a failure or a refused cursor cut short
    steps = max(1, int(period.total_seconds() * 0.8 // settings.SYNC_INTERVAL_SECONDS))
    pages = math.ceil((previous.open_count + 1) / platform.PAGE_SIZE)
    cursor = previous.walk_cursor or None
    for _ in range(math.ceil(pages / steps)):
        page = client.open_page(env, cursor)
        mirrored = _store_part(env, page.holds, previous, result)
        ListedInWalk.objects.bulk_create(
            [ListedInWalk(env=env, hold_id=pk) for pk in mirrored], ignore_conflicts=True, batch_size=1000
        )
        if not page.next_cursor:
            _end_walk(client, env, walk_started, result, progress)
            return
        cursor = page.next_cursor
    progress["walk_cursor"] = cursor


def _end_walk(client: platform.PlatformClient, env: str, walk_started, result: SyncResult, progress: dict) -> None:
    """The walk listed its last page: close the holds it did not list, empty the quarantine of those it did not meet,
    and make the filters offer what is open."""
    listed = ListedInWalk.objects.filter(env=env).values("hold_id")
    vanished = list(
        Hold.objects.filter(env=env, status=Hold.Status.OPEN, first_seen_at__lt=walk_started)
        .exclude(pk__in=listed)
        .values_list("hold_id", flat=True)
    )
    result.closed += _record_vanished_holds(client, env, vanished)
    ListedInWalk.objects.filter(env=env).delete()
    QuarantinedHold.objects.filter(env=env, last_seen_at__lt=walk_started).delete()
    result.quarantined = QuarantinedHold.objects.filter(env=env).count()
    result.open = Hold.objects.filter(env=env, status=Hold.Status.OPEN).count()
    _refresh_filter_values(env)
    progress |= {
        "walk_cursor": "",
        "walk_started_at": None,
        "last_walk_started_at": walk_started,
        "last_walk_ended_at": timezone.now(),
    }


def _store_part(
    env: str, listed: list[platform.Hold | platform.UnreadableHold], previous: SyncState, result: SyncResult
) -> list[int]:
    """Mirror part of the listing (the tail, a page of the walk): its new and changed holds, and its unreadable ones
    into quarantine. Returns the ids (pks) of the mirrored holds it lists, new ones left out."""
    remote, unreadable = _storable(listed)
    known = _known(env, [*remote, *(hold.hold_id for hold in unreadable if hold.hold_id)])
    created, updated, refused = _store_listed(env, remote, known)
    result.created += created
    result.updated += updated
    result.open += created
    if unreadable or refused:
        _quarantine(env, unreadable + refused, whole_listing=False)
    if unreadable or refused or previous.in_quarantine:
        result.quarantined = QuarantinedHold.objects.filter(env=env).count()
    if created:
        _refresh_filter_values(env)
    return [pk for pk, _, status in known.values() if status == Hold.Status.OPEN]


def _refresh_filter_values(env: str) -> None:
    """Make the filters offer the agents and capabilities of the env's open holds, as the mirror has them."""
    open_holds = Hold.objects.filter(env=env, status=Hold.Status.OPEN).order_by()
    queue_filter_values.replace_filter_values(env, set(open_holds.values_list("agent", "capability").distinct()))


# Made once: ``json.dumps`` makes an encoder on every call that asks for other than its defaults.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _canonical_json(payload: dict) -> str:
    return _CANONICAL.encode(payload)


def _acquire_lease(env: str) -> tuple[str, SyncState] | None:
    """The lease's token and the env's state as the last sync left it; None while another sync holds the lease.

    The state carries ``in_quarantine``: whether any hold of the env is in
    quarantine, so that a sync listing no unreadable hold reads the quarantine
    only when there is one to empty.
    """
    now = timezone.now()
    token = str(uuid.uuid4())
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    lease = {"lease_token": token, "lease_until": now + LEASE, "last_started_at": now}
    taken = SyncState.objects.filter(free, env=env).update(**lease)
    if not taken:  # leased, or the env's first sync
        _, created = SyncState.objects.get_or_create(env=env)
        taken = created and SyncState.objects.filter(free, env=env).update(**lease)
    if not taken:
        return None
    in_quarantine = Exists(QuarantinedHold.objects.filter(env=OuterRef("env")))
    return token, SyncState.objects.annotate(in_quarantine=in_quarantine).get(env=env)


def _finish(env: str, token: str, result: SyncResult, duration_ms: int, progress: dict) -> None:
    """Release the lease and record the result; a success records the sync's ``progress`` too (its cursors)."""
    now = timezone.now()
    changes = {"lease_token": "", "lease_until": None, "duration_ms": duration_ms}
    if result.error:
        changes |= {
            "last_error": result.error,
            "last_error_at": now,
            "error_source": result.error_source,
            "failing_since": Coalesce("failing_since", Value(now)),
        }
    else:
        changes |= {
            "failing_since": None,
            "last_success_at": now,
            "open_count": result.open,
            "created_count": result.created,
            "updated_count": result.updated,
            "closed_count": result.closed,
            "quarantined_count": result.quarantined,
            **progress,
        }
    SyncState.objects.filter(env=env, lease_token=token).update(**changes)


class _Listed(NamedTuple):
    """A listed hold made storable, with its payload's canonical JSON and the digest of that."""

    hold: platform.Hold
    digest: str
    canonical: str


def _storable(
    listed: list[platform.Hold | platform.UnreadableHold],
) -> tuple[dict[str, _Listed], list[platform.UnreadableHold]]:
    """The listed holds that can be stored, by hold id, and those that cannot."""
    remote, unreadable = {}, []
    for hold in listed:
        if isinstance(hold, platform.Hold):
            problem = _unstorable_ids(hold)
            if problem is None:
                remote[hold.hold_id] = _listed(hold)
                continue
            hold = platform.UnreadableHold.of(hold.raw, problem)
        unreadable.append(hold)
    return remote, unreadable


def _listed(remote: platform.Hold) -> _Listed:
    """The hold made storable (``jsonvalues.storable``), its payload's canonical JSON and digest.

    One JSON dump serves the check, the digest and the payload column of the usual
    hold, which holds nothing to change.
    """
    canonical = _canonical_json(remote.raw)
    if may_need_storable(canonical):
        remote = platform.parse_hold(storable(remote.raw))
        canonical = _canonical_json(remote.raw)
    return _Listed(remote, hashlib.sha256(canonical.encode()).hexdigest(), canonical)


def _column_limit(name: str) -> int:
    """The longest value of ``name`` that both the mirror and the audit trail can index."""
    widths = [model._meta.get_field(name).max_length for model in (Hold, AuditEvent)]
    return min([MAX_INDEXED_LENGTH, *filter(None, widths)])


ID_LIMITS = {name: _column_limit(name) for name in ("hold_id", "run_id", "agent")}


def _unstorable_ids(remote: platform.Hold) -> str | None:
    """Why the hold cannot be stored as it is, or None.

    Ids cannot be made storable the way other text is: changed, they would no
    longer name the hold, run or item on the platform. The agent's name is an
    indexed column of the audit trail, hence its limit.
    """
    values = [("hold_id", remote.hold_id), ("run_id", remote.run_id), ("agent", remote.agent)]
    values += [("item id", item.id) for item in remote.items] + [("file id", file.id) for file in remote.files]
    for name, value in values:
        limit = ID_LIMITS.get(name, MAX_INDEXED_LENGTH)
        if len(value) > limit:
            return f"{name} is {len(value):,} characters long; Review Queue stores at most {limit:,}"
        if name != "agent" and UNSTORABLE.search(value):
            return f"{name} holds a NUL or a lone surrogate, which the database cannot store"
    return None


_KNOWN = ("hold_id", "pk", "payload_digest", "status")


def _known(env: str, hold_ids: list[str]) -> dict[str, tuple[int, str, str]]:
    """The mirrored holds of ``hold_ids``, in any status: (pk, payload digest, status) by hold id."""
    known = {}
    for chunk in _chunks(hold_ids, 5000):
        known |= {row[0]: row[1:] for row in Hold.objects.filter(env=env, hold_id__in=chunk).values_list(*_KNOWN)}
    return known


def _store_listed(
    env: str, remote: dict[str, _Listed], known: dict[str, tuple[int, str, str]]
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
    for batch in _chunks(writes, WRITE_BATCH):
        batch_written, batch_refused = _write_batch(env, remote, batch)
        written += batch_written
        refused += batch_refused
    return _count_new(written), len(written) - _count_new(written), refused


class _Write(NamedTuple):
    """A hold to insert (``pk`` None) or update."""

    hold_id: str
    pk: int | None


def _count_new(writes: list[_Write]) -> int:
    return sum(1 for write in writes if write.pk is None)


def _write_batch(
    env: str, remote: dict[str, _Listed], writes: list[_Write]
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


def _write(env: str, remote: dict[str, _Listed], writes: list[_Write]) -> list[_Write]:
    """Insert or update the holds with their items, in one transaction with the new holds' audit events.

    Returns the writes made: a changed hold that was closed here (by the expiry sweep,
    say) since the open holds were read is left closed.
    """
    now = timezone.now()
    new = [remote[w.hold_id] for w in writes if w.pk is None]
    with transaction.atomic():
        writes = _still_open(writes)
        changed = [
            _mirror(Hold(pk=w.pk, env=env), remote[w.hold_id].hold, remote[w.hold_id].digest, now)
            for w in writes
            if w.pk is not None
        ]
        if changed:
            Hold.objects.bulk_update(changed, MIRRORED_FIELDS, batch_size=500)
            HoldItem.objects.filter(hold__in=[hold.pk for hold in changed]).delete()
            HoldItem.objects.bulk_create(
                [item for hold in changed for item in _items(hold, remote[hold.hold_id].hold)], batch_size=2000
            )
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


def _create_new_holds(env: str, new: list[_Listed], now) -> None:
    """Insert new holds, their items and their ``hold_seen`` events through the ORM."""
    holds = [_mirror(Hold(env=env, first_seen_at=now), listed.hold, listed.digest, now) for listed in new]
    Hold.objects.bulk_create(holds, batch_size=1000)
    HoldItem.objects.bulk_create(
        [item for hold, listed in zip(holds, new, strict=True) for item in _items(hold, listed.hold)], batch_size=2000
    )
    audit_events.record_many(_seen(hold, listed.hold) for hold, listed in zip(holds, new, strict=True))


COPIED_HOLD_COLUMNS = ("id", "env", "first_seen_at", "hold_id", *MIRRORED_FIELDS)
JSON_HOLD_COLUMNS = frozenset({"actions", "files", "platform_decision"})  # and the payload, dumped already
ITEM_COLUMNS = ("hold_id", "position", "item_id", "title", "data")


def _copy_new_holds(env: str, new: list[_Listed], now) -> None:
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
            columns |= _mirrored(remote, digest, now, first_seen_at=now, closed_at=None)
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
    """The ``hold_seen`` event of a new hold (made storable, as ``_listed`` makes it: its payload is clean)."""
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


def _quarantine(env: str, unreadable: list[platform.UnreadableHold], whole_listing: bool = True) -> int:
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


def _chunks(values: list, size: int):
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _record_vanished_holds(client: platform.PlatformClient, env: str, vanished: list[str]) -> int:
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
    if _listed(remote).digest == hold.payload_digest:
        Hold.objects.filter(pk=hold.pk).update(last_synced_at=now)
        return False
    with transaction.atomic():
        if not Hold.objects.select_for_update().filter(pk=hold.pk, status=Hold.Status.OPEN).exists():
            return False  # closed here (decided, expired) since it was read: left closed
        record_hold(hold, remote)
        changes.publish("hold", [hold])
    return True


def _confirm_expired_here(client: platform.PlatformClient, env: str) -> None:
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
    problem = _unstorable_ids(remote)
    if problem:
        logger.warning("hold %s: keeping the mirrored ids, as the platform's now cannot be stored: %s", hold, problem)
        _mirror_ending(hold, _listed(remote).hold, timezone.now())
        hold.save(update_fields=ENDING_FIELDS)
        changes.publish("hold", [hold])
        return
    listed = _listed(remote)
    _mirror(hold, listed.hold, listed.digest, timezone.now())
    with transaction.atomic():
        hold.save(update_fields=MIRRORED_FIELDS)
        hold.items.all().delete()
        HoldItem.objects.bulk_create(_items(hold, listed.hold))
        changes.publish("hold", [hold])


def _mirror(hold: Hold, remote: platform.Hold, digest: str, now) -> Hold:
    """Copy the platform's view of a hold onto a model instance (not saved)."""
    mirrored = _mirrored(remote, digest, now, first_seen_at=hold.first_seen_at, closed_at=hold.closed_at)
    for name, value in mirrored.items():
        setattr(hold, name, value)
    return hold


def _mirrored(remote: platform.Hold, digest: str, now, *, first_seen_at, closed_at) -> dict:
    """The hold id and ``MIRRORED_FIELDS`` as the platform's view sets them, given when the mirror first saw the hold
    and closed it."""
    return {
        "hold_id": remote.hold_id,
        "run_id": remote.run_id,
        "agent": remote.agent,
        "capability": remote.capability,
        "question": remote.question,
        "intent": remote.intent,
        "details": remote.details,
        "actions": list(remote.actions),
        "files": [dataclasses.asdict(file) for file in remote.files],
        "created_at": remote.created_at or first_seen_at or now,
        "expires_at": remote.expires_at,
        **_ending(remote, now, closed_at),
        "payload": remote.raw,
        "payload_digest": digest,
        "search_text": search_text(remote),
        "amount": amounts.largest(item.data for item in remote.items),
    }


STATUSES = frozenset(Hold.Status.values)  # computed once: the enum builds the list anew on each read
ENDING_FIELDS = ["status", "last_synced_at", "closed_at", "decided_by", "decided_at", "platform_decision"]


def _mirror_ending(hold: Hold, remote: platform.Hold, now) -> None:
    """Copy whether and how the hold ended (the ``ENDING_FIELDS``) onto a model instance (not saved)."""
    for name, value in _ending(remote, now, hold.closed_at).items():
        setattr(hold, name, value)


def _ending(remote: platform.Hold, now, closed_at) -> dict:
    """The ``ENDING_FIELDS`` as the platform's view sets them, given when the mirror closed the hold, if it did."""
    status = remote.status if remote.status in STATUSES else Hold.Status.OPEN
    return {
        "status": status,
        "last_synced_at": now,
        "closed_at": None if status == Hold.Status.OPEN else (closed_at or now),
        "decided_by": remote.decision.decided_by if remote.decision else "",
        "decided_at": remote.decision.decided_at if remote.decision else None,
        "platform_decision": remote.raw.get("decision"),
    }


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
