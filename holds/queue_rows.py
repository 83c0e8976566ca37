"""The queue's rows as HTML, each rendered once and then read from the cache.

A row's key names everything its markup shows: the hold's platform content (its
payload digest, which sync changes with every change of content, items included),
its env, whoever has a live claim on it, its urgency band, whether it is new to the
reviewer, its approval badge and assignee, the viewer's time zone and language, and a version of what renders it (the
settings it reads, the hold page's URL, and the source of the row template and of the
code writing its values). Whatever changes what a row says therefore changes its key,
and a stale row is never read.

Only the words of the two relative times ("37 minutes ago", "2 hours, 5 minutes") change
with the clock alone; they are left out of the cached markup and filled in on each
request (app.js keeps them current in the browser).
"""

from __future__ import annotations

import functools
import hashlib
from datetime import datetime

from django.contrib.auth import get_user_model
from django.template.loader import get_template
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.safestring import mark_safe

from approvals.badges import Badge
from holds import describe
from holds import queue as holds_queue
from holds.models import Hold
from people import relative
from reviewqueue import softcache

ROW_TEMPLATE = "holds/queue/_row.html"
# The modules whose code writes a row's values: a deploy changing one reads no old row.
ROW_CODE_MODULES = (
    "holds.queue_rows", "holds.queue", "holds.describe", "reviewqueue.jsonvalues", "people.naming",
    "people.templatetags.people", "approvals.badges", "approvals.policies",
)
# Comments agent text can never produce: every value in the row template is escaped, which turns "<" into "&lt;".
AGE_WORDS = "<!--age-->"
LEFT_WORDS = "<!--left-->"
ROW_SECONDS = 24 * 3600  # a row nobody asks for again leaves the cache within a day


class Row:
    """One row of the queue: the hold as listed, its urgency band, who claims it, whether it is new, and its ``html``.

    ``hold`` is the page's ``Listed`` hold, or, for a row that had to be rendered, the whole hold
    with its items: ``items`` and ``amounts``, which the row template reads, are a rendered row's.
    """

    def __init__(
        self, listed: holds_queue.Listed, now: datetime, loaded_at: datetime, approvals: Badge | None = None,
        assigned_to: str = "",
    ):
        self.hold = listed
        self.approvals = approvals  # the approval badge, for a hold that needs several approvals or has some
        self.assigned_to = assigned_to  # whom the hold is assigned to, a username or a group's name ("" for nobody)
        self.urgency = holds_queue.urgency(listed, now)
        self.claimant = _claimant(listed, now)
        self.new = listed.first_seen_at > loaded_at
        self.html = ""

    @functools.cached_property
    def items(self) -> list:
        return list(self.hold.items.all())

    @functools.cached_property
    def amounts(self) -> list[str]:
        return holds_queue.amounts(self.hold)


def _claimant(listed: holds_queue.Listed, now: datetime):
    """The user with a live claim on the listed hold, made from the listed values (unsaved: for showing only)."""
    if not (listed.claimed_by_id and listed.claim_expires_at and listed.claim_expires_at > now):
        return None
    return get_user_model()(
        pk=listed.claimed_by_id, username=listed.claimant_username, first_name=listed.claimant_first_name,
        last_name=listed.claimant_last_name, email=listed.claimant_email,
    )


# What the row template reads of a hold it renders, besides its items and claimant.
RENDERED_FIELDS = (
    "env", "hold_id", "question", "agent", "capability", "created_at", "expires_at", "first_seen_at", "amount",
    "payload_digest", "claim_expires_at", "claimed_by__username", "claimed_by__first_name", "claimed_by__last_name",
    "claimed_by__email",
)


def rows(
    listed: list[holds_queue.Listed], now: datetime, loaded_at: datetime, approvals: dict[int, Badge] | None = None,
    assigned_to: dict[int, str] | None = None,
) -> list[Row]:
    """The queue's rows for the ``listed`` holds, their markup kept by the process, read from the cache in one round
    trip, or rendered.

    A rendered row is stored only if the hold, read again whole to render it, still has the key
    it was listed with: a row rendered from a hold that changed in between is shown, never kept.
    ``approvals`` gives the approval badge of the holds that have one, by pk (see ``approvals.badges``), and
    ``assigned_to`` the assignee of those assigned, by pk (see ``holds.assignments.labels``).
    """
    approvals, assigned_to = approvals or {}, assigned_to or {}
    found = [Row(hold, now, loaded_at, approvals.get(hold.pk), assigned_to.get(hold.pk, "")) for hold in listed]
    # What renders every row alike, and the viewer's zone and language, hashed once for the fifty keys.
    viewer = hashlib.sha256(
        repr((_version(), timezone.get_current_timezone_name(), translation.get_language())).encode()
    ).hexdigest()
    keys = {_key(row, viewer): row for row in found}
    cached = softcache.get_many(list(keys), "the queue rows", content_keyed=True)
    missing = {key: row for key, row in keys.items() if key not in cached}
    if missing:
        wholes = Hold.objects.select_related("claimed_by").only(*RENDERED_FIELDS).prefetch_related("items")
        by_pk = wholes.in_bulk([row.hold.pk for row in missing.values()])
        template = get_template(ROW_TEMPLATE)
        hold_url = _hold_url_prefix()
        fresh = {}
        for key, row in missing.items():
            row.hold = by_pk[row.hold.pk]
            row.claimant = row.hold.claimant(now)
            cached[key] = template.render({"row": row, "hold_url": hold_url})
            if _key(row, viewer) == key:
                fresh[key] = cached[key]
        if fresh:
            softcache.set_many(fresh, ROW_SECONDS, "the queue rows", content_keyed=True)
    for key, row in keys.items():
        row.html = _with_times(cached[key], row.hold, now)
    return found


def markup(found: list[Row]) -> str:
    """The rows' markup in one piece, which the page prints at once instead of looking up each row's."""
    # The row template escaped every value; the words of the times are Django's own.
    return mark_safe("".join(row.html for row in found))  # noqa: S308


def _key(row: Row, viewer: str) -> str:
    """What the row's markup shows, hashed: the hold's content, env, claimant, urgency, newness, approval badge and
    assignee, and the viewer's zone."""
    hold, claimant = row.hold, row.claimant
    who = (claimant.pk, claimant.get_username(), claimant.get_full_name(), claimant.email) if claimant else None
    # The times too, which sync changes only with the digest, in case anything else ever writes them.
    parts = (
        viewer, hold.pk, hold.env, hold.payload_digest, hold.created_at, hold.expires_at, who, row.urgency, row.new,
        row.approvals, row.assigned_to,
    )
    return "queue-row:" + hashlib.sha256(repr(parts).encode()).hexdigest()


def _version() -> tuple:
    """What renders every row alike: the settings read per request (tests change them), the URL and the code."""
    return (softcache.code_digest(ROW_TEMPLATE, ROW_CODE_MODULES), tuple(describe.currency_keys()), _hold_url_prefix())


@functools.cache
def _hold_url_prefix() -> str:
    """The hold page's URL without its id, reversed once: the rows append the id."""
    return reverse("hold", args=[0]).removesuffix("0/")


def _with_times(html: str, hold: Hold, now: datetime) -> str:
    """The row's markup with the words of its two times filled in (``markup`` marks the page's rows safe at once)."""
    html = html.replace(AGE_WORDS, relative.ago(hold.created_at, now), 1)
    if hold.expires_at:
        html = html.replace(LEFT_WORDS, relative.until(hold.expires_at, now), 1)
    return html
