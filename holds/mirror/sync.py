"""Mirror the platform's open holds into the database: the listing, as a whole walk or as the tail and a
reconciling walk, each under the env's lease.

One sync of an env lists every open hold, and hands each batch to ``holds.mirror.writing``,
which inserts the new ones and updates the changed ones in bulk, and leaves unchanged
ones alone: a hold's payload digest tells whether anything changed, so the queries do
not grow with the number of unchanged holds. A hold that left the open list is read
once to record how it ended (``holds.mirror.single_read``); nothing is ever deleted,
and a hold closed here is never reopened by a listing that predates its closing. A
failure while listing closes nothing (what was listed before it is written, as the
batches arrive); any failure is recorded on the env's ``SyncState``, with whose fault
it was. The usual sync, with nothing in quarantine, pays nothing for the quarantine:
whether the env has quarantined holds comes with the read of its sync state.

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
import logging
import math
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Exists, F, OuterRef, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from holds import signals
from holds.mirror import platform, single_read, writing
from holds.models import Hold, ListedInWalk, QuarantinedHold, SyncState
from holds.queue import filter_values as queue_filter_values
from reviewqueue import collector, readahead

logger = logging.getLogger(__name__)

LEASE = timedelta(minutes=10)


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


_KEEP = object()  # a ``Progress`` field the sync did not move: its ``SyncState`` column stays as it was


@dataclasses.dataclass
class Progress:
    """Where a sync left its env's listing, written to its ``SyncState`` only when the sync succeeds."""

    tail_cursor: str | object = _KEEP
    walk_cursor: str | object = _KEEP
    walk_started_at: datetime | None | object = _KEEP
    last_walk_started_at: datetime | object = _KEEP
    last_walk_ended_at: datetime | object = _KEEP

    def walk_ended(self, started: datetime) -> None:
        """A walk of the whole listing, begun at ``started``, listed its last page."""
        self.walk_cursor, self.walk_started_at = "", None
        self.last_walk_started_at, self.last_walk_ended_at = started, timezone.now()

    def forget(self) -> None:
        """Keep nothing of what the sync moved so far (a whole walk follows and sets it anew)."""
        for field in dataclasses.fields(self):
            setattr(self, field.name, _KEEP)

    def changes(self) -> dict:
        """The ``SyncState`` columns this progress moves, with their new values."""
        moved = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        return {name: value for name, value in moved.items() if value is not _KEEP}


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

    def step(previous: SyncState, result: SyncResult, progress: Progress) -> None:
        if previous.last_walk_started_at is None:
            _walk_whole(client, env, previous, result, progress)
            return
        result.open = previous.open_count  # as the last count left it, until a walk ends and counts again
        try:
            _follow_tail(client, env, previous, result, progress)
            _walk_on(client, env, previous, result, progress)
            single_read.confirm_expired_here(client, env)
        except platform.CursorRefused as error:
            logger.warning("sync of %s: %s; walking the whole listing instead", env, error)
            SyncState.objects.filter(env=env).update(cursor_refusals=F("cursor_refusals") + 1)
            for name in ("open", "created", "updated", "closed"):
                setattr(result, name, 0)  # the whole walk counts again what the tail had written
            progress.forget()
            _walk_whole(client, env, previous, result, progress)

    return _leased(env, step)


def _leased(env: str, sync: Callable[[SyncState, SyncResult, Progress], None]) -> SyncResult:
    """Run ``sync(previous state, result, progress)`` under the env's lease, then record its result and, when it
    succeeded, its ``progress`` (changes to the env's ``SyncState``)."""
    leased = _acquire_lease(env)
    if leased is None:
        logger.info("sync of %s skipped: another sync holds the lease", env)
        return SyncResult(env=env, skipped=True)
    token, previous = leased
    started = time.monotonic()
    result = SyncResult(env=env)
    progress = Progress()
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
    client: platform.PlatformClient, env: str, previous: SyncState, result: SyncResult, progress: Progress
) -> None:
    """List every open hold at once and mirror the listing: new and changed holds a batch at a time, written while
    the next pages are read; once the last page is read, the vanished holds, quarantine and filters."""
    started = timezone.now()
    open_holds = Hold.objects.filter(env=env, status=Hold.Status.OPEN)
    known_open = {row[0]: row[1:] for row in open_holds.values_list(*writing.KNOWN_COLUMNS)}
    listed, scopes, unreadable, refused = set(), set(), [], []
    last_cursor = None
    with collector.paused() as pause:  # the batches' objects are dropped before a collection would find garbage
        for holds, cursor in _batches_of_pages(client.open_pages(env)):
            last_cursor = cursor
            remote, batch_unreadable = writing.partition_storable(holds)
            unreadable += batch_unreadable
            listed |= remote.keys()
            scopes |= {(entry.hold.agent, entry.hold.capability) for entry in remote.values()}
            known = {hold_id: known_open[hold_id] for hold_id in remote if hold_id in known_open}
            # Closed ones listed again:
            known |= writing.known_holds(env, [hold_id for hold_id in remote if hold_id not in known_open])
            created, updated, batch_refused = writing.store_listed(env, remote, known)
            result.created += created
            result.updated += updated
            refused += batch_refused
            pause.batch_done()
    result.open = len(listed)
    listed |= {hold.hold_id for hold in unreadable}  # an unreadable hold is still listed
    vanished = [hold_id for hold_id in known_open if hold_id not in listed]
    if unreadable or refused or previous.in_quarantine:
        result.quarantined = writing.quarantine(env, unreadable + refused)
    result.closed = single_read.record_vanished(client, env, vanished)
    if result.created or result.updated or vanished or result.open != previous.open_count:
        # The filters' choices change only with the open holds; an unchanged resync neither reads nor writes them.
        queue_filter_values.replace_filter_values(env, scopes)
    single_read.confirm_expired_here(client, env)
    if previous.walk_started_at is not None:  # this walk stands for the one under way
        ListedInWalk.objects.filter(env=env).delete()
    progress.tail_cursor = last_cursor or ""
    progress.walk_ended(started)


