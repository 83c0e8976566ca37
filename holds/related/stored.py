"""The subjects stored per hold (``holds.models.HoldSubject``): made from a hold's items by the reader
(``holds/related/subjects.py``) with the admins' key settings, whenever a hold is mirrored (sync's COPY and ORM
paths, and a hold mirrored anew: ``holds/mirror/inserting.py``, ``holds/mirror/mirrored.py``), and made again from
the stored items for every hold of an agent whose keys an admin changed (``ask_to_reread``, then ``reread_asked``
on a worker: the change's own transaction stores the request, so that a task lost with the broker is found again
by beat's next run)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from datetime import timedelta
from typing import Any, NamedTuple

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from holds.mirror import platform
from holds.models import Hold, HoldItem, HoldSubject, SubjectKeys, SubjectRereading
from holds.related import sharing, subjects
from reviewqueue import queueing, sweeping

logger = logging.getLogger(__name__)

CAPABILITY_LIMIT = 400  # 400 and the value's 200 characters take at most 2,400 bytes: a btree entry holds 2,704
COPY_COLUMNS = ("hold_id", "position", "key", "value", "capability", "action_kind")
REREAD_TASK = "holds.tasks.reread_subjects"
REREAD_SWEEP = "subject_rereading"  # its name in the logs and /metrics when one hold fails (reviewqueue/sweeping.py)
REREAD_BATCH = 500  # holds a transaction: their rows are locked meanwhile, and a sync writing one of them waits
# How long a run has a request it reads (``SubjectRereading.read_until``): beat's run and the one a change queued may
# start together, and would read the same holds twice. Long enough for any agent's holds; a run that died lets go
# when it ends. Were it too short, two runs would overlap, each batch still locked: more work, the same rows.
REREAD_LEASE = timedelta(minutes=10)


class Row(NamedTuple):
    """One subject row, as ``COPY_COLUMNS`` orders it after the hold's pk."""

    position: int
    key: str
    value: str
    capability: str
    action_kind: str


def key_settings() -> subjects.KeySettings:
    """Every admin setting of subject keys (one query), for the reader."""
    rows = SubjectKeys.objects.order_by("pk").values_list("agent", "capability", "keys_added", "keys_removed")
    return subjects.KeySettings(
        tuple(
            subjects.KeySetting(agent, capability, subjects.key_list(added), subjects.key_list(removed))
            for agent, capability, added, removed in rows
        )
    )


def rows_of(agent: str, capability: str, items: Iterable[Any], settings: subjects.KeySettings) -> list[Row]:
    """The subject rows of a hold's ``items`` (each with ``id``, ``title`` and ``data``). A hold the reader cannot
    read (which it should never meet) gets none, logged, rather than stopping the others."""
    try:
        keys = settings.for_hold(agent, capability)
        capability = capability[:CAPABILITY_LIMIT]
        rows = []
        for position, item in enumerate(items):
            found = subjects.subjects_of(item.id, item.data, keys)
            kind = subjects.action_kind(item.title, found)
            rows.extend(Row(position, subject.key, subject.value, capability, kind) for subject in found)
        return rows
    except Exception:
        logger.exception("could not read the subjects of a hold of %s", agent[:100])
        return []


def approved_positions(status: str, items: Iterable[Any], decision: Any) -> frozenset[int]:
    """The positions of a hold's items approved, as the platform reports the hold decided (its stored
    ``platform_decision``): every item when it reports a decision but not item by item; none for a hold not
    decided. New holds are open: sync's COPY leaves the column to its default."""
    if status != "decided":
        return frozenset()
    items = list(items)
    approved = platform.approved_items(decision)
    if approved is None:
        return frozenset(range(len(items)))
    return frozenset(position for position, item in enumerate(items) if item.id in approved)


def create_for(pairs: Iterable[tuple[Any, Any]], settings: subjects.KeySettings) -> None:
    """Store the subjects of each (saved ``Hold``, ``platform.Hold``) pair, whose rows are not stored yet, and mark
    the holds sharing them (``holds/related/sharing.py``)."""
    pairs = list(pairs)
    made = []
    for hold, remote in pairs:
        decision = remote.decision.as_received if remote.decision else None
        approved = approved_positions(remote.status, remote.items, decision)
        made += [
            HoldSubject(hold=hold, approved=row.position in approved, **row._asdict())
            for row in rows_of(remote.agent, remote.capability, remote.items, settings)
        ]
    HoldSubject.objects.bulk_create(made, batch_size=2000)
    sharing.mark([hold.pk for hold, _ in pairs])


