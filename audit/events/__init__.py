"""Writing the audit trail: the only code that appends audit events, each built by name.

Each kind of event has one keyword-only builder, named as the kind, in the module of its
concern: ``audit.events.holding`` (a hold's life, its handing over and its notifications),
``audit.events.deciding`` (decisions, approvals, escalation, delivery), ``audit.events.access``
(sign-ins and API tokens) and ``audit.events.roles_and_settings`` (role and setting changes). A builder
returns an ``Entry``: its payload is what ``audit.describe`` reads back. The code path that
causes an event appends it inside its own transaction, so the event and the change it
records commit or roll back together::

    with transaction.atomic():
        decision = ...
        events.append(deciding.decision_submitted(actor=reviewer, hold=hold, decision=decision, channel=channel))

Appends take turns on the chain head's row lock (held until the caller's
transaction ends), so each event chains onto the one committed before it.
Append as the last step of a transaction: the lock is then held briefly, and
never while waiting for another row lock (which could deadlock with a
transaction that holds that row and waits for the head).
``record_many`` appends any number of events in 2 + n/2,000 queries (lock the
head, insert in batches of 2,000, move the head), computing the chain in Python.
``copying`` gives the same rows, chain included, as tuples for PostgreSQL's
COPY, for callers that append tens of thousands at once (sync's new holds).
``record`` writes an event from its parts, for the tests' own trails (old payloads, hostile ones): the app's
modules append what the builders make (``tests/audit/test_event_builders.py`` checks both).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db import transaction
from django.utils import timezone

from audit import chain, payloads
from audit.models import AuditChainHead, AuditEvent, EventKind
from reviewqueue.sql import writes

HEAD_ID = 1
BATCH_SIZE = 2000
# The columns of ``copying``'s tuples, in order: all but the id, which the table numbers itself.
COPY_COLUMNS = (*chain.CONTENT_FIELDS, "prev_hash", "hash")
KINDS = frozenset(EventKind.values)  # as sync's STATUSES: read once, not rebuilt per event


@dataclasses.dataclass(frozen=True)
class Entry:
    """One event to append: ``actor`` None means the system; env, run and agent default to the hold's."""

    kind: str
    actor: object = None
    hold: object = None
    decision: object = None
    payload: dict | None = None
    env: str = ""
    run_id: str = ""
    agent: str = ""
    # The payload is already as ``payloads.cleaned`` would give it back (JSON as decoded, made storable), as
    # sync's are: cleaning it again would cost a JSON round trip per event.
    clean: bool = False


def append(entry: Entry) -> AuditEvent:
    """Append one event a builder made and return it (saved, with its sequence and hash)."""
    return record_many([entry])[0]


def record(
    kind: str,
    *,
    actor=None,
    hold=None,
    decision=None,
    payload: dict | None = None,
    env: str = "",
    run_id: str = "",
    agent: str = "",
) -> AuditEvent:
    """Append one event made of its parts (the tests' trails) and return it."""
    return append(
        Entry(kind, actor=actor, hold=hold, decision=decision, payload=payload, env=env, run_id=run_id, agent=agent)
    )


def record_many(entries: Iterable[Entry]) -> list[AuditEvent]:
    """Append events in the given order, in bulk; the same chain as appending them one by one."""
    entries = list(entries)
    if not entries:
        return []
    for entry in entries:
        _check_kind(entry)
    # The caller's transaction where there is one (an event commits with its change): a failure here ends it anyway.
    with transaction.atomic(savepoint=False):
        head = _locked_head()
        now = timezone.now()
        sequence, prev_hash, events = head.sequence, head.hash, []
        for entry in entries:
            sequence += 1
            event = _event(entry, sequence, now)
            event.prev_hash = prev_hash
            event.hash = prev_hash = chain.digest(prev_hash, event)
            events.append(event)
        AuditEvent.objects.bulk_create(events, batch_size=BATCH_SIZE)
        AuditChainHead.objects.filter(pk=head.pk).update(sequence=sequence, hash=prev_hash)
    return events


