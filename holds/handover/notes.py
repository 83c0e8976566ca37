"""Notes on a hold, between reviewers: a thread everyone who can see the hold reads.

Notes stay in Review Queue: nothing sends them to the agent or the platform. They are plain
text, shown escaped like agent text (no markdown, no links made), and added, never edited or
deleted (the table's trigger refuses both; a correction is a new note). Each is audited with
its text in the same transaction.

``@username`` mentions a person; those who may see the hold (active reviewers in its team
scopes) are told (``notifications.notify.mentioned``). Anyone else, out of scope or unknown,
is treated alike: not told, not recorded, and nothing on the page or in the audit tells them
apart, so a mention reveals nobody's existence. Only people told count: a note tells at most
``MAX_MENTIONS`` people, and an author tells at most ``MENTIONS_PER_MINUTE`` people in any
minute (their notes taken in turns); other @names stay text, so bogus names crowd nobody out.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from audit import events
from audit.events import holding
from holds.models import Hold, Note
from notifications import notify
from reviewqueue import changes, readers, roles
from teams import scopes

MAX_NOTE = 4000
MAX_MENTIONS = 20  # people told by one note; more @names are kept as text
MENTIONS_PER_MINUTE = 20  # people one author's notes tell in a minute: a flood of notes tells nobody more
MOST_NAMES = 1000  # @names looked up for one note (a 4,000-character note holds fewer)
# "@" then a username (Django's characters: letters, digits and @ . + - _), not inside a word or an email address,
# and ending on a letter or digit so that "@bob," or "(@bob)." names bob.
MENTION = re.compile(r"(?<![\w@.+-])@([\w.@+-]*\w)")


def read_text(value: str, name: str = "text") -> str:
    """A note's text from a form: required, at most ``MAX_NOTE`` characters (``readers.BadValue`` else)."""
    text = readers.text(value.replace("\r\n", "\n"), name, MAX_NOTE)
    if not text:
        raise readers.BadValue(name, "write the note first")
    return text


def mentioned_names(text: str) -> list[str]:
    """The usernames ``text`` mentions, each once, in order."""
    return list(dict.fromkeys(MENTION.findall(text)))[:MOST_NAMES]


def add_note(hold: Hold, author, text: str, now: datetime | None = None) -> tuple[Note, list]:
    """Add ``author``'s note to ``hold``; return it and the people its mentions told (who may see the hold), within
    ``MAX_MENTIONS`` and the author's ``MENTIONS_PER_MINUTE``.

    The author mentioning themself is not told of it.
    """
    now = now or timezone.now()
    may_be_told = [person for person in _may_be_told(hold, mentioned_names(text)) if person.pk != author.pk]
    with transaction.atomic():
        # The author's notes in turns, so that two at once cannot both use the minute's last mentions.
        list(get_user_model().objects.select_for_update(no_key=True).filter(pk=author.pk).values_list("pk", flat=True))
        told = may_be_told[: max(0, min(MAX_MENTIONS, MENTIONS_PER_MINUTE - _told_lately(author, now)))]
        note = Note.objects.create(hold=hold, author=author, text=text, created_at=now)
        note.mentioned.set(told)
        events.append(holding.note_added(actor=author, hold=hold, note=note, told=told))
        if told:
            notify.mentioned(note, told)
        changes.publish("note", [hold])
    return note, told


def _told_lately(author, now: datetime) -> int:
    """How many people ``author``'s notes of the minute before ``now`` told."""
    return Note.mentioned.through.objects.filter(
        note__author=author, note__created_at__gt=now - timedelta(minutes=1), note__created_at__lte=now
    ).count()


def _may_be_told(hold: Hold, names: list[str]) -> list:
    if not names:
        return []
    people = roles.reviewers().filter(username__in=names)
    order = {name: position for position, name in enumerate(names)}
    return sorted(
        scopes.users_who_may_see([hold], scopes.viewers_of(people)), key=lambda person: order[person.get_username()]
    )


def thread(hold: Hold) -> list[Note]:
    """The hold's notes, oldest first, with their authors."""
    return list(Note.objects.filter(hold=hold).select_related("author").order_by("created_at", "pk"))
