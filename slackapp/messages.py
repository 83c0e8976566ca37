"""The Slack messages about a hold, replaced for everyone once it is decided, undone or closed.

``refresh`` runs (in a worker) after every change ``notifications.signals.holds_changed`` tells, whatever its
channel: a press, the page, a link, the API, a policy, the sweep that expires holds, sync. It shows each message of
the hold (``SlackMessage``) as the hold is now: "Approved by Alice Adams at 12:03", "Rejected by Bob Brown at 12:04:
<reason>", "Expired, nobody decided", with Open kept (and Undo while the decision can be taken back), or, once a
decision was undone, the buttons again. Through the press's ``response_url`` while it lasts; else, for a message the
bot posted, ``chat.update``. A message already showing that state is left alone.

The words go through ``webhook_formats.block_kit``, so agent text and reasons stay escaped and ``verbatim``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from holds.deciding import decidable, deciders
from holds.links import action_links
from holds.models import Decision, DecisionChannel, DecisionItem, Hold
from holds.related import safeguard
from notifications import hold_links, notify, slack_api, webhook_formats
from notifications.models import SlackMessage
from people import wording
from reviewqueue import queueing

logger = logging.getLogger(__name__)

RESPONSE_URL_LIFETIME = timedelta(minutes=30)  # Slack's: a response_url takes posts for 30 minutes
REFRESH_TASK = "slackapp.tasks.refresh_messages"
KEPT_AFTER_CLOSE = timedelta(days=7)  # a closed hold's message shows its last state by then (``forget_closed``)
UNDO_DECISION, UNDO_APPROVAL = "decision", "approval"  # an Undo button's value: "decision:<id>"


@dataclasses.dataclass(frozen=True)
class Shown:
    """A hold as its messages show it now: the ``text`` fallback, the ``blocks``, and ``key``, naming the state."""

    key: str
    text: str
    blocks: list[dict]


def buttons_for(hold: Hold, now: datetime) -> hold_links.ChatButtons | None:
    """The interactive Approve and Reject of a message about ``hold`` (registered with ``notifications.hold_links``):
    values signed as the one-tap links are (``action_links.make``, channel ``slack``); None while the Slack app is
    off; none of either once the hold can no longer be decided; no Approve for a possible duplicate, whose message
    offers Approve as a link to the hold's page instead (``holds.related.safeguard``)."""
    if not settings.SLACK_SIGNING_SECRET:
        return None
    if decidable.closed_reason(hold, now):
        return hold_links.ChatButtons()
    duplicate = safeguard.guard(hold, now=now).needed  # its Approve opens the hold: a URL button (``links_for``)
    made = {
        action: action_links.make(hold, action, now=now, channel=DecisionChannel.SLACK)
        for action in action_links.ACTIONS
        if action in hold.actions and not (duplicate and action == DecisionItem.Action.APPROVE)
    }
    return hold_links.ChatButtons(
        approve=made.get(DecisionItem.Action.APPROVE), reject=made.get(DecisionItem.Action.REJECT)
    )


def undo_value(kind: str, pk: int) -> str:
    return f"{kind}:{pk}"


def shown(hold: Hold, now: datetime) -> Shown:
    """How every message about ``hold`` shows it at ``now``: its live decision (one the platform did not apply leaves
    the hold to decide again), its closing, or the hold open with its buttons."""
    live = hold.live_decision()
    undo = ""
    if live:
        words, title = decided_words(live), "Decided"
        if live.reviewer_id and live.undo_until and live.undo_until > now and live.delivery_started_at is None:
            undo = undo_value(UNDO_DECISION, live.pk)
        key = f"decision:{live.pk}:{live.state}:{bool(undo)}"
    elif closed := _closed_words(hold, now):
        words, title, key = closed, "Closed", f"closed:{hold.status}"
    else:
        return _open(hold, now)
    hold_shown = _hold_shown(
        hold, hold_links.ActionLinks(notify.link_to(hold)), hold_links.ChatButtons(undo=undo or None)
    )
    announcement = webhook_formats.Announcement(title=title, body=words, link=notify.link_to(hold), hold=hold_shown)
    return Shown(_digest(key), _fallback(words), webhook_formats.block_kit(announcement))


def decided_words(decision: Decision) -> str:
    """ "Approved by Alice Adams at 12:03", "Rejected by Bob Brown at 12:04: <reason>", "Decided by …" (edits)."""
    items = list(decision.items.all())
    actions = {item.action for item in items}
    who, when = deciders.decider_name(decision), wording.moment(decision.created_at)
    if actions == {DecisionItem.Action.APPROVE}:
        return f"Approved by {who} at {when}"
    if actions == {DecisionItem.Action.REJECT}:
        reasons = list(dict.fromkeys(item.comment for item in items if item.comment))
        return f"Rejected by {who} at {when}" + (f": {' '.join(reasons)}" if reasons else "")
    return f"Decided by {who} at {when} (changed or partly rejected: open the hold for its items)"


