"""Assigning a hold to a person or a group, with a note: asking a colleague to look at it.

An assignment locks nothing: anyone who may decide the hold still can, and reads
"Assigned to bob (note: …)" first. A hold has one current assignment at most; assigning
again reassigns (the previous one ends), and unassigning ends it. Each is audited with its
note, in the same transaction, and the assignee hears of it (``notifications.notify.assigned``).

Only people and groups who can see the hold may be chosen (``choices``): a reviewer in the
hold's team scopes, or a group whose own scope admits it (or that has none), the auditors'
group aside. An assignee posted that is not among the choices is refused (``NotAssignable``).

The hold's decision or its expiry ends the assignment without a write here: it is read only
for holds still to decide (the queue's rows and filter, the hold page while it can be decided),
so an Undo in the decision's window brings the assignment back, as it brings back its
notifications (``notifications.notify.reopen_for_hold``), and the notifications of a hold
decided or closed resolve as reminders do (``notify.RESOLVED_BY_DECISION``, ``RESOLVED_BY_CLOSING``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from audit import events
from audit.events import holding
from holds.deciding import decidable
from holds.handover import notes
from holds.models import Assignment, Hold
from notifications import away, notify
from people import naming
from reviewqueue import changes, readers, roles
from reviewqueue.viewer import Viewer
from teams import scopes
from teams.models import TeamScope


class NotAssignable(Exception):
    """The hold cannot be assigned so: closed, or the assignee is not among those who can see it."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclasses.dataclass(frozen=True)
class Choice:
    """A person or a group a hold may be assigned to: ``key`` ("user:7", "group:3") is what the form posts."""

    key: str
    label: str
    assignee: object  # a User or a Group

    @property
    def is_group(self) -> bool:
        return isinstance(self.assignee, Group)


def label(assignment: Assignment) -> str:
    """Whom the assignment names: the person's username, or the group's name."""
    return assignment.user.get_username() if assignment.user_id else assignment.group.name


def choices(holds: Iterable[Hold], viewer: Viewer) -> list[Choice]:
    """The people and groups who can see every one of ``holds``: people first, by username, then groups by name.

    People are active reviewers in the holds' team scopes; the viewer is among them, for handing a hold to oneself.
    """
    holds = list(holds)
    people = list(roles.reviewers())
    offered = [
        Choice(f"user:{person.pk}", person.get_username(), person)
        for person in scopes.users_who_may_see(holds, scopes.viewers_of(people))
    ]
    scoped = {scope.group_id: scope for scope in TeamScope.objects.all()}
    for group in Group.objects.exclude(name=roles.AUDITORS).order_by("name"):
        scope = scoped.get(group.pk)
        if scope is None or all(_admits(scope, hold) for hold in holds):
            offered.append(Choice(f"group:{group.pk}", group.name, group))
    return offered


def _admits(scope: TeamScope, hold: Hold) -> bool:
    return scopes.Scope.of(scope.env_patterns, scope.agent_patterns, scope.capability_patterns).contains(hold)


def read_choice(value: str, offered: list[Choice], name: str = "assignee") -> Choice:
    """The posted assignee among ``offered``; one not offered (out of scope, unknown, forged) raises
    ``readers.BadValue``."""
    by_key = {choice.key: choice for choice in offered}
    key = readers.choice(value, name, by_key)
    if not key:
        raise readers.BadValue(name, "choose a person or a group")
    return by_key[key]


def read_note(value: str, name: str = "note") -> str:
    """An assignment's note from a form: optional, as long as a note on the hold may be."""
    return readers.text(value.replace("\r\n", "\n"), name, notes.MAX_NOTE)


def current(hold: Hold) -> Assignment | None:
    """The hold's current assignment, for a hold still to decide (once it is decided or closed, it is over)."""
    return _current(hold).first()


def _current(hold: Hold):
    return Assignment.objects.filter(hold=hold, ended_at__isnull=True).select_related("user", "group", "assigned_by")


def assign(hold: Hold, assignee, note: str, by, now: datetime | None = None) -> Assignment:
    """Assign ``hold`` to ``assignee`` (a User or a Group) with ``note``, for ``by``; reassigns if it was assigned.

    ``assignee`` must be among ``choices([hold], by)``, and the hold still to decide; else ``NotAssignable``.
    """
    if not any(choice.assignee == assignee for choice in choices([hold], by)):
        raise NotAssignable(f"{_name(assignee)} cannot see this hold: choose someone who can.")
    return _assign(hold, assignee, note, by, now or timezone.now())


