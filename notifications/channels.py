"""The ways a notification leaves the app: email through Django's mail framework, and signed webhooks (Web Push has
``push`` and ``push_sending``).

``send`` raises ``Refused`` for a permanent failure (a webhook answering 4xx, or a
destination ``destinations`` refuses) and lets network errors (``TRANSIENT_ERRORS``)
through for the caller to retry. What a webhook's failure records is its status and
fixed words, never the receiver's answer, and any connection error is "unreachable":
the admin and the audit trail must not become a window onto what the worker can reach.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import smtplib

import httpx
from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db.models import prefetch_related_objects
from django.template.loader import render_to_string
from django.utils import timezone

from holds.models import Hold
from notifications import destinations, hold_links, slack_api, webhook_formats
from notifications.models import Notification, SlackMessage, WebhookChannel
from notifications.webhook_formats import slack_escaped
from people import wording
from reviewqueue import tls

SIGNATURE_HEADER = "X-ReviewQueue-Signature"


class Refused(Exception):
    """The channel refused the message for good: retrying would not help."""


class Unavailable(Exception):
    """The channel could not take the message now (a webhook's 5xx or 429): retry later."""


TRANSIENT_ERRORS = (Unavailable, httpx.HTTPError, smtplib.SMTPException, OSError)
UNREACHABLE = "unreachable"  # every connection error of a webhook, whatever its cause: refused, timed out, reset…


def send(notification: Notification) -> None:
    """Send an email or a webhook's message; pushes go in batches of their own (``push_sending``)."""
    if notification.channel == Notification.Channel.EMAIL:
        send_email(notification)
    elif notification.channel == Notification.Channel.WEBHOOK:
        post_webhook(notification)
    else:
        raise Refused(f"nothing sends {notification.channel} notifications")


def send_email(notification: Notification) -> None:
    context = {"notification": notification, **_actions(notification, notification.user)}
    message = EmailMultiAlternatives(
        subject=f"[Review Queue] {notification.title}",
        body=render_to_string("notifications/email.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[notification.user.email],
    )
    message.attach_alternative(render_to_string("notifications/email.html", context), "text/html")
    message.send()


def _actions(notification: Notification, recipient=None) -> dict:
    """The one-tap links of each hold the message is about (``notifications.hold_links``): ``actions`` for its hold,
    ``listed`` for a digest's holds, each with its own (``found``: those of them still here, by pk); bound to
    ``recipient`` (an email's), or to nobody."""
    now = timezone.now()
    found = {}
    if notification.holds:
        pks = [listed["pk"] for listed in notification.holds if isinstance(listed.get("pk"), int)]
        found = {hold.pk: hold for hold in Hold.objects.filter(pk__in=pks)}
    listed = [
        {
            **shown,
            "actions": hold_links.links_for(found[shown["pk"]], recipient, now) if shown.get("pk") in found else None,
        }
        for shown in notification.holds
    ]
    hold = notification.hold
    return {
        "actions": hold_links.links_for(hold, recipient, now) if hold else None,
        "listed": listed,
        "found": found,
    }


def _action_fields(links: hold_links.ActionLinks | None) -> dict | None:
    return dataclasses.asdict(links) if links else None


def webhook_body(notification: Notification) -> dict:
    """The body in the webhook's format (``WebhookChannel.format``, shapes in ``webhook_formats``).

    Slack's is the structured body (``_structured_body``) with Block Kit ``blocks`` added: Slack shows the blocks,
    with ``text`` as the fallback in notifications, and ignores the other fields, which other receivers keep
    reading as they did before formats existed. Teams' is an Adaptive Card message alone. JSON's is the
    structured body alone. Every hold's links are bound to nobody: whoever opens one decides as themselves. With the
    Slack app on, a Slack message about one hold has interactive buttons instead (``hold_links.buttons_for``).
    """
    links = _actions(notification)
    chosen = notification.webhook.format if notification.webhook else WebhookChannel.Format.SLACK
    if chosen == WebhookChannel.Format.TEAMS:
        return webhook_formats.adaptive_card(_announcement(notification, links))
    body = _structured_body(notification, links)
    if chosen == WebhookChannel.Format.SLACK:
        body["blocks"] = webhook_formats.block_kit(_announcement(notification, links, pressable=True))
    return body


def _structured_body(notification: Notification, links: dict) -> dict:
    """A ``text`` field for Slack, plus the same facts as structured fields for other receivers.

    ``actions`` carries the hold's one-tap links (``approve``, ``reject``, ``open``; null where the hold cannot take
    them). A digest's ``holds`` each carry their own.
    """
    hold = notification.hold
    return {
        "text": f"{slack_escaped(notification.title)}\n<{notification.link}|Open in Review Queue>",
        "event": notification.event,
        "title": notification.title,
        "body": notification.body,
        "link": notification.link,
        "hold": {
            "env": hold.env,
            "hold_id": hold.hold_id,
            "run_id": hold.run_id,
            "agent": hold.agent,
            "question": hold.question,
        }
        if hold
        else None,
        "holds": [{**listed, "actions": _action_fields(listed["actions"])} for listed in links["listed"]],
        "actions": _action_fields(links["actions"]),
        "created_at": notification.created_at.isoformat(),
    }


def _announcement(notification: Notification, links: dict, pressable: bool = False) -> webhook_formats.Announcement:
    """What the message says about its hold, or each hold its digest lists, with their amounts: the holds
    ``_actions`` read, and one query for their items; its hold's interactive buttons where ``pressable``."""
    hold = notification.hold
    shown_holds = [*links["found"].values(), *([hold] if hold else [])]
    prefetch_related_objects(shown_holds, "items")
    amounts = {shown.pk: tuple(hold_links.amounts_of(shown)) for shown in shown_holds}
    return webhook_formats.Announcement(
        title=notification.title,
        body=notification.body,
        link=notification.link,
        hold=webhook_formats.HoldShown(
            question=hold.question,
            agent=hold.agent,
            amounts=amounts.get(hold.pk, ()),
            expires=wording.expiry(hold.expires_at),
            links=links["actions"],
            buttons=hold_links.buttons_for(hold, timezone.now()) if pressable else None,
        )
        if hold
        else None,
        listed=tuple(
            webhook_formats.HoldShown(
                question=shown["question"],
                agent=shown["agent"],
                amounts=amounts.get(shown.get("pk"), ()),
                expires=shown["expires_at"],
                links=shown["actions"] or hold_links.ActionLinks(shown["link"]),
            )
            for shown in links["listed"]
        ),
    )


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post_webhook(notification: Notification) -> None:
    webhook = notification.webhook
    if webhook.format == WebhookChannel.Format.SLACK and webhook.slack_channel and settings.SLACK_BOT_TOKEN:
        post_to_slack(notification)
        return
    try:
        destination = destinations.pinned(webhook.url)
    except destinations.Refused as refused:
        raise Refused(f"not sent: {refused}") from None
    except destinations.Unresolvable:
        raise Unavailable(UNREACHABLE) from None
    body = json.dumps(webhook_body(notification), separators=(",", ":"), ensure_ascii=False).encode()
    headers = {
        "Host": destination.host_header,
        "Content-Type": "application/json",
        SIGNATURE_HEADER: sign(webhook.secret, body),
    }
    try:
        # trust_env off: a proxy from the environment would connect to the name, not the address checked
        with httpx.Client(trust_env=False, verify=tls.trust_store(), follow_redirects=False) as client:
            response = client.post(
                destination.url,
                content=body,
                headers=headers,
                timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
                extensions={"sni_hostname": destination.server_name},
            )
    except (httpx.HTTPError, OSError):
        raise Unavailable(UNREACHABLE) from None
    status = response.status_code
    if status == 429 or status >= 500:
        raise Unavailable(f"webhook answered {status}: unavailable")
    if 300 <= status < 400:  # a redirect is not a delivery, and is never followed
        raise Refused(f"webhook answered {status}: a redirect, not followed")
    if not 200 <= status < 300:
        raise Refused(f"webhook answered {status}: refused")


def post_to_slack(notification: Notification) -> None:
    """Post a Slack-format message as the bot to its webhook's Slack channel, and keep its ``ts`` when it is about
    one hold: the message is replaced in place once the hold is decided or closed (``slackapp.messages``)."""
    body = webhook_body(notification)
    channel = notification.webhook.slack_channel
    try:
        ts = slack_api.post_message(channel, body["text"], body["blocks"])
    except slack_api.Unavailable as error:
        raise Unavailable(f"Slack {error}") from None
    except slack_api.Refused as error:
        raise Refused(f"Slack refused: {error}") from None
    if notification.hold_id:
        SlackMessage.objects.get_or_create(
            channel_id=channel,
            ts=ts,
            defaults={"hold_id": notification.hold_id, "by_bot": True, "created_at": timezone.now()},
        )
