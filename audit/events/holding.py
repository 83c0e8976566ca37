"""The events of a hold's life here: first seen, claimed, handed over, noted on, closed, and the messages about it.

One keyword-only builder per kind, named as the kind; each returns the ``Entry`` that
``audit.events`` appends. ``actor`` is the person who did it (none: the system).
"""

from __future__ import annotations

from collections.abc import Iterable

from audit.events import Entry
from audit.models import EventKind


def hold_seen(*, hold, question: str, items: Iterable[tuple[str, str, object]], clean: bool = False) -> Entry:
    """Sync saw ``hold`` for the first time: its question and its items as (id, title, data), as the agent proposed
    them. ``clean``: the values are already as the database gives JSON back (sync's, made storable)."""
    payload = {"question": question, "items": [{"id": id_, "title": title, "data": data} for id_, title, data in items]}
    return Entry(EventKind.HOLD_SEEN, hold=hold, payload=payload, clean=clean)


def claimed(*, actor, hold) -> Entry:
    return Entry(EventKind.CLAIMED, actor=actor, hold=hold)


def released(*, actor, hold) -> Entry:
    return Entry(EventKind.RELEASED, actor=actor, hold=hold)


def taken_over(*, actor, hold, previous: str) -> Entry:
    """``actor`` took the claim of ``previous`` (a username; "" when the claim had just ended)."""
    return Entry(EventKind.TAKEN_OVER, actor=actor, hold=hold, payload={"from": previous})


def assigned(*, actor, hold, assignee: str, to_group: bool, note: str) -> Entry:
    """``hold`` handed to ``assignee`` (a username, or a group's name when ``to_group``), with the assigner's note."""
    return Entry(EventKind.ASSIGNED, actor=actor, hold=hold, payload=_assignment(assignee, to_group, note))


def reassigned(*, actor, hold, assignee: str, to_group: bool, note: str, previous: str) -> Entry:
    """As ``assigned``, from the ``previous`` assignee's label."""
    payload = _assignment(assignee, to_group, note) | {"from": previous}
    return Entry(EventKind.REASSIGNED, actor=actor, hold=hold, payload=payload)


def _assignment(assignee: str, to_group: bool, note: str) -> dict:
    return {"assignee": assignee, "assignee_kind": "group" if to_group else "person", "note": note}


def unassigned(*, actor, hold, previous: str, note: str) -> Entry:
    return Entry(EventKind.UNASSIGNED, actor=actor, hold=hold, payload={"from": previous, "note": note})


def note_added(*, actor, hold, note, told: Iterable) -> Entry:
    """``actor``'s ``note`` on ``hold``, and the people its mentions told."""
    payload = {"note": note.pk, "text": note.text, "told": [person.get_username() for person in told]}
    return Entry(EventKind.NOTE_ADDED, actor=actor, hold=hold, payload=payload)


def expired(*, hold, on_platform: bool) -> Entry:
    """``hold`` expired: here, by the expiry sweep, or ``on_platform``, which says who decided it and when."""
    return Entry(EventKind.EXPIRED, hold=hold, payload=_platform_said(hold) if on_platform else None)


def decided_elsewhere(*, hold) -> Entry:
    """The platform says ``hold`` was decided elsewhere: by whom and when, as it says."""
    return Entry(EventKind.DECIDED_ELSEWHERE, hold=hold, payload=_platform_said(hold))


def _platform_said(hold) -> dict:
    return {"decided_by": hold.decided_by, "decided_at": hold.decided_at}


def notification_sent(*, notification) -> Entry:
    return Entry(EventKind.NOTIFICATION_SENT, hold=notification.hold, payload=_notification(notification, ""))


def notification_failed(*, notification, error: str) -> Entry:
    return Entry(EventKind.NOTIFICATION_FAILED, hold=notification.hold, payload=_notification(notification, error))


def _notification(notification, error: str) -> dict:
    return {
        "channel": notification.channel,
        "recipient": notification.recipient_key,
        "title": notification.title,
        "error": error,
    }