@contextmanager
def copying(entries: Iterable[Entry]) -> Iterator[Iterator[tuple]]:
    """Append events as ``record_many`` would, given as rows for a COPY into ``AuditEvent``'s table.

    Use it inside the caller's transaction, as its last step (see above)::

        with events.copying(entries) as rows:
            ...  # COPY every row, in order, into COPY_COLUMNS

    Each row holds the ``COPY_COLUMNS``, JSON ones as JSON text, with the values
    and hashes ``record_many`` would store, made as the COPY asks for them (while
    the database digests the rows before) and without a model instance each. The
    chain head is locked on entering and moved on leaving, when no statement is
    running, so every row must have been taken by then.
    """
    head = _locked_head()
    now = timezone.now()
    chained = {"sequence": head.sequence, "hash": head.hash, "done": False}

    def rows() -> Iterator[tuple]:
        for entry in entries:
            _check_kind(entry)
            chained["sequence"] += 1
            columns = _columns(entry, chained["sequence"], now)
            payload = chain.canonical(columns["payload"])  # dumped once, for the hash and the COPY
            columns["prev_hash"] = chained["hash"]
            columns["hash"] = chained["hash"] = chain.digest_of(chained["hash"], chain.content_of(columns), payload)
            columns["payload"] = payload
            columns["item_ids"] = writes.json_text(columns["item_ids"])
            yield tuple(columns[name] for name in COPY_COLUMNS)
        chained["done"] = True

    yield rows()
    if not chained["done"]:
        raise RuntimeError("not every audit row was copied: the chain head cannot be moved past them")
    AuditChainHead.objects.filter(pk=head.pk).update(sequence=chained["sequence"], hash=chained["hash"])


def _check_kind(entry: Entry) -> None:
    if entry.kind not in KINDS:
        raise ValueError(f"unknown audit event kind {entry.kind!r}")


def _locked_head() -> AuditChainHead:
    """Lock the chain head, creating it if it is missing (a fresh or flushed database)."""
    head = AuditChainHead.objects.select_for_update(no_key=True).filter(pk=HEAD_ID).first()
    if head is None:
        last = AuditEvent.objects.order_by("-sequence").only("sequence", "hash").first()
        sequence, last_hash = (last.sequence, last.hash) if last else (0, chain.GENESIS)
        start = AuditChainHead(pk=HEAD_ID, sequence=sequence, hash=last_hash)
        AuditChainHead.objects.bulk_create([start], ignore_conflicts=True)  # a concurrent first append may win
        head = AuditChainHead.objects.select_for_update(no_key=True).get(pk=HEAD_ID)
    return head


def _event(entry: Entry, sequence: int, now) -> AuditEvent:
    return AuditEvent(**_columns(entry, sequence, now))


def _columns(entry: Entry, sequence: int, now) -> dict:
    """The event's hashed columns (``chain.CONTENT_FIELDS``), by name."""
    hold = entry.hold if entry.hold is not None else getattr(entry.decision, "hold", None)
    actor = entry.actor if getattr(entry.actor, "is_authenticated", False) else None
    payload = entry.payload if entry.clean else payloads.cleaned(entry.payload)
    hold_id = hold.hold_id if hold is not None else ""
    run_id = entry.run_id or (hold.run_id if hold is not None else "")
    return {
        "sequence": sequence,
        "at": now,
        "kind": entry.kind,
        "actor_id": actor.pk if actor else None,
        "actor_name": actor.get_username()[:150] if actor else "",
        "env": entry.env or (hold.env if hold is not None else ""),
        "hold_id": hold_id,
        "run_id": run_id,
        "agent": entry.agent or (hold.agent if hold is not None else ""),
        "hold_record_id": hold.pk if hold is not None else None,
        "decision_id": entry.decision.pk if entry.decision is not None else None,
        "payload": payload,
        **payloads.denormalised(payload, hold_id, run_id),
    }
