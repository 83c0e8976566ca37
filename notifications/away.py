"""Away, with a delegate: while someone is away their reminders, escalations, assignments and mentions go to the
reviewer standing in, and the holds assigned to them count as the delegate's in "assigned to me" and ``n``.

Away is explicit, time-based state: ``NotificationSettings.away_until`` compared with now, read when a message
is addressed and never cached, so it ends by itself at its moment. Delegation moves messages only, never rights:
approving reads nothing here, so a delegate's own claims, groups and approvals decide what they may do.

A delegate must be someone else, an active reviewer, see at least the holds the person sees (their team scopes
contain the person's), and not be away themselves when it is set. A message meant for someone whose delegate
is away by then still goes to the delegate, never on to the delegate's own delegate: one hop, no chains.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from audit import events
from audit.events import roles_and_settings
from notifications.models import NotificationSettings
from people import wording
from reviewqueue import readers, roles
from teams import scopes


@dataclasses.dataclass(frozen=True)
class Away:
    """Someone away now, until ``until``, and who stands in for them (None: their messages go nowhere else)."""

    user: object
    until: datetime
    delegate: object | None


def away_now(users, now: datetime | None = None) -> dict[int, Away]:
    """Those of ``users`` away at ``now``, by pk, with their delegates: one query."""
    now = now or timezone.now()
    by_pk = {user.pk: user for user in users if user}
    rows = NotificationSettings.objects.filter(user__in=list(by_pk), away_until__gt=now).select_related("delegate")
    return {row.user_id: Away(by_pk[row.user_id], row.away_until, row.delegate) for row in rows}


def of(user, now: datetime | None = None) -> Away | None:
    return away_now([user], now).get(user.pk)


def standing_in_words(user, now: datetime | None = None) -> str:
    """ "alice is away; bob is standing in" while ``user`` is away with a delegate ("" otherwise): what a hold
    assigned to them says."""
    gone = of(user, now) if user else None
    if not (gone and gone.delegate and gone.delegate.is_active):
        return ""
    return f"{user.get_username()} is away; {gone.delegate.get_username()} is standing in"


def delegated_to(user):
    """The users ``user`` stands in for now (away, with ``user`` their delegate), as a subquery of pks: what a
    delegate's "assigned to me" and ``n`` also take in. The time is the database's, at the query."""
    return NotificationSettings.objects.filter(delegate=user, away_until__gt=Now()).values("user")


def reroute(recipients: list, now: datetime | None = None) -> list[tuple[object, Away | None]]:
    """Each recipient as (whom to tell, on whose behalf): someone away with a delegate is replaced by the delegate
    with their ``Away``; anyone else is told themselves (None). One hop only (see the module's docstring)."""
    away = away_now(recipients, now)
    routed = []
    for user in recipients:
        gone = away.get(user.pk) if user else None
        if gone and gone.delegate and gone.delegate.is_active:
            routed.append((gone.delegate, gone))
        else:
            routed.append((user, None))
    return routed


def on_behalf(gone: Away) -> str:
    """How a rerouted message names whom it was meant for: "for alice, who is away until 2026-12-04 17:00 CET"."""
    return f"for {gone.user.get_username()}, who is away until {wording.moment(gone.until)}"


def read_until(value: str, zone) -> datetime | None:
    """The form's "away until": a date and time in the person's ``zone`` (or with an offset); blank: not away."""
    moment = readers.moment(value, "away_until")
    if moment is not None and datetime.fromisoformat(value.strip()).tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment


def check_until(until: datetime | None, now: datetime | None = None) -> None:
    """``readers.BadValue`` for an "away until" already past (None, ending away, is fine)."""
    if until is not None and until <= (now or timezone.now()):
        raise readers.BadValue("away_until", "choose a time in the future")


def read_delegate(viewer, username: str, now: datetime | None = None):
    """The delegate named in the form, checked (``check_delegate``); blank: none. ``readers.BadValue`` says why one
    is refused."""
    username = readers.text(username, "delegate", max_length=150).strip()
    if not username:
        return None
    delegate = get_user_model().objects.filter(username=username, is_active=True).first()
    if delegate is None:
        raise readers.BadValue("delegate", "no active reviewer has that username")
    check_delegate(viewer, delegate, now)
    return delegate


def check_delegate(viewer, delegate, now: datetime | None = None) -> None:
    """``readers.BadValue`` unless ``delegate`` may stand in for ``viewer`` (see the module's docstring): what the
    Preferences form and the admin both ask."""
    username = delegate.get_username()
    if not delegate.is_active:
        raise readers.BadValue("delegate", f"{username} is not active")
    if delegate.pk == viewer.pk:
        raise readers.BadValue("delegate", "choose someone else to stand in for you")
    standing_in = scopes.viewer_of(delegate)
    if not roles.can_review(standing_in):
        raise readers.BadValue("delegate", f"{username} is not a reviewer")
    if not sees_all_of(standing_in, viewer):
        raise readers.BadValue("delegate", f"{username} cannot see every hold you can")
    if of(delegate, now):
        raise readers.BadValue("delegate", f"{username} is away too; choose someone who is here")


def sees_all_of(delegate, viewer) -> bool:
    """Whether the ``delegate`` viewer sees at least the holds ``viewer`` sees: every hold, or every scope of theirs."""
    if delegate.scopes is None:
        return True
    return viewer.scopes is not None and set(viewer.scopes) <= set(delegate.scopes)


def save(user, until: datetime | None, delegate, by) -> NotificationSettings:
    """Set or end ``user``'s away (``until`` None ends it), audited in the same transaction; ``by`` did it: the
    person on their Preferences, or an admin for someone absent. Returns the user's settings row."""
    with transaction.atomic():
        settings_row, _ = NotificationSettings.objects.select_for_update(no_key=True).get_or_create(user=user)
        before = (settings_row.away_until, settings_row.delegate_id)
        settings_row.away_until, settings_row.delegate = until, delegate if until else None
        if before == (settings_row.away_until, settings_row.delegate_id):
            return settings_row
        settings_row.save(update_fields=["away_until", "delegate"])
        if until:
            message = f"away until {until.isoformat()}" + (
                f", {delegate.get_username()} standing in" if delegate else ""
            )
        else:
            message = "back: away ended"
        events.append(
            roles_and_settings.setting_changed(
                actor=by,
                model="notifications.away",
                object_id=str(user.pk),
                object_repr=user.get_username(),
                action="changed",
                message=message,
                details={
                    "away_until": until.isoformat() if until else None,
                    "delegate": delegate.get_username() if delegate else None,
                },
            )
        )
    return settings_row
