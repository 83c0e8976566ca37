"""What each notification says: its title and body, written from its event's templates in the active time zone.

``notify.create`` renders each message once in the site's zone (the webhooks' copy) and once in each recipient's
(``timezone.override``). An event's words are notifications/messages/<event>/title.txt and body.txt, each extending
notifications/messages/title.txt or body.txt, which add whom a delegate's copy is for (``away.on_behalf``); a
phrase two events share is a partial (``_asked.txt``, ``_links.txt``). The bases and partials end without a
newline: every character of theirs is the message's.

The text is plain, and agent-written text (a question, an agent's name, a note) goes in as written: autoescape is
off in the two bases, so a ``<`` stays a ``<`` rather than becoming ``&lt;`` in an email or a Slack message. Each
channel escapes for itself where it shows the text: email.html by Django's escaping, Slack's mrkdwn by
``webhook_formats.slack_escaped``, a Teams card by putting it in TextRuns. The template language runs nothing of a
value it shows, so braces or tags in a question are only text.
"""

from __future__ import annotations

from django.template.loader import render_to_string

from notifications import away
from reviewqueue.showing import on_one_line

TITLE_LIMIT = 80  # what a title quotes of a question


def render(event: str, context: dict, on_behalf: away.Away | None = None) -> tuple[str, str]:
    """The (title, body) of a message of ``event`` given ``context``, its times in the active time zone; a
    delegate's copy when ``on_behalf`` is who is away."""
    context = {**context, "on_behalf": away.on_behalf(on_behalf) if on_behalf else ""}
    title = render_to_string(f"notifications/messages/{event}/title.txt", context)
    return title, render_to_string(f"notifications/messages/{event}/body.txt", context)


def short(text: str, limit: int = TITLE_LIMIT) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis where it was cut."""
    return on_one_line(text, limit)
