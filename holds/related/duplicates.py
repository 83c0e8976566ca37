"""Possible duplicates: another hold asking for what this one asks.

An item of a hold is a possible duplicate when another hold, open or with that item approved within
``RELATED_WINDOW_DAYS`` (by a decision here or as the platform reports; a decision the platform reports but not
item by item counts as approving every item, failing closed), has an item with the same subject, the same
capability and the same action kind (an unknown kind, "", matches any). ``approved_on_subject`` says how much was
already approved on each of a hold's subjects, by whom and when.

Both read ``holds.related.related``: ``possible_duplicates`` and ``approved_on_subject`` count every related hold
(the safeguards'), ``visible_duplicates`` and a viewer passed to ``approved_on_subject`` only those the viewer may
see (the pages').
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from holds.mirror import amounts
from holds.models import Hold
from holds.related.related import Related, Shared, every_related, same_action, visible_related
from reviewqueue.viewer import Viewer


@dataclasses.dataclass(frozen=True)
class Duplicate:
    """Another hold this one may duplicate: the related hold, the subjects by which it does, and whether it is
    open (else an item of it was approved within the window)."""

    related: Related
    shared: tuple[Shared, ...]

    @property
    def hold(self) -> Hold:
        return self.related.hold

    @property
    def is_open(self) -> bool:
        return self.related.is_open

    @property
    def positions(self) -> frozenset[int]:
        """This hold's items that may be duplicates."""
        return frozenset(shared.position for shared in self.shared)


def duplicates_among(related: list[Related]) -> list[Duplicate]:
    """Which of ``related`` (one hold's) are possible duplicates of it."""
    found = []
    for other in related:
        matching = tuple(
            shared
            for shared in other.shared
            if same_action(shared) and (other.is_open or other.approval_of(shared.other_position) is not None)
        )
        if matching:
            found.append(Duplicate(other, matching))
    return found


def possible_duplicates(hold: Hold, *, now: datetime | None = None) -> list[Duplicate]:
    """Every possible duplicate of ``hold``, whether a viewer may see it or not: for the safeguards."""
    return duplicates_among(every_related(hold, now=now))


def visible_duplicates(hold: Hold, viewer: Viewer, *, now: datetime | None = None) -> list[Duplicate]:
    """The possible duplicates of ``hold`` that ``viewer`` may see: for the pages and the API."""
    return duplicates_among(visible_related(hold, viewer, now=now))


@dataclasses.dataclass(frozen=True)
class SubjectApproval:
    """An amount approved on one of a hold's subjects on another hold: ``amount`` as ``holds.mirror.amounts.largest``
    reads the approved item (None: it carries none; ``amounts.UNREADABLE``: not read for certain), by whom, when.
    ``certain`` is False when the platform reports a decision but not item by item."""

    value: str
    shown: str
    key: str
    hold: Hold
    position: int
    amount: Decimal | None
    by: str
    at: datetime | None
    certain: bool
    same_capability: bool


def approved_on_subject(
    hold: Hold,
    window: timedelta | None = None,
    *,
    viewer: Viewer | None = None,
    now: datetime | None = None,
    related: list[Related] | None = None,
) -> list[SubjectApproval]:
    """The amounts already approved on ``hold``'s subjects within ``window`` (by default ``RELATED_WINDOW_DAYS``),
    on other holds, newest first: every one, or those ``viewer`` may see. ``related``, when the caller has read it
    already (with the same window and viewer), saves reading it again."""
    now = now or timezone.now()
    if related is None:
        lister = every_related if viewer is None else lambda hold, **kwargs: visible_related(hold, viewer, **kwargs)
        related = lister(hold, now=now, within=window)
    found = []
    for other in related:
        items = {item.position: item for item in other.hold.items.all()}
        for shared in other.shared:
            approval = other.approval_of(shared.other_position)
            item = items.get(shared.other_position)
            if approval is None or item is None:
                continue
            data = approval.data if approval.data is not None else item.data
            amount = amounts.largest([data]) if approval.certain else amounts.UNREADABLE
            found.append(
                SubjectApproval(
                    value=shared.value,
                    shown=shared.shown,
                    key=shared.key,
                    hold=other.hold,
                    position=shared.other_position,
                    amount=amount,
                    by=approval.by,
                    at=approval.at,
                    certain=approval.certain,
                    same_capability=shared.same_capability,
                )
            )
    return sorted(found, key=lambda approval: approval.at or now, reverse=True)
