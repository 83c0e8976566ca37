"""A press of Approve, Reject or Undo in a Slack message, decided the one way every decision is.

``handle`` runs in a worker (the request URL only verified and read the press, ``slackapp.views``). In order:

- The button's value must be a token we signed for the Slack app (``action_links.read``, channel ``slack``), for
  the action pressed; anything else decides nothing.
- The Slack user must be linked (``slackapp.linking``), by a link that decides (``linking.decides``: proven, while
  ``SLACK_REQUIRE_VERIFIED_LINKS`` is on); a first press, or one through a link never proven, gets, as an
  ephemeral answer, a connect link bound to this press, saying which.
- Their account must be a reviewer's, the hold in their team scopes (else it answers as for a hold that does not
  exist), open (read afresh from the platform first, as the hold page's confirm reads it: ``fresh.refresh``),
  unexpired, unchanged since the message (``action_links.opened``), and four eyes must let them give this approval
  (``link_standing.link_standing``), all checked again with the hold's row locked.
- Reject asks for an optional reason in a modal (``views.open``) where a bot token allows one; without one it rejects
  with no comment.
- The decision goes through ``decisions.submit`` with the channel ``slack``: claims, four eyes, the undo window,
  delivery, the audit. The press's message is kept (with its ``response_url``) so that it is replaced for everyone
  once the change commits (``slackapp.messages``); the presser gets an ephemeral answer: an approval that waits for
  more says so ("1 of 2 approvals: yours is recorded; …"), with Undo.
- Undo takes back the presser's own decision or approval in its window (``decisions.withdraw``,
  ``decisions.withdraw_approval``).

Slack signs every request and the request URL refuses a replay, so a press reaches here once; were it to arrive
twice, ``decisions.submit`` refuses the second (the hold has its decision, or the person their approval).
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from approvals import approving, link_standing
from approvals.models import Approval
from holds.deciding import decisions, review
from holds.links import action_links
from holds.mirror import fresh
from holds.models import DecisionChannel, DecisionItem, Hold
from holds.related import safeguard
from notifications import notify, slack_api
from notifications.webhook_formats import slack_escaped
from reviewqueue import roles
from slackapp import linking, messages, payloads
from slackapp.payloads import Press
from teams import scopes

logger = logging.getLogger(__name__)

NOT_OURS = "This button is not one Review Queue made, or it was cut short: nothing was sent."
NO_ROLE = "Your Review Queue account may not review holds: nothing was sent."
NOT_LINKED, NOT_VERIFIED = "not linked", "not verified"
REASON_LIMIT = review.MAX_COMMENT


def handle(press: Press, now: datetime | None = None, user=None) -> str:
    """Carry out ``press`` (as ``user``, once linked: the connect page passes them); the answer for the presser, which
    is also posted to them through the press's ``response_url``."""
    now = now or timezone.now()
    answer, ephemeral = _handled(press, now, user)
    if ephemeral and press.response_url:
        _answer(press.response_url, answer, ephemeral)
    return answer


def _handled(press: Press, now: datetime, user) -> tuple[str, dict | str]:
    if press.action == "undo":
        return _undo(press, now, user)
    try:
        link = action_links.read(press.value, action_links.BUTTON_CHANNELS)
    except action_links.Refused:
        return NOT_OURS, "text"
    if link.action != press.action:
        return NOT_OURS, "text"
    if user is None:
        user, why = _presser(press)
    if user is None:
        url = linking.offer(press, now)
        words = (
            f"<{url}|Connect your Slack account> to Review Queue, then your press is made: the link works once, "
            f"for {linking.CONNECT_MINUTES} minutes. Nothing was sent yet."
        )
        if why == NOT_VERIFIED:
            words = (
                "Your Slack account was linked to Review Queue without proof that it is yours, so its presses "
                f"decide nothing until it is proven. {words}"
            )
        return words, "mrkdwn"
    viewer = scopes.viewer_of(user)
    if not roles.can_review(viewer):
        return NO_ROLE, "text"
    if press.action == DecisionItem.Action.REJECT and not press.reason and _asked_for_reason(press):
        return "", ""
    return _decide(press, link, viewer, now)


