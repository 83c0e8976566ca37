"""Insert the new holds sync listed, with their items, their subjects (``holds/related/stored.py``, the holds sharing
them marked: ``holds/related/sharing.py``) and
``hold_seen`` events: by COPY on PostgreSQL, which costs a fraction of INSERT's time per row, and through the ORM
on SQLite (the quickstart's). The rows are the same either way (the audit trail's come from
``audit.events.copying``, chain included).
"""

from __future__ import annotations

import operator
from typing import NamedTuple

from django.db import connection

from audit import events as audit_events
from audit.events import holding
from audit.models import AuditEvent
from holds.mirror import mirrored, platform
from holds.models import Hold, HoldItem, HoldSubject
from holds.related import sharing, stored
from reviewqueue.sql import writes


def insert_new(env: str, new: list[mirrored.Listed], now) -> None:
    """Insert ``new`` holds first seen ``now``, with their items and their ``hold_seen`` events."""
    (_copy_new_holds if _inserts_by_copy() else _create_new_holds)(env, new, now)


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
    stored.create_for([(hold, listed.hold) for hold, listed in pairs], stored.key_settings())
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
    items, subjects, seen = [], [], []
    key_settings = stored.key_settings()

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
            subjects.extend(
                (pk, *row) for row in stored.rows_of(remote.agent, remote.capability, remote.items, key_settings)
            )
            seen.append(_seen(_SeenHold(pk, env, remote.hold_id, remote.run_id, remote.agent), remote))
            yield copied_values(columns) + default_values

    writes.copy(Hold, (*COPIED_HOLD_COLUMNS, *defaults), hold_rows())
    writes.copy(HoldItem, ITEM_COLUMNS, items)
    writes.copy(HoldSubject, stored.COPY_COLUMNS, subjects)
    sharing.mark(ids)
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
    return holding.hold_seen(
        hold=hold,
        question=remote.question,
        items=((item.id, item.title, item.data) for item in remote.items),
        clean=True,
    )
