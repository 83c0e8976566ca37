"""Linking a Slack account to a Review Queue account: the only way a press in Slack names its person.

The rules, all here:

- A Slack user (with their team) maps to an account only through a ``SlackAccount``: made by the person
  themselves, proven, or by an admin in the admin (audited as every admin change; an admin vouches for it). An email
  address that happens to match never links anything by itself.
- The first press of a Slack user nobody linked gets a "Connect your Slack account" link (``offer``): random,
  single-use, good for ``CONNECT_MINUTES``, and bound to that Slack user, their team and the button they pressed.
  Only its secret's digest is stored.
- The link opens Review Queue; sign-in comes first (a password or single sign-on, which return to the link). Its
  *Connect* (a POST) binds the account signed in (``connect``), and then makes the press it was bound to, but only
  once the account is shown to be that Slack user (``prove``): Slack's ``users.info``, read with the bot token,
  gives the Slack user's confirmed email, and it must be the account's, case aside. Anything short of that (no bot
  token, Slack not answering, another workspace, a deleted user or a bot, no confirmed email, another email) links
  nothing, and the page says why, naming the Slack user and their workspace.
- A link made before links were proven has no ``proof``: while ``SLACK_REQUIRE_VERIFIED_LINKS`` is on, it decides
  nothing (``decides``) and its presses are offered a connect link that proves it.
- A Slack account is linked to one person at a time: a link for a Slack user already linked to someone else binds
  nothing. A person may have several (one per workspace, say).
- Linking and unlinking are audited (``setting_changed``, model ``slackapp.slackaccount``, by whom). A person
  removes their own in Preferences; an admin removes anyone's in the admin, audited as every admin change is.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from audit import events
from audit.events import roles_and_settings
from notifications import slack_api
from people import wording
from slackapp.models import ConnectLink, SlackAccount
from slackapp.payloads import Press

CONNECT_MINUTES = 10
KEPT_AFTER_EXPIRY = timedelta(days=1)  # for an admin looking into a failed connect, then deleted (``forget_expired``)
MAX_KEY = 100  # characters of a link's secret: ours are 43
MAX_NAME = 254  # characters of a name or an email read from Slack's profile


class Refused(Exception):
    """The connect link binds nothing; the message says why, for the person, ``status`` how a page answers."""

    status = 409


class Gone(Refused):
    """The connect link is not ours, used or expired."""

    status = 410


class NotProven(Refused):
    """The account signed in is not shown to be the link's Slack user: nothing is linked."""

    status = 403


@dataclass(frozen=True)
class Connected:
    link: ConnectLink
    account: SlackAccount
    who: str  # the Slack user and their workspace, in words


def decides(account: SlackAccount) -> bool:
    """Whether presses through ``account`` decide: a proven link, or any while proof is not required."""
    return account.verified or not settings.SLACK_REQUIRE_VERIFIED_LINKS


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
        user_name=link.user_name,
        team_domain=link.team_domain,
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
        user_name=press.user_name,
        team_domain=press.team_domain,
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


def connect(key: str, user, now: datetime | None = None) -> Connected:
    """Use the connect link ``key`` once: link its Slack user to ``user``, once proven to be them (``prove``).
    A link of theirs made without proof becomes proven."""
    now = now or timezone.now()
    who = prove(pending(key, now), user)  # Slack is asked before any row is locked
    with transaction.atomic():
        link = ConnectLink.objects.select_for_update(no_key=True).filter(key_digest=_digest(key)).first()
        _check(link, now)
        existing = account_of(link.team_id, link.slack_user_id)
        if existing and existing.user_id != user.pk:
            raise Refused(
                f"{who} is linked to another Review Queue account: that person, or an admin, must remove it first. "
                "Nothing was linked."
            )
        ConnectLink.objects.filter(pk=link.pk).update(used_at=now, used_by=user)
        if existing:
            if not existing.verified:
                SlackAccount.objects.filter(pk=existing.pk).update(proof=SlackAccount.Proof.EMAIL)
                existing.proof = SlackAccount.Proof.EMAIL
                _audit(existing, user, "verified")
            return Connected(link, existing, who)
        try:
            with transaction.atomic():
                account = SlackAccount.objects.create(
                    team_id=link.team_id,
                    slack_user_id=link.slack_user_id,
                    user=user,
                    linked_at=now,
                    proof=SlackAccount.Proof.EMAIL,
                )
        except IntegrityError:  # linked meanwhile through another link
            raise Refused("This Slack account was linked meanwhile: nothing more was linked.") from None
        _audit(account, user, "linked")
    return Connected(link, account, who)


