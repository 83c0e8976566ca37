"""Presence: who has a hold's page open, shown to the others; it claims nothing and is not audited.

A reviewer's open page renews its presence with a heartbeat every ``HEARTBEAT_SECONDS``;
presence not renewed for ``LIVE_SECONDS`` (the page closed, or lost its network) has ended.
The same heartbeat keeps a reviewer's claim alive (``lifecycle.keep_claim``) while they decide.
"""

from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import connection

from holds.models import Hold, HoldFirstOpened, HoldViewer
from reviewqueue import changes
from reviewqueue.sql import writes

HEARTBEAT_SECONDS = 20
# Three heartbeats: one late or lost request does not end it, a closed page ends it within a minute.
LIVE_SECONDS = 60


def live_window() -> timedelta:
    return timedelta(seconds=LIVE_SECONDS)


def _upsert_sql() -> str:
    """One statement noting a viewer (hold pk, user pk, seen until): no transaction around it."""
    return writes.upsert_sql(HoldViewer, ("hold_id", "user_id", "seen_until"), ("hold_id", "user_id"), ("seen_until",))


def note_viewing(hold: Hold, user, now: datetime) -> None:
    """``user`` has the hold's page open now."""
    writes.upsert(_upsert_sql(), [hold.pk, user.pk, now + live_window()])


def forget_ended(user, now: datetime) -> None:
    """Forget ``user``'s presence that has ended: pages closed without their ``leave`` beacon.

    The heartbeat does it (every open page sends one), so opening a hold stays one statement.
    """
    HoldViewer.objects.filter(user=user, seen_until__lte=now).delete()


def _first_opened_sql() -> str:
    """One statement noting when a user first opened a hold (hold pk, user pk, opened at); a later opening keeps it."""
    return writes.upsert_sql(HoldFirstOpened, ("hold_id", "user_id", "opened_at"), ("hold_id", "user_id"), ())


def note_viewing_and_others(hold: Hold, user, now: datetime) -> list:
    """``note_viewing`` and the first opening (``HoldFirstOpened``, for the statistics), then ``others_looking``: in
    one round trip on PostgreSQL, for the hold's page (the same statements, ``others_looking``'s compiled by the ORM,
    one after the other in a ``WITH``).

    The list reads the rows as they were before the note, which changes nothing: it leaves ``user`` out.
    """
    notes = [(_upsert_sql(), [hold.pk, user.pk, now + live_window()]), (_first_opened_sql(), [hold.pk, user.pk, now])]
    changes.publish("presence", [hold])
    if connection.vendor != "postgresql":  # SQLite allows no INSERT inside WITH
        for sql, params in notes:
            writes.upsert(sql, params)
        return others_looking(hold, user, now)
    return writes.upsert_then(notes, _others_looking(hold, user, now))


def leave(hold: Hold, user) -> None:
    """``user`` closed the hold's page."""
    if HoldViewer.objects.filter(hold=hold, user=user).delete()[0]:
        changes.publish("presence", [hold])


def others_looking(hold: Hold, user, now: datetime) -> list:
    """The other users who have the hold's page open now, by name."""
    return list(_others_looking(hold, user, now))


def _others_looking(hold: Hold, user, now: datetime):
    return (
        get_user_model()
        .objects.filter(
            pk__in=HoldViewer.objects.filter(hold=hold, seen_until__gt=now).exclude(user=user).values("user")
        )
        .order_by("username")
    )
