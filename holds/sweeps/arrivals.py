"""Urgent arrivals: a hold that reaches the queue already close to its expiry, or already due to escalate, is
announced by the sync that mirrored it, not by the next sweep.

Otherwise such a hold would wait for the expiry sweep (every ``EXPIRY_SWEEP_SECONDS``) to be reminded of, or for
the escalation sweep to be escalated, and a hold with minutes left would lose them to a schedule. So right after
a sync has committed, ``announce`` hands the holds it first saw to the very functions the sweeps call,
``expiry.remind`` and ``escalation.sweep``, narrowed to those holds: the same rules, the same recipients and the
same once-only guarantees (a reminder is made once per hold, an escalation is unique per hold, and a notification
per event, subject, channel and recipient), so the later sweep finds nothing left to send. A hold announced here
still waits for the new-holds digest, which lists every new hold for those who chose it.

The holds a sync first saw are the open ones whose ``first_seen_at`` is at or after the sync's start: each write
of new holds stamps it with its own moment, and two syncs of one env never overlap (``holds.mirror.sync``'s lease).
A hold another env's sync saw meanwhile may be among them; announcing it here too is harmless, for the same
once-only reasons. The sending of each notification is queued when its transaction commits, as always.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from approvals import escalation
from holds.models import Hold
from holds.sweeps import expiry


def announce(since: datetime, now: datetime | None = None) -> None:
    """Remind about, and escalate, the holds first seen since ``since`` that are due a reminder or an escalation."""
    now = now or timezone.now()
    arrived = Hold.objects.filter(status=Hold.Status.OPEN, first_seen_at__gte=since)
    expiry.remind(now, among=arrived)
    escalation.sweep(now, among=arrived)