def _assign(hold: Hold, assignee, note: str, by, now: datetime) -> Assignment:
    """``assign``, for an assignee already checked against the choices."""
    with transaction.atomic():
        _lock_open(hold, now)
        previous = _current(hold).first()
        if previous:
            Assignment.objects.filter(pk=previous.pk).update(ended_at=now, ended_by=by)
        is_user = isinstance(assignee, get_user_model())
        made = Assignment.objects.create(
            hold=hold,
            user=assignee if is_user else None,
            group=None if is_user else assignee,
            note=note,
            assigned_by=by,
            assigned_at=now,
        )
        # Notifications before the audit, as every transaction takes them (hold, notifications, audit chain head):
        # one lock order, so that recording a notification sent cannot deadlock with an assignment.
        notify.assigned(made, by)
        handed = {"actor": by, "hold": hold, "assignee": _name(assignee), "to_group": not is_user, "note": note}
        if previous:
            events.append(holding.reassigned(**handed, previous=label(previous)))
        else:
            events.append(holding.assigned(**handed))
        changes.publish("assignment", [hold])
    return made


def assign_many(holds: list[Hold], assignee, note: str, by) -> tuple[list[Hold], list[Hold]]:
    """Assign each of ``holds`` (the queue's selection) as ``assign`` does, each in its own transaction; return those
    assigned and those no longer to decide, left out (one closed hold stops none of the others).

    ``assignee`` must be among ``choices(holds, by)``: able to see every one of them (checked once for all).
    """
    if not any(choice.assignee == assignee for choice in choices(holds, by)):
        raise NotAssignable(f"{_name(assignee)} cannot see every one of these holds: choose someone who can.")
    assigned, left_out = [], []
    for hold in holds:
        try:
            _assign(hold, assignee, note, by, timezone.now())
        except NotAssignable:
            left_out.append(hold)
        else:
            assigned.append(hold)
    return assigned, left_out


def unassign(hold: Hold, by, note: str = "", now: datetime | None = None) -> bool:
    """End the hold's current assignment, with an optional note; False when it had none."""
    now = now or timezone.now()
    with transaction.atomic():
        _lock_open(hold, now)
        previous = _current(hold).first()
        if previous is None:
            return False
        Assignment.objects.filter(pk=previous.pk).update(ended_at=now, ended_by=by)
        notify.unassigned(hold, by)  # before the audit: one lock order (see ``_assign``)
        events.append(holding.unassigned(actor=by, hold=hold, previous=label(previous), note=note))
        changes.publish("assignment", [hold])
    return True


def _lock_open(hold: Hold, now: datetime) -> None:
    """Lock the hold's row for the change (two assigners take turns); refuse a hold no longer to decide, as its page
    does (closed, or a decision being sent)."""
    locked = Hold.objects.select_for_update(no_key=True).get(pk=hold.pk)
    if decidable.closed_reason(locked, now) or locked.live_decision():
        raise NotAssignable("This hold is no longer waiting for a decision: there is nothing to assign.")


def assigned_to(viewer: Viewer) -> Q:
    """A filter on holds keeping those assigned to ``viewer``, to someone away for whom they stand in, or to one of
    their groups (for the queue, with its rule of holds still to decide)."""
    return Q(
        Exists(
            Assignment.objects.filter(hold=OuterRef("pk"), ended_at__isnull=True).filter(
                Q(user=viewer.user) | Q(user__in=away.delegated_to(viewer.user)) | Q(group__name__in=viewer.group_names)
            )
        )
    )


def current_label() -> Coalesce:
    """An expression for the hold queryset: the current assignee's name, a username or a group's ("" for nobody),
    read with the queue's own query (the queue's "assigned to bob")."""
    current = Assignment.objects.filter(hold=OuterRef("pk"), ended_at__isnull=True)
    return Coalesce(
        Subquery(current.values("user__username")[:1]), Subquery(current.values("group__name")[:1]), Value("")
    )


def _name(assignee) -> str:
    return assignee.get_username() if isinstance(assignee, get_user_model()) else assignee.name


def by_line(assignment: Assignment) -> str:
    """Who assigned it, as every page names a person."""
    return naming.name(assignment.assigned_by)