def _decide(press: Press, link: action_links.Link, viewer, now: datetime) -> tuple[str, dict | str]:
    user = viewer.user
    if (unlocked := Hold.objects.filter(pk=link.hold_pk).first()) is not None:
        fresh.refresh(unlocked)  # as the hold page's confirm, before the row is locked: decided elsewhere is refused
    try:
        with transaction.atomic():
            if not Hold.objects.select_for_update(no_key=True).filter(pk=link.hold_pk).exists():
                raise action_links.Refused(action_links.NOT_FOUND, "No such hold.")
            link, hold = action_links.opened(press.value, viewer, now, channels=action_links.BUTTON_CHANNELS)
            messages.remember(hold, press.channel_id, press.message_ts, press.response_url, now)
            standing = link_standing.link_standing(hold, viewer, link.action)
            if standing.refusal:
                return f"{standing.refusal} Nothing was sent.", "text"
            if link.action == DecisionItem.Action.APPROVE and (guard := safeguard.guard(hold, now=now)).needed:
                # A possible duplicate (a message sent before it was flagged, say): the press opens its page.
                transaction.on_commit(lambda: messages.queue_refresh([hold.pk]))
                return _open_to_check(hold, guard.seen_by(viewer)), "mrkdwn"
            if link.action == DecisionItem.Action.APPROVE:
                choices = [decisions.ItemChoice(item.item_id, link.action) for item in hold.items.all()]
            else:
                choices = review.rejecting_all(hold, press.reason)
            outcome = decisions.submit(
                hold, user, choices, now, round_shown=standing.round_shown, channel=DecisionChannel.SLACK
            )
    except action_links.Refused as refused:
        if refused.kind == action_links.NOT_FOUND:
            return "No such hold.", "text"
        if refused.hold is not None:
            _remember_refused(press, refused.hold, now)
        return _not_a_link(refused.message), "text"
    except decisions.DecisionRefused as refused:
        return f"{refused.message} Nothing was sent.", "text"
    if isinstance(outcome, Approval):
        words = link_standing.recorded_words(hold, viewer) or "Your approval is recorded."
        return f"{words}.", _with_undo(words + ".", messages.undo_value(messages.UNDO_APPROVAL, outcome.pk))
    verb = "approved" if link.action == DecisionItem.Action.APPROVE else "rejected"
    return f"You {verb} it: the message now says so for everyone.", "text"


def _open_to_check(hold: Hold, seen: safeguard.Seen) -> str:
    """What an Approve press of a possible duplicate answers: a link to its page, where approving it asks for a
    confirmation; nothing is decided."""
    return (
        f"{slack_escaped(seen.words().capitalize())}: <{notify.link_to(hold)}|open it in Review Queue> to check "
        "them, then approve it there. Nothing was sent."
    )


def _not_a_link(message: str) -> str:
    """A refusal the one-tap links' rules word for a link, worded for a button."""
    return message.replace("This link sends nothing", "Nothing was sent").replace(
        "this link sends nothing", "nothing was sent"
    )


def _remember_refused(press: Press, hold: Hold, now: datetime) -> None:
    """A press on a hold that was decided or closed meanwhile: keep its message, then show it as it is now."""
    messages.remember(hold, press.channel_id, press.message_ts, press.response_url, now)
    transaction.on_commit(lambda: messages.queue_refresh([hold.pk]))


def _undo(press: Press, now: datetime, user) -> tuple[str, dict | str]:
    kind, _, pk = press.value.partition(":")
    if kind not in (messages.UNDO_DECISION, messages.UNDO_APPROVAL) or not pk.isdigit() or len(pk) > 18:
        return NOT_OURS, "text"
    if user is None:
        user, why = _presser(press)
    if user is None:
        return f"Only the person who decided can undo it, and your Slack account is {why}: nothing was undone.", "text"
    try:
        if kind == messages.UNDO_DECISION:
            decisions.withdraw(int(pk), user, now)
        else:
            decisions.withdraw_approval(int(pk), user, now)
    except decisions.DecisionRefused as refused:
        return refused.message, "text"
    except approving.NotCounted as refused:  # someone else's approval, or its window is over
        return refused.message, "text"
    return "Undone: nothing was sent. The hold is yours to decide again.", "text"


def _presser(press: Press) -> tuple[object | None, str]:
    """The account ``press`` decides as; None and why (``NOT_LINKED``, ``NOT_VERIFIED``) when it decides as nobody."""
    account = linking.account_of(press.team_id, press.slack_user_id)
    if account is None or not account.user.is_active:
        return None, NOT_LINKED
    if not linking.decides(account):
        return None, NOT_VERIFIED
    return account.user, ""


def _asked_for_reason(press: Press) -> bool:
    """Open the Reject modal, where a bot token allows; whether it opened (its submission then rejects)."""
    if not (settings.SLACK_BOT_TOKEN and press.trigger_id):
        return False
    view = {
        "type": "modal",
        "callback_id": payloads.REJECT_VIEW,
        "private_metadata": payloads.modal_metadata(press),
        "title": {"type": "plain_text", "text": "Reject"},
        "submit": {"type": "plain_text", "text": "Reject"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": payloads.REASON_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": "Reason (optional)"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": payloads.REASON_ACTION,
                    "multiline": True,
                    "max_length": REASON_LIMIT,
                },
            }
        ],
    }
    try:
        slack_api.open_view(press.trigger_id, view)
    except (slack_api.Refused, slack_api.Unavailable) as error:
        logger.warning("no Reject modal (%s): rejecting with no comment", error)
        return False
    return True


def _with_undo(words: str, undo: str) -> dict:
    return {
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": slack_escaped(words), "verbatim": True}},
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Undo"},
                        "action_id": "undo",
                        "value": undo,
                    }
                ],
            },
        ]
    }


def _answer(response_url: str, words: str, shape: dict | str) -> None:
    """An ephemeral answer to the presser: ``words`` as plain text, or as mrkdwn we wrote, or with blocks."""
    body = {"response_type": "ephemeral", "replace_original": False}
    if isinstance(shape, dict):
        body |= {"text": slack_escaped(words), **shape}
    else:
        body["text"] = words if shape == "mrkdwn" else slack_escaped(words)
    try:
        slack_api.respond(response_url, body)
    except (slack_api.Refused, slack_api.Unavailable) as error:
        logger.warning("the presser was not answered: %s", error)
