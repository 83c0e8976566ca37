"""Linking a Slack account to a Review Queue account: the only way a press in Slack names its person.

The rules, all here:

- A Slack user (with their team) maps to an account only through a ``SlackAccount`` that the person made
  themselves: never from an email address that happens to match, never by an admin.
- The first press of a Slack user nobody linked gets a "Connect your Slack account" link (``offer``): random,
  single-use, good for ``CONNECT_MINUTES``, and bound to that Slack user, their team and the button they pressed.
  Only its secret's digest is stored.
- The link opens Review Queue; sign-in comes first (a password or single sign-on, which return to the link). Its
  *Connect* (a POST) binds the account signed in (``connect``), and then makes the press it was bound to.
- A Slack account is linked to one person at a time: a link for a Slack user already linked to someone else binds
  nothing. A person may have several (one per workspace, say).
- Linking and unlinking are audited (``setting_changed``, model ``slackapp.slackaccount``, by whom). A person
  removes their own in Preferences; an admin removes anyone's in the admin, audited as every admin change is.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from audit import events
from audit.models import EventKind
from people import wording
from slackapp.models import ConnectLink, SlackAccount
from slackapp.payloads import Press

CONNECT_MINUTES = 10
KEPT_AFTER_EXPIRY = timedelta(days=1)  # for an admin looking into a failed connect, then deleted (``forget_expired``)
MAX_KEY = 100  # characters of a link's secret: ours are 43


class Refused(Exception):
    """The connect link binds nothing; the message says why, for the person."""


def account_of(team_id: str, slack_user_id: str) -> SlackAccount | None:
    return SlackAccount.objects.filter(team_id=team_id, slack_user_id=slack_user_id).select_related("user").first()


def pressed(link: ConnectLink, reason: str = "") -> Press:
    """The press ``link`` was made for (``offer``), made again once its person is connected, with ``reason``."""
    return Press(
        team_id=link.team_id,
        slack_user_id=link.slack_user_id,
        action=link.action,
        value=link.button,
        response_url=link.response_url,
        channel_id=link.channel_id,
        message_ts=link.message_ts,
        reason=reason,
    )


def offer(press: Press, now: datetime | None = None) -> str:
    """A new connect link for the Slack user who made ``press``, bound to it: the URL to send them."""
    now = now or timezone.now()
    key = secrets.token_urlsafe(32)
    ConnectLink.objects.create(
        key_digest=_digest(key),
        team_id=press.team_id,
        slack_user_id=press.slack_user_id,
        action=press.action,
        button=press.value,
        response_url=press.response_url,
        channel_id=press.channel_id,
        message_ts=press.message_ts,
        created_at=now,
        expires_at=now + timedelta(minutes=CONNECT_MINUTES),
    )
    return settings.SITE_URL + reverse("slack-connect", args=[key])


def pending(key: str, now: datetime | None = None) -> ConnectLink:
    """The connect link ``key`` opens, while it is unused and in time; ``Refused`` otherwise."""
    now = now or timezone.now()
    link = ConnectLink.objects.filter(key_digest=_digest(key)).first() if 0 < len(key) <= MAX_KEY else None
    _check(link, now)
    return link


def connect(key: str, user, now: datetime | None = None) -> tuple[ConnectLink, SlackAccount]:
    """Use the connect link ``key`` once: link its Slack user to ``user``. The link and the account linked."""
    now = now or timezone.now()
    with transaction.atomic():
        link = ConnectLink.objects.select_for_update().filter(key_digest=_digest(key)).first()
        _check(link, now)
        existing = account_of(link.team_id, link.slack_user_id)
        if existing and existing.user_id != user.pk:
            raise Refused(
                "This Slack account is linked to another Review Queue account: that person, or an admin, must "
                "remove it first. Nothing was linked."
            )
        ConnectLink.objects.filter(pk=link.pk).update(used_at=now, used_by=user)
        if existing:
            return link, existing
        try:
            with transaction.atomic():
                account = SlackAccount.objects.create(
                    team_id=link.team_id, slack_user_id=link.slack_user_id, user=user, linked_at=now
                )
        except IntegrityError:  # linked meanwhile through another link
            raise Refused("This Slack account was linked meanwhile: nothing more was linked.") from None
        _audit(account, user, "linked")
    return link, account


def unlink(account: SlackAccount, by) -> None:
    """Remove ``account``'s link, by its person (or an admin), audited."""
    with transaction.atomic():
        if SlackAccount.objects.filter(pk=account.pk).delete()[0]:
            _audit(account, by, "unlinked")


def _check(link: ConnectLink | None, now: datetime) -> None:
    if link is None:
        raise Refused("This connect link is not one Review Queue made: nothing was linked.")
    if link.used_at:
        raise Refused("This connect link was used already: press the button in Slack again for a new one.")
    if link.expires_at <= now:
        raise Refused(
            f"This connect link expired at {wording.moment(link.expires_at)}: press the button in Slack again for a "
            "new one."
        )


def _audit(account: SlackAccount, by, action: str) -> None:
    events.record(
        EventKind.SETTING_CHANGED,
        actor=by,
        payload={
            "model": "slackapp.slackaccount",
            "object_id": str(account.user_id),
            "object": account.user.get_username(),
            "action": action,
            "message": f"Slack user {account.slack_user_id} of team {account.team_id} {action}",
            "team_id": account.team_id,
            "slack_user_id": account.slack_user_id,
        },
    )


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def forget_expired(now: datetime | None = None) -> int:
    """Delete the connect links, used or not, that expired longer than ``KEPT_AFTER_EXPIRY`` ago; return how many."""
    now = now or timezone.now()
    deleted, _ = ConnectLink.objects.filter(expires_at__lt=now - KEPT_AFTER_EXPIRY).delete()
    return deleted