# Listed while a batch is written: the next two batches.
READ_AHEAD_PAGES = 2 * writing.WRITE_BATCH // platform.PAGE_SIZE


def _batches_of_pages(
    pages: Iterator[platform.Page],
) -> Iterator[tuple[list[platform.Hold | platform.UnreadableHold], str | None]]:
    """The listed holds in batches of at least ``WRITE_BATCH`` (whole pages; the last batch may be smaller), each
    with the cursor that led to its last page; the pages are read ahead, while the batch before is written."""
    holds, cursor = [], None
    for page in readahead.read_ahead(pages, READ_AHEAD_PAGES):
        holds += page.holds
        cursor = page.cursor
        if len(holds) >= writing.WRITE_BATCH or not page.next_cursor:
            yield holds, cursor
            holds = []


def _follow_tail(
    client: platform.PlatformClient, env: str, previous: SyncState, result: SyncResult, progress: Progress
) -> None:
    """List from the kept cursor of the listing's last page: that page again and whatever is new."""
    last_cursor = previous.tail_cursor or None
    listed = []
    for page in client.open_pages(env, last_cursor):
        listed += page.holds
        last_cursor = page.cursor
    _store_part(env, listed, previous, result)
    progress.tail_cursor = last_cursor or ""


def _walk_on(
    client: platform.PlatformClient, env: str, previous: SyncState, result: SyncResult, progress: Progress
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
        progress.walk_started_at = walk_started
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
    progress.walk_cursor = cursor


def _end_walk(client: platform.PlatformClient, env: str, walk_started, result: SyncResult, progress: Progress) -> None:
    """The walk listed its last page: close the holds it did not list, empty the quarantine of those it did not meet,
    and make the filters offer what is open."""
    listed = ListedInWalk.objects.filter(env=env).values("hold_id")
    vanished = list(
        Hold.objects.filter(env=env, status=Hold.Status.OPEN, first_seen_at__lt=walk_started)
        .exclude(pk__in=listed)
        .values_list("hold_id", flat=True)
    )
    result.closed += single_read.record_vanished(client, env, vanished)
    ListedInWalk.objects.filter(env=env).delete()
    QuarantinedHold.objects.filter(env=env, last_seen_at__lt=walk_started).delete()
    result.quarantined = QuarantinedHold.objects.filter(env=env).count()
    result.open = Hold.objects.filter(env=env, status=Hold.Status.OPEN).count()
    writing.refresh_filter_values(env)
    progress.walk_ended(walk_started)


def _store_part(
    env: str, listed: list[platform.Hold | platform.UnreadableHold], previous: SyncState, result: SyncResult
) -> list[int]:
    """Mirror part of the listing (the tail, a page of the walk): its new and changed holds, and its unreadable ones
    into quarantine. Returns the ids (pks) of the mirrored holds it lists, new ones left out."""
    remote, unreadable = writing.partition_storable(listed)
    known = writing.known_holds(env, [*remote, *(hold.hold_id for hold in unreadable if hold.hold_id)])
    created, updated, refused = writing.store_listed(env, remote, known)
    result.created += created
    result.updated += updated
    result.open += created
    if unreadable or refused:
        writing.quarantine(env, unreadable + refused, whole_listing=False)
    if unreadable or refused or previous.in_quarantine:
        result.quarantined = QuarantinedHold.objects.filter(env=env).count()
    if created:
        writing.refresh_filter_values(env)
    return [pk for pk, _, status in known.values() if status == Hold.Status.OPEN]


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


def _finish(env: str, token: str, result: SyncResult, duration_ms: int, progress: Progress) -> None:
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
            **progress.changes(),
        }
    SyncState.objects.filter(env=env, lease_token=token).update(**changes)
