"""A new-holds digest at its sending: only the holds still waiting for a decision.

A digest is written when its window closes and sent moments later, or much later
while the mail server is down. A hold decided, expired or cancelled in between is
dropped when the digest is sent (``narrow``), so no digest mentions a hold that
no longer needs anyone; one with nothing left is not sent at all.
"""

from __future__ import annotations

from django.utils import timezone

from holds.models import Hold
from notifications import rendering
from notifications.models import Notification


def narrow(notification: Notification) -> bool:
    """Drop the listed holds no longer waiting for a decision, saving what is left; False when nothing is.

    One query however long the digest, and a second when it shrinks.
    """
    listed = notification.holds
    waiting = set(
        Hold.objects.waiting(timezone.now()).filter(pk__in=[h.get("pk") for h in listed]).values_list("pk", flat=True)
    )
    still = [h for h in listed if h.get("pk") in waiting or "pk" not in h]  # no "pk": listed before it was kept
    if len(still) == len(listed):
        return True
    if not still:
        return False
    # Written again from the holds as the digest keeps them, their expiries already worded in the recipient's zone.
    notification.title, notification.body = rendering.render(Notification.Event.NEW_HOLDS, {"listed": still})
    notification.holds = still
    Notification.objects.filter(pk=notification.pk).update(
        holds=still, title=notification.title, body=notification.body
    )
    return True
