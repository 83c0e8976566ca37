"""The CSV export of a filtered audit list, streamed row by row.

A spreadsheet runs a cell that starts with = + - @ (or a tab or carriage
return) as a formula, and agents write some of these values: such cells get a
leading apostrophe, the usual defence, so opening the export runs nothing.
"""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Iterator

from audit import describe, payloads, queries

HEADER = [
    "sequence",
    "at",
    "kind",
    "actor",
    "env",
    "hold_id",
    "run_id",
    "agent",
    "decision_id",
    "item_ids",
    "actions",
    "outcome",
    "summary",
    "payload",
    "hash",
    "channel",
]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class _Echo:
    """A file-like object whose write returns the line, so csv.writer can feed a generator."""

    def write(self, value: str) -> str:
        return value


def lines(filters: queries.Filters) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(HEADER)
    for chunk in itertools.batched(queries.each(queries.filtered(filters)), queries.EXPORT_CHUNK):
        names = describe.recipient_names(chunk)  # one query a chunk
        for event in chunk:
            yield writer.writerow([_cell(value) for value in row(event, names)])


def row(event, names: dict[str, str]) -> list:
    return [
        event.sequence,
        event.at.isoformat(),
        event.kind,
        event.actor_label,
        event.env,
        event.hold_id,
        event.run_id,
        event.agent,
        event.decision_id or "",
        " ".join(event.item_ids),
        event.actions,
        event.outcome,
        describe.summary(event, names),
        json.dumps(event.payload, sort_keys=True, ensure_ascii=False),
        event.hash,
        payloads.channel_of(event.payload or {}),
    ]


def _cell(value) -> str:
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
