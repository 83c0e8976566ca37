"""The subjects stored per hold (``holds.models.HoldSubject``): made from a hold's items by the reader
(``holds/related/subjects.py``) with the admins' key settings, whenever a hold is mirrored (sync's COPY and ORM
paths, and a hold mirrored anew: ``holds/mirror/inserting.py``, ``holds/mirror/mirrored.py``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, NamedTuple

from holds.mirror import platform
from holds.models import HoldSubject, SubjectKeys
from holds.related import subjects

logger = logging.getLogger(__name__)

CAPABILITY_LIMIT = 400  # 400 and the value's 200 characters take at most 2,400 bytes: a btree entry holds 2,704
COPY_COLUMNS = ("hold_id", "position", "key", "value", "capability", "action_kind")


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
    """Store the subjects of each (saved ``Hold``, ``platform.Hold``) pair, whose rows are not stored yet."""
    made = []
    for hold, remote in pairs:
        decision = remote.decision.as_received if remote.decision else None
        approved = approved_positions(remote.status, remote.items, decision)
        made += [
            HoldSubject(hold=hold, approved=row.position in approved, **row._asdict())
            for row in rows_of(remote.agent, remote.capability, remote.items, settings)
        ]
    HoldSubject.objects.bulk_create(made, batch_size=2000)
