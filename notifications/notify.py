"""Who hears about what: each event's recipients, and the notifications addressed to them (``create``).

What a message says is written from its event's templates (``notifications.rendering``);
on which channels a person hears of an event, ``notifications.subscriptions`` knows.

The rows are created in the transaction of the change they report, unique per
(event, subject, channel, recipient), so a retried task or a second scheduler
cannot create a second one; their sending is queued when that transaction
commits (``notifications/sending.py``). In-app notifications need no sending:
the row is the message.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from approvals import awaiting
from approvals.waiting import open_rounds
from approvals.wording import approval_words
from holds.models import Assignment, Decision, Hold, Note
from notifications import away, push_devices, rendering, sending, subscriptions
from notifications.models import DigestState, Notification, PushSubscription, WebhookChannel
from notifications.signals import holds_changed
from people import naming, wording, zones
from reviewqueue import changes, roles
from teams import scopes

Event = Notification.Event
Channel = Notification.Channel


def link_to(hold: Hold) -> str:
    return settings.SITE_URL + reverse("hold", args=[hold.pk])


# Events


@dataclasses.dataclass(frozen=True)
class Message:
    """What one notification is about and whom it tells, before ``create`` writes it (``rendering``) in each
    recipient's time zone and addresses it."""

    subject_key: str
    recipients: list
    context: dict  # what the event's templates are given, besides ``link``, ``listed`` and ``on_behalf``
    link: str
    hold: Hold | None = None
    decision: Decision | None = None
    # The Hold rows a digest lists: like ``hold``, each must be in a recipient's team scopes (``create``).
    listed: list[Hold] = dataclasses.field(default_factory=list)
    on_behalf: away.Away | None = None  # a delegate's copy, for this person away
    to_webhooks: bool = True  # False for a copy of a subject that the webhooks receive in another message


def about(hold: Hold, subject_key: str, recipients: list, decision: Decision | None = None, **context) -> Message:
    """A message about ``hold``: its templates are given the hold, its decision if any, and ``context``."""
    context = {"hold": hold, "decision": decision, **context}
    return Message(subject_key, recipients, context, link_to(hold), hold=hold, decision=decision)


def expiring_soon(holds: list[Hold], now: datetime) -> list[Notification]:
    """Remind the reviewer holding each hold's claim; when nobody claimed it, the people of the stage its approval
    chain waits for (``awaiting.next_approvers``), or every reviewer."""
    reviewers = list(roles.reviewers())
    messages = []
    for hold in holds:
        claimant, stage = hold.claimant(now), awaiting.next_approvers(hold)
        told = [claimant] if claimant else (list(stage or []) or reviewers)  # a blocked stage: every reviewer
        minutes = max(1, round((hold.expires_at - now).total_seconds() / 60))
        messages.append(about(hold, f"hold:{hold.pk}", told, minutes=minutes))
    return create(Event.EXPIRING_SOON, standing_in(messages, now))


def expired(holds: list[Hold]) -> list[Notification]:
    """Tell the auditors these holds expired with nobody deciding them, and the approvers of a round left waiting."""
    auditors = list(roles.members(roles.AUDITORS))
    lapsed = open_rounds(holds)
    return create(
        Event.EXPIRED,
        [
            about(
                hold,
                f"hold:{hold.pk}",
                [*(approval.approver for approval in lapsed.get(hold.pk, [])), *auditors],
                lapsed=[(approval_words(approval), approval.created_at) for approval in lapsed.get(hold.pk, [])],
            )
            for hold in holds
        ],
    )


def escalated(escalations: list[tuple]) -> list[Notification]:
    """Tell the members of each escalation's group who may see its hold, given with it as (escalation, members),
    that the hold has waited too long (the ``approvals.escalation`` rule)."""
    messages = [
        about(escalation.hold, f"escalation:{escalation.pk}", members, escalation=escalation)
        for escalation, members in escalations
    ]
    return create(Event.ESCALATED, standing_in(messages))


def standing_in(messages: list[Message], now: datetime | None = None) -> list[Message]:
    """The messages with each recipient who is away replaced by their delegate (``notifications.away``) where the
    delegate may see the message's holds (else the person is told themselves): the delegate's copy says whom it is
    for. Listed after the originals, so a delegate told already in their own right
    keeps that message (one per subject and recipient, ``create``)."""
    routed = away.reroute([user for message in messages for user in message.recipients], now)
    by_pk = {
        user.pk: (to, gone)
        for user, (to, gone) in zip([user for message in messages for user in message.recipients], routed, strict=True)
        if user
    }
    direct, delegated = [], []
    for message in messages:
        # A delegate who cannot see the message's holds (their scopes changed since) cannot stand in for it: the
        # person away is told themselves, so that someone who can see the hold hears of it.
        delegates = [by_pk[user.pk][0] for user in message.recipients if user and by_pk[user.pk][1]]
        seeing = scopes.users_who_may_see([message.hold, *message.listed], scopes.viewers_of(delegates))
        sees = {delegate.pk for delegate in seeing}
        standing = {
            user.pk for user in message.recipients if user and by_pk[user.pk][1] and by_pk[user.pk][0].pk in sees
        }
        direct.append(
            dataclasses.replace(message, recipients=[u for u in message.recipients if u and u.pk not in standing])
        )
        delegated += [
            dataclasses.replace(message, recipients=[by_pk[user.pk][0]], on_behalf=by_pk[user.pk][1], to_webhooks=False)
            for user in message.recipients
            if user and user.pk in standing
        ]
    return direct + delegated


