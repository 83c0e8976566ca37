"""Presence: who has a hold's page open, shown to the others; it claims nothing and is not audited.

A reviewer's open page renews its presence with a heartbeat every ``HEARTBEAT_SECONDS``;
presence not renewed for ``LIVE_SECONDS`` (the page closed, or lost its network) has ended.
The same heartbeat keeps a reviewer's claim alive (``claims.keep_alive``) while they decide.
"""

from datetime import datetime, timedelta

from django.contrib.auth import get_user_model

from holds.models import Hold, HoldViewer

HEARTBEAT_SECONDS = 20
# Three heartbeats: one late or lost request does not end it, a closed page ends it within a minute.
LIVE_SECONDS = 60


def live_window() -> timedelta:
    return timedelta(seconds=LIVE_SECONDS)


def note_viewing(hold: Hold, user, now: datetime) -> None:
    """``user`` has the hold's page open now; their presence elsewhere that has ended is forgotten."""
    HoldViewer.objects.filter(user=user, seen_until__lte=now).delete()
    HoldViewer.objects.bulk_create(
        [HoldViewer(hold=hold, user=user, seen_until=now + live_window())],
        update_conflicts=True,
        unique_fields=["hold", "user"],
        update_fields=["seen_until"],
    )


def leave(hold: Hold, user) -> None:
    """``user`` closed the hold's page."""
    HoldViewer.objects.filter(hold=hold, user=user).delete()


def others_looking(hold: Hold, user, now: datetime) -> list:
    """The other users who have the hold's page open now, by name."""
    return list(
        get_user_model()
        .objects.filter(pk__in=HoldViewer.objects.filter(hold=hold, seen_until__gt=now).exclude(user=user).values("user"))
        .order_by("username")
    )
