"""Which holds share a subject with another hold (``holds.models.SharedHold``): the only ones the queue looks at for
possible duplicates (``holds/related/duplicates.py``), so that a page of holds sharing nothing costs one lookup each.

A hold is marked when another hold's item has a subject with the same value and capability, whichever was written
first: every writer of subject rows (``holds/related/stored.py``) calls ``mark`` in its transaction, which marks its
holds sharing a subject, and the other hold where only one had it (where several had it, they were marked as the
second of them was written). A mark is never taken away, so it can only make the queue look at a hold for nothing.

Two writers at once, each giving a hold the same new subject, each read the rows before the other committed and
mark neither. ``mark_open`` (beat, hourly: ``CELERY_BEAT_SCHEDULE``) marks every open hold sharing a subject and not
marked yet: such a pair goes unflagged on the queue until then, and meanwhile the hold page, its confirmation, the
policies and the API, which read the subjects themselves, treat it as the possible duplicate it is.
"""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Exists, OuterRef, Subquery

from holds.models import Hold, HoldSubject, SharedHold
from reviewqueue import sweeping
from reviewqueue.sql import expressions

SWEEP = "shared_hold_marking"  # its name in the logs and /metrics when one hold fails (reviewqueue/sweeping.py)
SWEEP_BATCH = 2000  # open holds read a query


def mark(pks: Collection[int]) -> int:
    """Mark those of the holds ``pks`` (whose subject rows the current transaction wrote) that share a subject with
    another hold (``marked``); return how many holds were marked."""
    return marked(list(pks), HoldSubject, SharedHold) if pks else 0


def mark_open() -> int:
    """Mark every open hold not marked yet that shares a subject with another hold (``marked``), a batch at a time,
    a hold that fails left unmarked and reported (``reviewqueue.sweeping``); return how many holds were marked."""
    return mark_unmarked(Hold, HoldSubject, SharedHold, sweep=SWEEP)


def mark_unmarked(holds: type, subjects: type, marks: type, sweep: str | None = None) -> int:
    """``mark_open`` with the models given (the migration that made the marks passes those of its state, and no
    ``sweep``: a failure there stops the migration)."""

    def mark_batch(pks: list[int]) -> list[int]:
        return [marked(pks, subjects, marks)]

    count, after = 0, 0
    unmarked = holds.objects.filter(status="open").exclude(Exists(marks.objects.filter(hold=OuterRef("pk"))))
    while batch := list(unmarked.filter(pk__gt=after).order_by("pk").values_list("pk", flat=True)[:SWEEP_BATCH]):
        counts = sweeping.batched(sweep, batch, mark_batch, lambda pk: {"hold_id": pk}) if sweep else mark_batch(batch)
        count += sum(counts)
        after = batch[-1]
    return count


def marked(pks: list[int], subjects: type, marks: type) -> int:
    """Mark those of the holds ``pks`` sharing a subject with another hold, and that other hold where it is the only
    one; return how many holds were marked. ``subjects`` and ``marks``: the models of ``HoldSubject`` and
    ``SharedHold``.

    Where two other holds or more share a subject, the second of them to be written marked them both, so that none is
    read: one probe a row, and a second for each row shared, however many holds share its subject.
    """
    others = (
        subjects.objects.filter(value=OuterRef("value"), capability=OuterRef("capability"))
        .exclude(hold=OuterRef("hold"))
        .order_by()  # any two: the model's order would sort every row of a subject many holds share
        .values("hold")
    )
    # The probe read once a row, in Python: a filter on it would have the database run it twice. The pks' bounds
    # besides: a planner without the table's statistics, as in a first sync filling it faster than autovacuum
    # analyses it, takes a thousand pks for a large share of the table and reads all of it, but a range for a small one.
    rows = subjects.objects.filter(expressions.among(subjects, "hold", pks), hold__gte=min(pks), hold__lte=max(pks))
    found = rows.order_by().annotate(other=Subquery(others[:1])).values_list("pk", "hold_id", "other")
    shared = {pk: (hold, other) for pk, hold, other in found if other is not None}
    if not shared:
        return 0
    # A second row naming the same other hold (its two items share the subject) still leaves it the only one.
    second = subjects.objects.filter(pk__in=list(shared)).annotate(second=Subquery(others[1:2]))
    seconds = dict(second.order_by().values_list("pk", "second"))
    holds = {hold for hold, _ in shared.values()}
    holds |= {other for pk, (_, other) in shared.items() if seconds[pk] in (None, other)}
    holds -= set(marks.objects.filter(hold__in=holds).values_list("hold_id", flat=True))
    marks.objects.bulk_create([marks(hold_id=pk) for pk in sorted(holds)], batch_size=SWEEP_BATCH)
    return len(holds)
