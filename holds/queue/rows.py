"""The queue's rows as HTML, each drawn by the ``queue-row`` partial, rendered once and then read from the cache.

A row's key is a digest of what the partial reads: the listed hold's values it shows, and
its platform content through its payload digest (which sync changes with every change of
content, items included: the question, items and amounts come from the hold read whole);
whoever has a live claim on it, its urgency band, whether it is new to the reviewer, its
approval badge, the possible duplicates it names; the viewer's time zone and language, the settings and URL it
reads; the source of the template holding the partial, and ``ROW_VERSION``, which declares the
Python code that writes the values it shows. Whatever changes what a row says therefore
changes its key (tests/speed/test_queue_cache.py changes each), and a stale row is never read.

Only the words of the two relative times ("37 minutes ago", "2 hours, 5 minutes") change
with the clock alone; they are left out of the cached markup and filled in on each
request (app.js keeps them current in the browser).
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from django.contrib.auth import get_user_model
from django.template.loader import get_template
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.safestring import SafeString, mark_safe

from approvals.badges import Badge
from holds.deciding import describe
from holds.models import Hold
from holds.queue import display as queue_display
from holds.queue import listing as holds_queue
from holds.related.duplicates import Flag
from people import relative
from reviewqueue import processcache, softcache

ROW_TEMPLATE = "holds/_queue_body.html"
ROW_PARTIAL = ROW_TEMPLATE + "#queue-row"
# Bump with any change to the Python code writing a row's values (holds.deciding.describe's amounts, people's names, the
# approval badge's words, this module): a deploy changing it then reads no row cached before. The template's own
# source is in the key already.
ROW_VERSION = 2
# Comments agent text can never produce: every value in the row template is escaped, which turns "<" into "&lt;".
AGE_WORDS = "<!--age-->"
LEFT_WORDS = "<!--left-->"
ROW_SECONDS = 24 * 3600  # a row nobody asks for again leaves the cache within a day


class Row:
    """One row of the queue: the hold as listed, its urgency band, who claims it, whether it is new, and its ``html``.

    ``question``, ``items`` and ``amounts``, which the partial reads of the hold read whole, are set only for a row
    rendered on this request (empty for one read from the cache).
    """

    def __init__(
        self,
        listed: holds_queue.Listed,
        now: datetime,
        loaded_at: datetime,
        approvals: Badge | None = None,
        duplicate: Flag | None = None,
    ):
        self.hold = listed
        self.approvals = approvals  # the approval badge, for a hold that needs several approvals or has some
        self.duplicate = duplicate  # the other holds it may duplicate (holds/related/duplicates.py), if any
        self.assigned_to = listed.assigned_to  # whom the hold is assigned to, a username or a group's name, or ""
        self.urgency = queue_display.urgency(listed, now)
        self.claimant = _claimant(listed, now)
        self.new = listed.first_seen_at > loaded_at
        self.question = ""
        self.items: list = []
        self.amounts: list[str] = []
        self.html = SafeString()


def _claimant(listed: holds_queue.Listed, now: datetime):
    """The user with a live claim on the listed hold, made from the listed values (unsaved: for showing only)."""
    if not (listed.claimed_by_id and listed.claim_expires_at and listed.claim_expires_at > now):
        return None
    return get_user_model()(
        pk=listed.claimed_by_id,
        username=listed.claimant_username,
        first_name=listed.claimant_first_name,
        last_name=listed.claimant_last_name,
        email=listed.claimant_email,
    )


def rows(
    listed: list[holds_queue.Listed],
    now: datetime,
    loaded_at: datetime,
    approvals: dict[int, Badge] | None = None,
    duplicates: dict[int, Flag] | None = None,
) -> list[Row]:
    """The queue's rows for the ``listed`` holds, their markup kept by the process, read from the cache in one round
    trip, or rendered.

    A rendered row is stored only if the hold, read again whole to render it, still has the payload digest it was
    listed with: a row rendered from content that changed in between is shown, never kept.
    ``approvals`` gives the approval badge of the holds that have one, by pk (see ``approvals.badges``);
    ``duplicates`` the possible duplicates' flags (``holds.related.duplicates.flagged``).
    """
    approvals, duplicates = approvals or {}, duplicates or {}
    found = [Row(hold, now, loaded_at, approvals.get(hold.pk), duplicates.get(hold.pk)) for hold in listed]
    viewer = viewer_digest()  # hashed once for the fifty keys
    keys = {key(row, viewer): row for row in found}
    cached = softcache.get_many(list(keys), "the queue rows", content_keyed=True)
    missing = {key: row for key, row in keys.items() if key not in cached}
    if missing:
        wholes = Hold.objects.only("question", "payload_digest").prefetch_related("items")
        by_pk = wholes.in_bulk([row.hold.pk for row in missing.values()])
        partial = get_template(ROW_PARTIAL)
        hold_url = _hold_url_prefix()
        fresh = {}
        for row_key, row in missing.items():
            whole = by_pk[row.hold.pk]
            row.question, row.items, row.amounts = whole.question, list(whole.items.all()), queue_display.amounts(whole)
            cached[row_key] = partial.render({"row": row, "hold_url": hold_url})
            if whole.payload_digest == row.hold.payload_digest:
                fresh[row_key] = cached[row_key]
        if fresh:
            softcache.set_many(fresh, ROW_SECONDS, "the queue rows", content_keyed=True)
    language = translation.get_language()
    for row_key, row in keys.items():
        row.html = _with_times(cached[row_key], row.hold, now, language)
    return found


def viewer_digest() -> str:
    """What renders every row alike for this viewer, hashed: the version, the template's source, the settings read
    per request (tests change them), the hold page's URL, and the viewer's time zone and language."""
    return hashlib.sha256(
        repr(
            (
                ROW_VERSION,
                softcache.template_digest(ROW_TEMPLATE),
                tuple(describe.currency_keys()),
                _hold_url_prefix(),
                timezone.get_current_timezone_name(),
                translation.get_language(),
            )
        ).encode()
    ).hexdigest()


def key(row: Row, viewer: str | None = None) -> str:
    """The row's cache key: a digest of what its partial reads (see the module's docstring); ``viewer`` is
    ``viewer_digest()``, given when many rows share it."""
    hold, claimant = row.hold, row.claimant
    who = (claimant.pk, claimant.get_username(), claimant.get_full_name(), claimant.email) if claimant else None
    return _digest(
        viewer or viewer_digest(),
        hold.pk,
        hold.env,
        hold.agent,
        hold.capability,
        hold.payload_digest,
        hold.created_at,
        hold.expires_at,
        who,
        row.urgency,
        row.new,
        row.approvals,
        row.assigned_to,
        row.duplicate,
    )


@processcache.cached(maxsize=holds_queue.PAGE_SIZE * 100)
def _digest(*parts) -> str:
    """A row's key from what its partial reads, remembered by the process: a page lists mostly the rows it listed
    before, and hashing them took longer than finding them again. Values that compare equal show alike (the same
    moment in another zone, say), so they may share a key."""
    return "queue-row:" + hashlib.sha256(repr(parts).encode()).hexdigest()


def markup(rows: list[Row]) -> SafeString:
    """The rows' markup one after the other, for the table's body: joined once rather than drawn row by row."""
    return mark_safe("".join(row.html for row in rows))  # noqa: S308 -- each row's html is safe (``_with_times``)


@processcache.cached
def _hold_url_prefix() -> str:
    """The hold page's URL without its id, reversed once: the rows append the id."""
    return reverse("hold", args=[0]).removesuffix("0/")


def _with_times(html: str, hold: holds_queue.Listed, now: datetime, language: str | None) -> SafeString:
    """The row's markup with the words of its two times filled in, in ``language``."""
    html = html.replace(AGE_WORDS, relative.ago(hold.created_at, now, language), 1)
    if hold.expires_at:
        html = html.replace(LEFT_WORDS, relative.until(hold.expires_at, now, language), 1)
    # The partial escaped every value; the words of the times are Django's own.
    return SafeString(html)
