"""Sending pushes in batches: what a batch's pushes share is read once, and they are posted concurrently over
connections kept alive (``push.post_all``). One urgent hold makes a push to every subscribed reviewer's device.

Each push is still a notification row of its own, sent at most once, as ``sending`` sends the others: the batch takes
its rows from pending to sending under their locks (a row another worker holds is skipped), takes only those due,
and records each one's end (``ending``). Before going, a push may be held back until its person's quiet hours end
or its device's pace is over (``push_pacing``): it stays pending until then, counting no attempt. One that goes
takes with it every other push waiting for its device, folded into its words ("2 more holds waiting"). A push
service answering 404 or 410 ends the device (``push_devices.prune``); 429, 5xx or no answer leaves the push pending
with backoff, up to ``NOTIFY_RETRY_LIMIT`` attempts, as any notification.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from notifications import digest, ending, hold_links, push, push_devices, push_pacing
from notifications.ending import End
from notifications.models import Notification

logger = logging.getLogger(__name__)

BATCH = 100  # pushes a task takes: one urgent hold makes one per subscribed device
Status = Notification.Status


@dataclasses.dataclass
class Going:
    """A push about to go, and the pushes waiting for its device that it tells of (by pk, with their holds)."""

    row: Notification
    folded: dict[int, set[int]]  # each taken by this batch, in sending
    gone: int = 0  # the status its push service answered when the device's subscription had ended
    delivered: bool = False
    done: bool = False  # its end is known (delivered, or failed and recorded)

    @property
    def more(self) -> int:
        """The other holds the folded pushes were about."""
        return len(set().union(*self.folded.values()) - {self.row.hold_id})


def send(ids: list[int]) -> float | None:
    """Send those of these pushes that are pending and due; answer the seconds until the next of them is due, when
    that is soon enough for the task to wait (a pace or a retry), else None (``sending.due_for_requeue`` finds it)."""
    now = timezone.now()
    rows = _claim(ids, now)
    moot = [row for row in rows if _moot(row)]
    ends = [_resolved(row) for row in moot]
    going = _not_held_back([row for row in rows if row not in moot], now)
    try:
        ends += _sent(going, now)
    except Exception as error:  # a bug must not leave the rows stuck in sending: record them as failed
        logger.exception("pushes %s failed", [entry.row.pk for entry in going])
        failure = f"{type(error).__name__}: {error}"
        ends += [End(entry.row, entry.row.attempts + 1, Status.FAILED, failure) for entry in going if not entry.done]
    ending.record(ends)
    for entry in going:
        if not entry.delivered:  # what it would have folded in goes by itself, or with the next push to the device
            Notification.objects.filter(pk__in=list(entry.folded), status=Status.SENDING).update(
                status=Status.PENDING, next_attempt_at=now
            )
        if entry.gone:
            push_devices.prune(entry.row.push_subscription_id, entry.gone)
    return _next_due(ids)


def _moot(row: Notification) -> bool:
    """Whether nobody need get this push any more: its hold was decided or closed, its digest's holds all were, or
    its device was removed."""
    if row.resolved_at or not row.push_subscription_id:
        return True
    return row.event == Notification.Event.NEW_HOLDS and not digest.narrow(row)


def _resolved(row: Notification) -> End:
    if row.resolved_at:
        reason = row.resolved_reason
    elif row.push_subscription_id:
        reason = "every hold listed was decided or closed"
    else:
        reason = "the device was removed"
    return End(row, row.attempts + 1, Status.RESOLVED, f"not sent: {reason}")


def _claim(ids: list[int], now: datetime) -> list[Notification]:
    with transaction.atomic():
        rows = list(
            Notification.objects.select_for_update(of=("self",), skip_locked=True, no_key=True)
            .select_related("user", "hold", "push_subscription")
            .filter(pk__in=ids, channel=Notification.Channel.PUSH, status=Status.PENDING, next_attempt_at__lte=now)
            .order_by("pk")
        )
        Notification.objects.filter(pk__in=[row.pk for row in rows]).update(
            status=Status.SENDING, next_attempt_at=now + ending.LEASE
        )
    return rows


def _not_held_back(rows: list[Notification], now: datetime) -> list[Going]:
    """The pushes that go now, each with the pushes it folds in; the others are left pending until they may go."""
    quiet = push_pacing.quiet_until([row.user for row in rows], now)
    held = {row.pk: quiet[row.user_id] for row in rows if row.user_id in quiet}
    first_of = {}  # each device's first push of the batch: the one that goes, the others fold into it
    for row in rows:
        if row.pk not in held:
            first_of.setdefault(row.push_subscription_id, row)
    waits = push_pacing.take_turns(list(first_of), now)
    held |= {row.pk: waits[row.push_subscription_id] for row in rows if row.push_subscription_id in waits}
    until = defaultdict(list)  # a device's pushes wait alike, as do a person's: one update for each moment
    for pk, moment in held.items():
        until[moment].append(pk)
    for moment, pks in until.items():
        Notification.objects.filter(pk__in=pks).update(status=Status.PENDING, next_attempt_at=moment)
    going = {device: Going(row, {}) for device, row in first_of.items() if device not in waits}
    for row in rows:
        if row.push_subscription_id in going and going[row.push_subscription_id].row is not row:
            going[row.push_subscription_id].folded[row.pk] = _holds_of(row.hold_id, row.holds)
    # The pushes still waiting for these devices are taken too, as the batch's own are: no other worker sends one
    # while this batch tells of it.
    with transaction.atomic():
        waiting = list(
            Notification.objects.select_for_update(skip_locked=True, no_key=True)
            .filter(push_subscription__in=list(going), status=Status.PENDING, resolved_at__isnull=True)
            .values_list("pk", "push_subscription", "hold_id", "holds")
        )
        Notification.objects.filter(pk__in=[pk for pk, *_ in waiting]).update(
            status=Status.SENDING, next_attempt_at=now + ending.LEASE
        )
    for pk, device, hold_id, listed in waiting:
        going[device].folded[pk] = _holds_of(hold_id, listed)
    return list(going.values())


def _holds_of(hold_id: int | None, listed: list) -> set[int]:
    return {hold_id} if hold_id else {shown["pk"] for shown in listed if isinstance(shown, dict)}


def _sent(going: list[Going], now: datetime) -> list[End]:
    """Post the pushes that go, and answer how each ended, the pushes folded into those delivered with them. A push
    that cannot even be written (its hold's links unreadable) or prepared (a device's key no browser would give, say)
    fails alone."""
    prepared, ends, signatures = [], [], {}
    links, amounts = _shared(going, now)
    for entry in going:
        hold = entry.row.hold
        try:
            for read in (links.get(entry.row.pk), amounts.get(entry.row.hold_id)):
                if isinstance(read, Exception):
                    raise read
            content = push.payload(
                entry.row, links.get(entry.row.pk), amounts.get(entry.row.hold_id, []), entry.more, now
            )
            request = push.prepare(entry.row.push_subscription, content, hold and hold.expires_at, now, signatures)
        except (push.Refused, push.Unavailable) as failure:
            ends += _failed(entry, failure, now)
        except Exception as error:
            logger.exception("push %s could not be prepared", entry.row.pk)
            ends += _failed(entry, push.Refused(f"{type(error).__name__}: {error}"), now)
        else:
            prepared.append((entry, request))
    outcomes = push.post_all([request for _, request in prepared])
    for (entry, _), outcome in zip(prepared, outcomes, strict=True):
        if outcome is None:
            entry.delivered = entry.done = True
            ends.append(End(entry.row, entry.row.attempts + 1, Status.SENT))
            ends += _folded(entry)
        else:
            ends += _failed(entry, outcome, now)
    return ends


def _shared(going: list[Going], now: datetime) -> tuple[dict, dict]:
    """What pushes about one hold share, read once for each hold: its links for every recipient (by push) and its
    amounts (by hold). A hold they cannot be read for has the exception instead, for its pushes alone to fail."""
    by_hold = defaultdict(list)
    for entry in going:
        by_hold[entry.row.hold_id].append(entry)
    links, amounts = {}, {}
    for hold_id, entries in by_hold.items():
        if hold_id is None:
            continue
        hold = entries[0].row.hold
        try:
            found = hold_links.links_for_many(hold, [entry.row.user for entry in entries], now, for_push=True)
            amounts[hold_id] = hold_links.amounts_of(hold, sure=True)  # no agent text: an unread amount is as written
        except Exception as error:
            logger.exception("the pushes of hold %s could not be written", hold_id)
            amounts[hold_id] = error
            continue
        links |= {entry.row.pk: each for entry, each in zip(entries, found, strict=True)}
    return links, amounts


def _folded(entry: Going) -> list[End]:
    """The pushes told of within ``entry``'s, now folded."""
    still = Notification.objects.filter(pk__in=list(entry.folded), status=Status.SENDING)
    message = f"sent within the push of notification {entry.row.pk}"
    return [End(row, row.attempts + 1, Status.FOLDED, message) for row in still]


def _failed(entry: Going, failure: Exception, now: datetime) -> list[End]:
    """How a push that did not go ends: pruned (``Gone``), failed, or pending again with backoff (``Unavailable``,
    ``ending.retry_or_fail``)."""
    entry.done = True
    row, attempts = entry.row, entry.row.attempts + 1
    if isinstance(failure, push.Gone):
        entry.gone = failure.status
        return [End(row, attempts, Status.PRUNED, str(failure))]
    if isinstance(failure, push.Unavailable):
        ending.retry_or_fail(row, attempts, str(failure), now)
        return []
    return [End(row, attempts, Status.FAILED, str(failure))]


def _next_due(ids: list[int]) -> float | None:
    due = (
        Notification.objects.filter(pk__in=ids, status=Status.PENDING)
        .order_by("next_attempt_at")
        .values_list("next_attempt_at", flat=True)
        .first()
    )
    if due is None:
        return None
    wait = max((due - timezone.now()).total_seconds(), 0.0)
    return wait if wait <= settings.DELIVERY_RETRY_MAX_SECONDS else None
