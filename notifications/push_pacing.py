"""When a push may go: never in the person's quiet hours, and at most one per device every ``PACE``.

A push due in quiet hours waits until they end; one due within ``PACE`` of the device's last push waits until
that pace is over. Either way it is not lost: it is sent then, with every other push that waited meanwhile folded
into it ("3 more holds waiting", ``notifications.push``). Whether a device may be pushed to now is taken under
its row's lock (``take_turns``), so two workers sending two pushes at once cannot both send.
Quiet hours are read from the person's settings in their own time zone each time, never cached.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from django.db import transaction
from django.utils import timezone

from notifications.models import Notification, NotificationSettings, PushSubscription
from people import zones

PACE = timedelta(seconds=30)


def quiet_hours_of(user) -> tuple[time, time] | None:
    """``user``'s quiet hours, from and until; None when they have none."""
    hours = NotificationSettings.objects.filter(user=user).values_list("quiet_from", "quiet_until").first()
    return hours if hours and None not in hours else None


def save_quiet_hours(user, start: time | None, end: time | None) -> None:
    """Quiet hours from ``start`` until ``end`` in the person's time zone; both None: none."""
    NotificationSettings.objects.update_or_create(user=user, defaults={"quiet_from": start, "quiet_until": end})
    # What waits for the hours just changed is looked at again: it goes now if it may (``due_for_requeue`` finds it).
    pushes = Notification.objects.filter(user=user, channel=Notification.Channel.PUSH)
    pushes.filter(status=Notification.Status.PENDING).update(next_attempt_at=timezone.now())


def quiet_until(users, now: datetime) -> dict[int, datetime]:
    """When each of ``users`` in quiet hours at ``now`` leaves them, by pk; the others are not in the answer."""
    users = {user.pk: user for user in users}
    hours = {
        user_id: (start, end)
        for user_id, start, end in NotificationSettings.objects.filter(
            user__in=list(users), quiet_from__isnull=False, quiet_until__isnull=False
        ).values_list("user_id", "quiet_from", "quiet_until")
    }
    zone_of = zones.zones_of([users[pk] for pk in hours])
    ends = {pk: end_of_quiet(*hours[pk], now.astimezone(zone_of[pk])) for pk in hours}
    return {pk: end for pk, end in ends.items() if end is not None}


def end_of_quiet(start: time, end: time, local: datetime) -> datetime | None:
    """When quiet hours from ``start`` to ``end`` (each a time of day, past midnight when ``end`` is earlier) end,
    if ``local`` (an aware time in the person's zone) falls in them; None otherwise. Equal times: never quiet.

    Always after ``local``: in the hour a clock goes back, an end that came already at the first pass is taken at the
    second (``fold``); an end inside the hour a clock skips comes that much later (02:30 that never was is 03:30)."""
    moment = local.time().replace(tzinfo=None)
    overnight = end < start
    inside = (start <= moment or moment < end) if overnight else start <= moment < end
    if start == end or not inside:
        return None
    day = local.date() + timedelta(days=1) if overnight and moment >= start else local.date()
    now = local.astimezone(UTC)
    for fold in (0, 1):  # aware times of one zone compare by their clock readings: compare the instants
        ends = datetime.combine(day, end, tzinfo=local.tzinfo).replace(fold=fold)
        if ends.astimezone(UTC) > now:
            return ends
    return None


def take_turns(device_ids, now: datetime) -> dict[int, datetime]:
    """Take the turn of each of these devices whose last push is ``PACE`` old or more; answer, by pk, when each of the
    others may be pushed to. The devices are locked in order while their turns are taken, so two batches sending to
    the same devices at once do not both send to one, nor wait on each other for ever."""
    with transaction.atomic():
        last = dict(
            PushSubscription.objects.select_for_update(no_key=True)
            .filter(pk__in=list(device_ids))
            .order_by("pk")
            .values_list("pk", "last_pushed_at")
        )
        free = [pk for pk, at in last.items() if at is None or at <= now - PACE]
        PushSubscription.objects.filter(pk__in=free).update(last_pushed_at=now)
    return {pk: at + PACE for pk, at in last.items() if pk not in free}
