"""The hash chain over audit events: how a row's hash is made, and how the whole chain is checked.

A row's hash is SHA-256 over the previous row's hash followed by the canonical
JSON (sorted keys, no spaces) of the row's content: every column except ``id``,
``prev_hash`` and ``hash``. Changing any column of a row, removing a row or
reordering rows therefore breaks the chain at that row, and the chain head's
copy of the last sequence and hash shows rows removed from the end.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import UTC

from audit.models import AuditChainHead, AuditEvent

GENESIS = "0" * 64

CONTENT_FIELDS = (
    "sequence",
    "at",
    "kind",
    "actor_id",
    "actor_name",
    "env",
    "hold_id",
    "run_id",
    "agent",
    "hold_record_id",
    "decision_id",
    "actions",
    "outcome",
    "item_ids",
    "search_text",
    "payload",
)


def content(event: AuditEvent) -> dict:
    """The hashed columns, with the time in UTC to the microsecond as the database keeps it."""
    return content_of({name: getattr(event, name) for name in CONTENT_FIELDS})


def content_of(columns: dict) -> dict:
    """``content`` of a row given as its column values, for rows written without a model instance."""
    values = {name: columns[name] for name in CONTENT_FIELDS}
    values["at"] = columns["at"].astimezone(UTC).isoformat(timespec="microseconds")
    return values


# Made once: ``json.dumps`` makes an encoder on every call that asks for other than its defaults.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def canonical(value) -> str:
    return _CANONICAL.encode(value)


def digest(prev_hash: str, event: AuditEvent) -> str:
    return digest_of(prev_hash, content(event))


def digest_of(prev_hash: str, hashed_content: dict, canonical_payload: str | None = None) -> str:
    """The hash of a row whose ``content`` is ``hashed_content``, chained onto ``prev_hash``.

    ``canonical_payload``, the payload's ``canonical`` JSON when the caller has it
    already, is put in place instead of dumping the payload again: the same text.
    """
    if canonical_payload is None:
        text = canonical(hashed_content)
    else:
        # The payload is the content's only object, and a quote inside JSON text is escaped:
        # '"payload":0' can only be its key and a placeholder value.
        text = canonical(hashed_content | {"payload": 0}).replace('"payload":0', '"payload":' + canonical_payload, 1)
    return hashlib.sha256((prev_hash + text).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Break:
    """Where the chain stops holding: the first bad row (or None when rows are missing at the end), and why."""

    sequence: int
    event_id: int | None
    reason: str

    def __str__(self) -> str:
        where = f"event #{self.sequence} (id {self.event_id})" if self.event_id else f"after event #{self.sequence}"
        return f"the audit chain breaks at {where}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class Verification:
    checked: int
    last_sequence: int
    last_hash: str
    broken: Break | None


def verify(chunk_size: int = 5000) -> Verification:
    """Walk the chain in sequence order (keyset chunks, so memory stays flat) and return the first break."""
    expected_sequence, prev_hash, checked = 1, GENESIS, 0
    while True:
        chunk = list(AuditEvent.objects.filter(sequence__gte=expected_sequence).order_by("sequence")[:chunk_size])
        for event in chunk:
            broken = _check(event, expected_sequence, prev_hash)
            if broken:
                return Verification(checked, expected_sequence - 1, prev_hash, broken)
            expected_sequence, prev_hash, checked = event.sequence + 1, event.hash, checked + 1
        if len(chunk) < chunk_size:
            break
    last_sequence = expected_sequence - 1
    head = AuditChainHead.objects.first()
    if head and (head.sequence, head.hash) != (last_sequence, prev_hash):
        if head.sequence > last_sequence:
            reason = f"the chain head records event #{head.sequence}: the events after #{last_sequence} are missing"
        else:
            reason = f"the chain head records event #{head.sequence} with another hash: the last events were rewritten"
        return Verification(checked, last_sequence, prev_hash, Break(last_sequence, None, reason))
    return Verification(checked, last_sequence, prev_hash, None)


def _check(event: AuditEvent, expected_sequence: int, prev_hash: str) -> Break | None:
    if event.sequence != expected_sequence:
        return Break(event.sequence, event.pk, f"event #{expected_sequence} is missing before it")
    if event.prev_hash != prev_hash:
        return Break(event.sequence, event.pk, "its previous hash is not the hash of the event before it")
    if event.hash != digest(prev_hash, event):
        return Break(event.sequence, event.pk, "its content does not match its hash (the row was changed)")
    return None