def described(link: ConnectLink, profile: dict | None = None) -> str:
    """The link's Slack user and workspace in words: their names as Slack's profile (or else the press) gives
    them, with the ids. Slack-written text, for templates to escape."""
    profile = profile or {}
    real_name = _profile_text(profile, "real_name") or _profile_text(profile.get("profile"), "real_name")
    handle = _profile_text(profile, "name") or link.user_name
    if real_name and handle:
        person = f"{real_name} (@{handle}, {link.slack_user_id})"
    elif real_name or handle:
        person = f"{real_name or '@' + handle} ({link.slack_user_id})"
    else:
        person = link.slack_user_id
    workspace = f"{link.team_domain} ({link.team_id})" if link.team_domain else link.team_id
    return f"Slack user {person} of workspace {workspace}"


def prove(link: ConnectLink, user) -> str:
    """Show that ``user`` is ``link``'s Slack user: Slack's confirmed email of them is ``user``'s, case aside. The
    Slack user in words (``described``); ``NotProven`` with the reason, in words, otherwise."""
    if not settings.SLACK_BOT_TOKEN:
        raise NotProven(
            f"Review Queue cannot check that {described(link)} is you: the Slack app has no bot token to read their "
            "email with. Nothing was linked. An admin can link the accounts in the admin."
        )
    try:
        profile = slack_api.user_info(link.slack_user_id)
    except slack_api.Unavailable:
        raise NotProven(
            f"Slack did not answer when asked who {described(link)} is: try again in a minute. Nothing was linked."
        ) from None
    except slack_api.Refused as refused:
        raise NotProven(
            f"Slack would not say who {described(link)} is ({refused}): the Slack app needs the users:read and "
            "users:read.email scopes, and the user must be of its workspace. Nothing was linked."
        ) from None
    who = described(link, profile)
    if profile.get("id") != link.slack_user_id or profile.get("team_id") != link.team_id:
        raise NotProven(f"Slack knows {who} in another workspace than the press came from. Nothing was linked.")
    if profile.get("deleted") is not False or profile.get("is_bot") is not False:
        raise NotProven(f"{who} is deactivated or a bot in Slack: it decides as nobody. Nothing was linked.")
    email = _profile_text(profile.get("profile"), "email")
    if not email or profile.get("is_email_confirmed") is False:
        raise NotProven(f"{who} has no confirmed email that Slack shows Review Queue. Nothing was linked.")
    if not _same_email(email, user.email):
        raise NotProven(
            f"{who} has another email in Slack than your Review Queue account, {user.get_username()}: only the "
            "person whose account has that Slack user's email can connect it. Nothing was linked."
        )
    return who


def unlink(account: SlackAccount, by) -> None:
    """Remove ``account``'s link, by its person (or an admin), audited."""
    with transaction.atomic():
        if SlackAccount.objects.filter(pk=account.pk).delete()[0]:
            _audit(account, by, "unlinked")


def _check(link: ConnectLink | None, now: datetime) -> None:
    if link is None:
        raise Gone("This connect link is not one Review Queue made: nothing was linked.")
    if link.used_at:
        raise Gone("This connect link was used already: press the button in Slack again for a new one.")
    if link.expires_at <= now:
        raise Gone(
            f"This connect link expired at {wording.moment(link.expires_at)}: press the button in Slack again for a "
            "new one."
        )


def _profile_text(profile, name: str) -> str:
    """A text field of Slack's profile, when it is one: cut short, as it is only ever shown or compared."""
    value = profile.get(name) if isinstance(profile, dict) else None
    return value.strip()[:MAX_NAME] if isinstance(value, str) else ""


def _same_email(slack_email: str, account_email: str) -> bool:
    """Equal but for case, in ASCII only: Unicode case folding would let a lookalike through."""
    if not (slack_email and account_email and slack_email.isascii() and account_email.isascii()):
        return bool(slack_email) and slack_email == account_email
    return slack_email.lower() == account_email.lower()


def _audit(account: SlackAccount, by, action: str) -> None:
    events.append(
        roles_and_settings.setting_changed(
            actor=by,
            model="slackapp.slackaccount",
            object_id=str(account.user_id),
            object_repr=account.user.get_username(),
            action=action,
            message=f"Slack user {account.slack_user_id} of team {account.team_id} {action}",
            details={"team_id": account.team_id, "slack_user_id": account.slack_user_id, "proof": account.proof},
        )
    )


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def forget_expired(now: datetime | None = None) -> int:
    """Delete the connect links, used or not, that expired longer than ``KEPT_AFTER_EXPIRY`` ago; return how many."""
    now = now or timezone.now()
    deleted, _ = ConnectLink.objects.filter(expires_at__lt=now - KEPT_AFTER_EXPIRY).delete()
    return deleted