def default_outcome(decision: Decision, approvers: list, claimant=None) -> list[Notification]:
    """Tell the auditors and the hold's watchers (the approvers of its round the decision ended, and the reviewer
    holding its claim) that a policy sent its default outcome, nobody having decided before its expiry."""
    hold = decision.hold
    action = "rejected" if all(item.action == "reject" for item in decision.items.all()) else "approved"
    message = about(
        hold,
        f"decision:{decision.pk}",
        [*approvers, claimant, *roles.members(roles.AUDITORS)],
        decision,
        action=action,
        comment=next((item.comment for item in decision.items.all() if item.comment), ""),
        approvers=[approver.get_username() for approver in approvers],
    )
    return create(Event.DEFAULT_OUTCOME, [message])


def assigned(assignment: Assignment, by) -> list[Notification]:
    """Tell the assignee (a person, or the members of a group who may see the hold) that ``by`` handed them the hold.

    A reassignment resolves what the previous assignee was told. Whoever assigned is not told of it.
    """
    hold = assignment.hold
    resolve_for_holds([hold.pk], frozenset({Event.ASSIGNED}), f"reassigned to {_assignee(assignment)}")
    # A group's members who may decide holds: not its auditors, nor every superuser (as ``roles.members`` would).
    recipients = [assignment.user] if assignment.user_id else list(roles.reviewers().filter(groups=assignment.group))
    message = about(
        hold,
        f"assignment:{assignment.pk}",
        [person for person in recipients if person.pk != by.pk],
        by=naming.name(by),
        assignee=_assignee(assignment),
        note=assignment.note,
    )
    return create(Event.ASSIGNED, standing_in([message]))


def unassigned(hold: Hold, by) -> int:
    """The hold's assignment ended: what its assignee was told is resolved."""
    return resolve_for_holds([hold.pk], frozenset({Event.ASSIGNED}), f"unassigned by {naming.name(by)}")


def mentioned(note: Note, users: list) -> list[Notification]:
    """Tell the people a note mentions (``holds.handover.notes`` chose those who may see its hold) what it says."""
    message = about(note.hold, f"note:{note.pk}", users, author=naming.name(note.author), text=note.text)
    return create(Event.MENTIONED, standing_in([message]))


def _assignee(assignment: Assignment) -> str:
    return assignment.user.get_username() if assignment.user_id else assignment.group.name


def not_applied(decision: Decision) -> list[Notification]:
    """Tell the reviewer who decided, and the auditors, that the platform did not apply a decision."""
    recipients = [decision.reviewer, *roles.members(roles.AUDITORS)]
    return create(Event.NOT_APPLIED, [about(decision.hold, f"decision:{decision.pk}", recipients, decision)])


