"""One bad hold never stops a sweep: the one rule every periodic sweep follows for each hold it handles.

A sweep (the policies' approvals and default outcomes, escalation, the expiry sweep and its reminders, the
re-queues of deliveries and notifications …) handles each hold in a savepoint of its own (``each``), or its
batch in one and, should that fail, each hold again alone (``batched``). A hold whose handling raises is
rolled back and left as it was, to people (its next sweep tries again); the failure is logged with the hold's
id (or the decision's, for the sweeps over decisions) and sent as ``failed`` (``sweep``: the sweep's name,
``subject``: those log fields), which ``operations`` counts for ``/metrics``
(``reviewqueue_sweep_failures_total``). The rest go on.

An ``Exception`` only: a worker's shutdown (``SystemExit``, ``KeyboardInterrupt``) still ends the sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

# Sent once for each hold whose handling failed, with ``sweep`` and ``subject``; its receivers' own failures are
# logged, never raised into the sweep.
failed = Signal()


def hold_of(subject: Any) -> dict[str, Any]:
    """The log fields naming a subject that is a hold (the default): its ``hold_id``, as the log context names it."""
    return {"hold_id": subject.pk}


def decision_of(subject: Any) -> dict[str, Any]:
    """The log fields naming a decision, given as itself or its id."""
    return {"decision_id": getattr(subject, "pk", subject)}


def each[Subject, Result](
    sweep: str,
    subjects: Iterable[Subject],
    handle: Callable[[Subject], Result],
    named: Callable[[Subject], dict[str, Any]] = hold_of,
) -> Iterator[tuple[Subject, Result]]:
    """``handle`` each of ``subjects`` in its own savepoint, yielding (subject, its result) for those handled; one
    that raises is rolled back, reported (``report``) and skipped."""
    for subject in subjects:
        try:
            with transaction.atomic():
                result = handle(subject)
        except Exception:
            report(sweep, named(subject))
            continue
        yield subject, result


def batched[Subject, Result](
    sweep: str,
    subjects: list[Subject],
    handle_all: Callable[[list[Subject]], list[Result]],
    named: Callable[[Subject], dict[str, Any]] = hold_of,
) -> list[Result]:
    """``handle_all(subjects)`` in one savepoint, the quick way; should it raise, ``handle_all([subject])`` for each
    subject in its own (``each``), so that only the bad ones fail. Returns what every call that succeeded returned."""
    if not subjects:
        return []
    try:
        with transaction.atomic():
            return handle_all(subjects)
    except Exception:
        if len(subjects) == 1:
            report(sweep, named(subjects[0]))
            return []
        logger.warning("sweep %s failed on a batch of %d holds: handling each alone", sweep, len(subjects))
    return [result for _, results in each(sweep, subjects, lambda one: handle_all([one]), named) for result in results]


def report(sweep: str, subject: dict[str, Any]) -> None:
    """Log the exception being handled as sweep ``sweep``'s failure on ``subject`` (its log fields, ``hold_of``), and
    send ``failed``."""
    named = " ".join(f"{field}={value}" for field, value in subject.items())
    logger.exception("sweep %s failed on %s and left it as it was, to people", sweep, named, extra=subject)
    for receiver, problem in failed.send_robust(sender=None, sweep=sweep, subject=subject):
        if isinstance(problem, Exception):
            logger.error("sweep %s: %s could not count a failure: %r", sweep, receiver, problem)
