"""What the mirror keeps of a hold the platform describes: the model's fields, its items, its search text, and
whether its ids can be stored at all.

Sync's writes (``holds.mirror.writing``) and one hold's read (``holds.mirror.single_read``)
both copy a platform hold onto the model through these functions, so that a hold reads
the same however the mirror learned of it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import NamedTuple

from audit.models import AuditEvent
from holds.mirror import amounts, platform
from holds.models import Hold, HoldItem, HoldSubject
from holds.related import stored
from reviewqueue.agent_json import may_need_storable, scalars, storable
from reviewqueue.readers import UNSTORABLE

# The longest id kept in an indexed column: a PostgreSQL btree entry holds at most
# 2,704 bytes, and 500 characters take at most 2,000 in UTF-8 (with the env beside it).
MAX_INDEXED_LENGTH = 500

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

# Made once: ``json.dumps`` makes an encoder on every call that asks for other than its defaults.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _canonical_json(payload: dict) -> str:
    return _CANONICAL.encode(payload)


class Listed(NamedTuple):
    """A listed hold made storable, with its payload's canonical JSON and the digest of that."""

    hold: platform.Hold
    digest: str
    canonical: str


def prepared(remote: platform.Hold) -> Listed:
    """The hold made storable (``agent_json.storable``), its payload's canonical JSON and digest.

    One JSON dump serves the check, the digest and the payload column of the usual
    hold, which holds nothing to change.
    """
    canonical = _canonical_json(remote.raw)
    if may_need_storable(canonical):
        remote = platform.parse_hold(storable(remote.raw))
        canonical = _canonical_json(remote.raw)
    return Listed(remote, hashlib.sha256(canonical.encode()).hexdigest(), canonical)


def _column_limit(name: str) -> int:
    """The longest value of ``name`` that both the mirror and the audit trail can index."""
    widths = [model._meta.get_field(name).max_length for model in (Hold, AuditEvent)]
    return min([MAX_INDEXED_LENGTH, *filter(None, widths)])


ID_LIMITS = {name: _column_limit(name) for name in ("hold_id", "run_id", "agent")}


def unstorable_ids(remote: platform.Hold) -> str | None:
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


def mirror(hold: Hold, remote: platform.Hold, digest: str, now) -> Hold:
    """Copy the platform's view of a hold onto a model instance (not saved)."""
    mirrored = fields_of(remote, digest, now, first_seen_at=hold.first_seen_at, closed_at=hold.closed_at)
    for name, value in mirrored.items():
        setattr(hold, name, value)
    return hold


def fields_of(remote: platform.Hold, digest: str, now, *, first_seen_at, closed_at) -> dict:
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


def mirror_ending(hold: Hold, remote: platform.Hold, now) -> None:
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
        "platform_decision": remote.decision.as_received if remote.decision else None,
    }


def search_text(remote: platform.Hold) -> str:
    """The hold, run and item ids and every scalar inside the items' data, lower-cased, one a line."""
    values = [remote.hold_id, remote.run_id]
    for item in remote.items:
        values.append(item.id)
        values.extend(scalars(item.data))
    return "\n".join(str(value).lower() for value in values if value not in (None, ""))


def rewrite_items(pairs: list[tuple[Hold, platform.Hold]]) -> None:
    """Replace the items of each stored hold, and their subjects (``holds/related/stored.py``), by its
    ``platform.Hold``'s."""
    pks = [hold.pk for hold, _ in pairs]
    HoldItem.objects.filter(hold__in=pks).delete()
    HoldSubject.objects.filter(hold__in=pks).delete()
    HoldItem.objects.bulk_create([item for hold, remote in pairs for item in items_of(hold, remote)], batch_size=2000)
    stored.create_for(pairs, stored.key_settings())


def items_of(hold: Hold, remote: platform.Hold) -> list[HoldItem]:
    return [
        HoldItem(hold=hold, position=position, item_id=item.id, title=item.title, data=item.data)
        for position, item in enumerate(remote.items)
    ]