def undelivered(decisions: list[Decision], now: datetime) -> list[Notification]:
    auditors = list(roles.members(roles.AUDITORS))
    messages = [
        about(
            decision.hold,
            f"decision:{decision.pk}",
            [decision.reviewer, *auditors],
            decision,
            waited=int((now - decision.created_at).total_seconds() // 60),
        )
        for decision in decisions
    ]
    return create(Event.UNDELIVERED, messages)


def digest_new_holds(now: datetime | None = None) -> list[Notification]:
    """Every NOTIFY_BATCH_SECONDS, one digest per subscribed reviewer of every hold not yet announced.

    Each hold is marked digested under a row lock, in the transaction that creates
    the digests, so no hold is announced twice; a hold whose sync had not
    committed yet is simply announced in the next window. A hold already decided,
    expired or cancelled is marked too, but not announced: nobody need look at it.
    The window itself advances by compare-and-set, so two schedulers do not both send one.
    """
    now = now or timezone.now()
    state, _ = DigestState.objects.get_or_create(pk=1, defaults={"started_at": now, "last_run_at": now})
    if now - state.last_run_at < timedelta(seconds=settings.NOTIFY_BATCH_SECONDS):
        return []
    with transaction.atomic():
        if not DigestState.objects.filter(pk=1, last_run_at=state.last_run_at).update(last_run_at=now):
            return []
        holds = list(
            Hold.objects.select_for_update(skip_locked=True, no_key=True)
            .filter(digested_at__isnull=True, first_seen_at__gte=state.started_at)
            .order_by("first_seen_at", "pk")
        )
        Hold.objects.filter(pk__in=[hold.pk for hold in holds]).update(digested_at=now)
        waiting = set(Hold.objects.waiting(now).filter(pk__in=[hold.pk for hold in holds]).values_list("pk", flat=True))
        return new_holds_digest([hold for hold in holds if hold.pk in waiting], now)


def new_holds_digest(holds: list[Hold], now: datetime) -> list[Notification]:
    """One message per subscribed reviewer listing those of ``holds`` in their team scopes; the webhooks' lists all."""
    if not holds:
        return []
    audiences: dict[tuple[Hold, ...], list] = {tuple(holds): []}  # the holds listed → the reviewers who may see them
    for reviewer in scopes.viewers_of(roles.reviewers()):
        audiences.setdefault(tuple(hold for hold in holds if scopes.may_see(reviewer, hold)), []).append(reviewer.user)
    link = settings.SITE_URL + reverse("queue")
    return create(
        Event.NEW_HOLDS,
        [
            Message(
                f"digest:{now.isoformat()}",
                recipients,
                {},
                link,
                listed=list(listed),
                to_webhooks=listed == tuple(holds),
            )
            for listed, recipients in audiences.items()
            if listed
        ],
    )


def _listed(holds: list[Hold]) -> list[dict]:
    """The holds a digest lists as its notification keeps them (``Notification.holds``), in the active time zone."""
    return [
        {
            "pk": hold.pk,
            "hold_id": hold.hold_id,
            "question": rendering.short(hold.question),
            "agent": hold.agent,
            "link": link_to(hold),
            "expires_at": wording.expiry(hold.expires_at),
        }
        for hold in holds
    ]


def _written(event: str, message: Message) -> dict:
    """The message's title, body and listed holds, written in the active time zone."""
    listed = _listed(message.listed)
    context = {**message.context, "link": message.link, "listed": listed}
    title, body = rendering.render(event, context, message.on_behalf)
    return {"title": title[:300], "body": body, "holds": listed}


def create(event: str, messages: list[Message]) -> list[Notification]:
    """Address each message to its recipients (and the webhooks that want the event) once, and queue the sending.

    Each recipient's copy is written in their time zone, the webhooks' in the site's.
    A recipient gets a message only when its hold, and every hold it lists, is in their team
    scopes (``teams.scopes``): every kind of notification is narrowed here. Webhooks are the
    admin's integrations and are not scoped.

    A constant number of queries however many messages: preferences and scopes are read
    once for all recipients, and the rows are written in bulk.
    """
    if not messages:
        return []
    now = timezone.now()
    users = {user.pk: user for message in messages for user in message.recipients if user}
    viewers = {viewer.pk: viewer for viewer in scopes.viewers_of(users.values())}
    channels_of = subscriptions.channels_by_user(users.values(), event)
    devices_of = _devices_of([pk for pk, chosen in channels_of.items() if Channel.PUSH in chosen])
    zone_of = zones.zones_of(users.values())
    webhooks = [
        w
        for w in WebhookChannel.objects.filter(active=True)
        if subscriptions.PREFERENCE_FOR.get(event, event) in w.events
    ]
    rows = []
    for message in messages:
        written = _written(event, message)
        common = {
            "event": event,
            "subject_key": message.subject_key,
            "hold": message.hold,
            "decision": message.decision,
            "link": message.link,
            "created_at": now,
            "next_attempt_at": now,
            **written,
        }
        in_zone = {timezone.get_current_timezone(): written}  # each zone's words, written once
        recipients = [viewers[pk] for pk in dict.fromkeys(user.pk for user in message.recipients if user)]
        for user in scopes.users_who_may_see([message.hold, *message.listed], recipients):
            zone = zone_of[user.pk]
            if zone not in in_zone:
                with timezone.override(zone):
                    in_zone[zone] = _written(event, message)
            for channel in channels_of[user.pk]:
                if channel == Channel.EMAIL and not user.email:
                    continue
                if channel == Channel.PUSH:  # one push to each of their devices, each sent and paced on its own
                    rows += [
                        Notification(
                            channel=channel,
                            recipient_key=f"push:{device.pk}",
                            user=user,
                            push_subscription=device,
                            **{**common, **in_zone[zone]},
                        )
                        for device in devices_of.get(user.pk, [])
                    ]
                    continue
                sent = channel == Channel.IN_APP  # an in-app message is delivered by existing
                rows.append(
                    Notification(
                        channel=channel,
                        recipient_key=f"user:{user.pk}",
                        user=user,
                        status=Notification.Status.SENT if sent else Notification.Status.PENDING,
                        sent_at=now if sent else None,
                        **{**common, **in_zone[zone]},
                    )
                )
        for webhook in webhooks if message.to_webhooks else []:
            rows.append(
                Notification(channel=Channel.WEBHOOK, recipient_key=f"webhook:{webhook.pk}", webhook=webhook, **common)
            )
    Notification.objects.bulk_create(rows, ignore_conflicts=True, batch_size=1000)
    pending = list(
        Notification.objects.filter(
            event=event,
            subject_key__in=[message.subject_key for message in messages],
            status=Notification.Status.PENDING,
        ).values_list("pk", "channel")
    )
    transaction.on_commit(lambda: sending.enqueue_all(pending))
    changes.publish("bell", users={row.user_id for row in rows if row.channel == Channel.IN_APP})
    return rows


def _devices_of(user_ids: list[int]) -> dict[int, list[PushSubscription]]:
    """The push devices of these people, by person; none while push is off (``push_devices.enabled``)."""
    devices = {}
    if user_ids and push_devices.enabled():
        for device in PushSubscription.objects.filter(user__in=user_ids).order_by("pk"):
            devices.setdefault(device.user_id, []).append(device)
    return devices


# Which events each change to a hold resolves: see ``resolve_for_holds``.
# An assignment and a mention ask someone to look at a hold, as a reminder does: they end with it.
RESOLVED_BY_DECISION = frozenset(
    {Event.EXPIRING_SOON, Event.NOT_APPLIED, Event.EXPIRED, Event.ASSIGNED, Event.MENTIONED, Event.STAGE_WAITING}
)
RESOLVED_BY_CLOSING = frozenset(
    {Event.EXPIRING_SOON, Event.NOT_APPLIED, Event.ASSIGNED, Event.MENTIONED, Event.STAGE_WAITING}
)
RESOLVED_BY_DELIVERY = frozenset({Event.UNDELIVERED})


def resolve_for_holds(hold_ids, events: frozenset[str], reason: str, now: datetime | None = None) -> int:
    """Mark the unresolved notifications of ``events`` about these holds resolved, with ``reason``; return how many.

    A reminder or alert asks someone to act on a hold; once nobody can or need,
    it is resolved: it leaves the bell's count, shows as resolved in the inbox,
    and a pending email, webhook or push of it is not sent (``sending`` and ``push_sending`` check).
    Which change resolves which event:

    - ``RESOLVED_BY_DECISION``: a decision stored here (``decisions.submit``; withdrawing
      it in the undo window reopens them, ``reopen_for_hold``) or applied, or the platform
      reporting the hold decided (sync). Nobody need hurry (expiring soon) or decide anew
      (not applied), and an "expired undecided" alert from our sweep proved wrong, the
      platform having taken a decision just in time.
    - ``RESOLVED_BY_CLOSING``: the hold expired (our sweep, or sync), was cancelled or left
      the platform: it can no longer be decided, so reminders and "not applied" are moot.
      The "expired" alert is ABOUT the expiry, so the expiry does not resolve it.
    - ``RESOLVED_BY_DELIVERY``: a decision's delivery ended, applied or not: "still
      undelivered" is over (a refusal brings its own "not applied" alert, which that
      ending does not resolve, being about it).

    One query however many holds, and one more to find the bells to tell when any was resolved; a notification keeps
    its first reason. New-hold digests list several holds: they are narrowed when sent instead (``digest.narrow``).
    Every change but an assignment's is told as ``holds_changed`` once it commits.
    """
    hold_ids = list(hold_ids)
    if events - {Event.ASSIGNED}:
        _tell_changed(hold_ids)
    resolved_at = now or timezone.now()
    about = Notification.objects.filter(hold__in=hold_ids, event__in=events)
    resolved = about.filter(resolved_at__isnull=True).update(resolved_at=resolved_at, resolved_reason=reason[:300])
    if resolved and changes.enabled():  # the bells showing these: the people they were in-app messages to
        bells = about.filter(resolved_at=resolved_at, channel=Channel.IN_APP, read_at__isnull=True)
        changes.publish("bell", users=set(bells.values_list("user", flat=True)))
    return resolved


def reopen_for_hold(hold_id: int, since: datetime) -> int:
    """Undo what was resolved about a hold since ``since``: a decision withdrawn in its undo window leaves it open.

    A pending email, webhook or push that sending already skipped as resolved stays unsent.
    """
    _tell_changed([hold_id])
    return Notification.objects.filter(hold=hold_id, resolved_at__gte=since).update(
        resolved_at=None, resolved_reason=""
    )


def _tell_changed(hold_ids: list[int]) -> None:
    if hold_ids:
        transaction.on_commit(lambda: holds_changed.send_robust(sender=Notification, hold_ids=hold_ids))