def _closed_words(hold: Hold, now: datetime) -> str:
    if hold.status == Hold.Status.EXPIRED or (
        hold.status == Hold.Status.OPEN and hold.expires_at and hold.expires_at <= now
    ):
        return "Expired, nobody decided"
    if hold.status == Hold.Status.DECIDED:
        who = f" by {hold.decided_by}" if hold.decided_by else ""
        when = f" at {wording.moment(hold.decided_at)}" if hold.decided_at else ""
        return f"Decided{who}{when} on the platform"
    if hold.status != Hold.Status.OPEN:
        return f"Closed: {hold.get_status_display().lower()}"
    return ""


def _open(hold: Hold, now: datetime) -> Shown:
    """The hold open again (a decision undone): the question with its buttons, as first sent."""
    links = action_links.links_for(hold, None, now)
    hold_shown = _hold_shown(hold, links, buttons_for(hold, now))
    announcement = webhook_formats.Announcement(
        title="Waiting for a decision", body="", link=links.open, hold=hold_shown
    )
    latest = hold.latest_decision()
    return Shown(
        _digest(f"open:{latest.pk if latest else 0}"),
        _fallback(hold.question),
        webhook_formats.block_kit(announcement),
    )


def _hold_shown(hold: Hold, links, buttons) -> webhook_formats.HoldShown:
    return webhook_formats.HoldShown(
        question=hold.question,
        agent=hold.agent,
        amounts=tuple(hold_links.amounts_of(hold)),
        expires=wording.expiry(hold.expires_at),
        links=links,
        buttons=buttons,
    )


def _fallback(words: str) -> str:
    return webhook_formats.cut(words, webhook_formats.TEXT_LIMIT, webhook_formats.slack_escaped)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def remember(hold: Hold, channel_id: str, message_ts: str, response_url: str, now: datetime) -> None:
    """Keep the message a press came from, with its fresh ``response_url``, to replace it once the hold changes."""
    if not (channel_id and message_ts):
        return
    until = now + RESPONSE_URL_LIFETIME if response_url else None
    found, created = SlackMessage.objects.get_or_create(
        channel_id=channel_id,
        ts=message_ts,
        defaults={"hold": hold, "response_url": response_url, "response_url_expires_at": until, "created_at": now},
    )
    if not created and response_url and found.hold_id == hold.pk:
        SlackMessage.objects.filter(pk=found.pk).update(response_url=response_url, response_url_expires_at=until)


def queue_refresh(hold_ids, **_) -> None:
    """``holds_changed``'s receiver: queue a refresh of the holds that have Slack messages, with the Slack app on."""
    if not settings.SLACK_SIGNING_SECRET:
        return
    with_messages = list(SlackMessage.objects.filter(hold__in=list(hold_ids)).values_list("hold", flat=True).distinct())
    if with_messages:
        queueing.queue(REFRESH_TASK, with_messages, description=f"Slack messages of holds {with_messages}")


def refresh(hold_ids: list[int], now: datetime | None = None) -> int:
    """Show every Slack message of these holds as its hold is now; return how many were replaced.

    Raises ``slack_api.Unavailable`` for the task to retry; a message Slack refuses to replace is logged and left.
    """
    now = now or timezone.now()
    replaced = 0
    holds = Hold.objects.filter(pk__in=hold_ids).prefetch_related("items")
    for hold in holds:
        state = shown(hold, now)
        usable = Q(response_url_expires_at__gt=now) | Q(by_bot=True)
        for message in SlackMessage.objects.filter(usable, hold=hold).exclude(shown=state.key):
            try:
                _replace(message, state, now)
            except slack_api.Refused as refused:
                logger.warning("Slack message %s/%s not replaced: %s", message.channel_id, message.ts, refused)
                continue
            SlackMessage.objects.filter(pk=message.pk).update(shown=state.key)
            replaced += 1
    return replaced


def _replace(message: SlackMessage, state: Shown, now: datetime) -> None:
    if message.response_url and message.response_url_expires_at and message.response_url_expires_at > now:
        slack_api.respond(message.response_url, {"replace_original": True, "text": state.text, "blocks": state.blocks})
    elif message.by_bot and settings.SLACK_BOT_TOKEN:
        slack_api.update_message(message.channel_id, message.ts, state.text, state.blocks)


def forget_closed(now: datetime | None = None) -> int:
    """Delete the messages of holds closed longer than ``KEPT_AFTER_CLOSE`` ago, which nothing replaces again;
    return how many."""
    now = now or timezone.now()
    deleted, _ = SlackMessage.objects.filter(hold__closed_at__lt=now - KEPT_AFTER_CLOSE).delete()
    return deleted