class StoredItem(NamedTuple):
    """A stored item (``HoldItem``) as ``rows_of`` and ``approved_positions`` read an item."""

    id: str
    title: str
    data: Any


def ask_to_reread(settings: Iterable[tuple[str, str]]) -> None:
    """Ask for every stored hold of each (agent, capability; blank: any) of ``settings`` to be read again with the
    subject keys as they are once the current transaction commits (an admin's change of them): stored in it, then
    one task queued for them all."""
    now = timezone.now()
    for agent, capability in set(settings):
        SubjectRereading.objects.update_or_create(agent=agent, capability=capability, defaults={"asked_at": now})
    transaction.on_commit(lambda: queueing.queue(REREAD_TASK, description="rereading the subjects of holds"))


def reread_asked() -> int:
    """Read again the holds of every ``SubjectRereading`` asked (oldest first) that no other run is reading
    (``REREAD_LEASE``), each taken away once done unless asked again meanwhile (then it is let go, and the next run
    reads them again with the newer keys); return how many holds were read."""
    read = 0
    for asked in SubjectRereading.objects.order_by("asked_at", "pk"):
        now = timezone.now()
        free = Q(read_until__isnull=True) | Q(read_until__lte=now)
        if not SubjectRereading.objects.filter(free, pk=asked.pk).update(read_until=now + REREAD_LEASE):
            continue  # another run is reading these holds
        read += reread(asked.agent, asked.capability)
        if not SubjectRereading.objects.filter(pk=asked.pk, asked_at=asked.asked_at).delete()[0]:
            SubjectRereading.objects.filter(pk=asked.pk).update(read_until=None)
    return read


def reread(agent: str, capability: str) -> int:
    """Make again the subject rows of every stored hold of ``agent`` (with ``capability``; blank: any), open or
    closed, from their stored items and with the key settings as they are now, ``REREAD_BATCH`` holds a transaction;
    return how many holds were read. A hold whose rows cannot be made again keeps its old ones, logged and counted
    (``reviewqueue.sweeping``), and the others go on. Each batch locks its holds' rows first, so that sync's writing
    of one of them (which updates that row) waits for it, or it for sync's, and reads the items sync wrote."""
    holds = Hold.objects.filter(agent=agent)
    if capability:
        holds = holds.filter(capability=capability)
    settings = key_settings()
    read, after = 0, 0
    while True:
        with transaction.atomic():
            batch = list(
                holds.filter(pk__gt=after)
                .order_by("pk")
                .select_for_update(no_key=True)
                .values_list("pk", "capability", "status", "platform_decision")[:REREAD_BATCH]
            )
            if not batch:
                return read
            items: dict[int, list[StoredItem]] = {pk: [] for pk, *_ in batch}
            stored_items = HoldItem.objects.filter(hold__in=list(items)).order_by("hold", "position")
            for hold_pk, *item in stored_items.values_list("hold_id", "item_id", "title", "data"):
                items[hold_pk].append(StoredItem(*item))
            remake = functools.partial(_remade, agent, items=items, settings=settings)
            remade = sweeping.batched(REREAD_SWEEP, batch, remake, lambda hold: {"hold_id": hold[0]})
        read += len(remade)
        after = batch[-1][0]


def _remade(agent: str, holds: list[tuple], *, items: dict[int, list[StoredItem]], settings) -> list[int]:
    """Make again the subject rows of ``holds`` (pk, capability, status, platform decision) from their ``items``, and
    mark the holds sharing them; return their pks."""
    pks = [pk for pk, *_ in holds]
    HoldSubject.objects.filter(hold__in=pks).delete()
    made = []
    for pk, capability, status, decision in holds:
        approved = approved_positions(status, items[pk], decision)
        made += [
            HoldSubject(hold_id=pk, approved=row.position in approved, **row._asdict())
            for row in rows_of(agent, capability, items[pk], settings)
        ]
    HoldSubject.objects.bulk_create(made, batch_size=2000)
    sharing.mark(pks)
    return pks
