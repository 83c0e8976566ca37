"""Which events each person may hear of, and on which channels they chose to (or get without choosing)."""

from __future__ import annotations

from approvals.models import Approval, ApprovalPolicy
from holds.models import Hold
from notifications import push_devices
from notifications.models import Notification, NotificationSettings
from reviewqueue import roles
from reviewqueue.viewer import Viewer

Event = Notification.Event
Channel = Notification.Channel

# Which events each role may subscribe to, and what a user gets without choosing.
EVENTS_FOR_ROLE = {
    roles.REVIEWERS: [
        Event.NEW_HOLDS,
        Event.EXPIRING_SOON,
        Event.NOT_APPLIED,
        Event.ASSIGNED,
        Event.MENTIONED,
        Event.STAGE_WAITING,
    ],
    roles.AUDITORS: [Event.EXPIRED, Event.NOT_APPLIED, Event.DEFAULT_OUTCOME],
}
# Push reaches only the devices a person added (``push_devices``): by default it tells of what asks them to act soon.
DEFAULT_CHANNELS = {
    Event.NEW_HOLDS: [],  # a digest is opt-in
    Event.EXPIRING_SOON: [Channel.IN_APP, Channel.EMAIL, Channel.PUSH],
    Event.EXPIRED: [Channel.IN_APP, Channel.EMAIL],
    Event.NOT_APPLIED: [Channel.IN_APP, Channel.EMAIL],
    Event.ESCALATED: [Channel.IN_APP, Channel.EMAIL, Channel.PUSH],
    Event.STAGE_WAITING: [Channel.IN_APP, Channel.EMAIL, Channel.PUSH],
    Event.DEFAULT_OUTCOME: [Channel.IN_APP, Channel.EMAIL],
    Event.ASSIGNED: [Channel.IN_APP, Channel.EMAIL, Channel.PUSH],
    Event.MENTIONED: [Channel.IN_APP, Channel.EMAIL, Channel.PUSH],
}
USER_CHANNELS = [Channel.IN_APP, Channel.EMAIL, Channel.PUSH]
# A decision still undelivered is announced to whoever asked to hear of decisions not applied.
PREFERENCE_FOR = {Event.UNDELIVERED: Event.NOT_APPLIED}


def subscribable_events(viewer: Viewer) -> list[str]:
    """The events of the user's roles; expiries when they gave an approval of an open hold (its expiry would tell
    them); escalations when they are in a policy's escalation group."""
    events = []
    for group, group_events in EVENTS_FOR_ROLE.items():
        if roles.in_group(viewer, group):
            events += [event for event in group_events if event not in events]
    user = viewer.user
    if Event.EXPIRED not in events and Approval.objects.filter(approver=user, hold__status=Hold.Status.OPEN).exists():
        events.append(Event.EXPIRED)
    if ApprovalPolicy.objects.filter(escalation_group__in=user.groups.all()).exists():
        events.append(Event.ESCALATED)
    return events


def channels_for(user, event: str) -> list[str]:
    return channels_by_user([user], event)[user.pk]


def channels_offered() -> list[str]:
    """The channels a person may choose now: push only while the installation has it (``push_devices.enabled``)."""
    return [channel for channel in USER_CHANNELS if channel != Channel.PUSH or push_devices.enabled()]


def save_preferences(viewer: Viewer, channels_by_event: dict[str, list[str]]) -> None:
    """Save the channels chosen for each event the person may hear of; a channel not offered now (push while it is
    off) keeps what they chose before, for when it is offered again."""
    allowed, user = subscribable_events(viewer), viewer.user
    offered = channels_offered()
    before = {event: _chosen([user], event)[user.pk] for event in allowed}
    cleaned = {
        event: [
            c for c in USER_CHANNELS if (c in channels_by_event.get(event, []) if c in offered else c in before[event])
        ]
        for event in allowed
    }
    NotificationSettings.objects.update_or_create(user=user, defaults={"channels_by_event": cleaned})


def channels_by_user(users, event: str) -> dict[int, list[str]]:
    """Each user's channels for ``event`` among those offered now, by pk: one query however many users."""
    offered = channels_offered()
    return {pk: [c for c in chosen if c in offered] for pk, chosen in _chosen(users, event).items()}


def _chosen(users, event: str) -> dict[int, list[str]]:
    """Each user's channels for ``event`` as they chose them (or get without choosing), offered now or not."""
    event = PREFERENCE_FOR.get(event, event)
    users = list(users)
    chosen = dict(NotificationSettings.objects.filter(user__in=users).values_list("user_id", "channels_by_event"))
    return {
        user.pk: [c for c in chosen[user.pk][event] if c in USER_CHANNELS]
        if user.pk in chosen and event in chosen[user.pk]
        else list(DEFAULT_CHANNELS.get(event, []))
        for user in users
    }
