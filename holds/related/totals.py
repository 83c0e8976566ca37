"""Each hold's subject totals, for a policy's condition on them (``approvals.subject_totals``).

For every subject of a hold (its ``HoldSubject`` rows): the amounts the hold asks on that subject's items, and the
amounts approved on it on other holds of the same capability, as ``holds.related.duplicates.approved_on_subject``
finds them (the one rule of what was approved on a subject within a window). Each amount is read as
``holds.mirror.amounts.largest`` reads it (the fail-closed reader): one it cannot read for certain, or an approval
the platform reports but not item by item, is handed over as not read for certain, and counts as over. The holds app
registers ``totals`` and ``totals_of_many`` with ``approvals.subject_totals`` at start-up (``holds/apps.py``). A
subject shared by more rows than ``holds.related.related`` reads (``MOST_ROWS``) is in doubt too.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.utils import timezone

from approvals.subject_totals import Counted, SubjectTotal, Totals
from holds.mirror import amounts
from holds.models import Hold, HoldSubject
from holds.related.duplicates import approved_on_subject
from holds.related.related import MOST_ROWS, every_related, subjects_of_hold
from holds.related.subjects import ITEM_KEY
from teams.scopes import glob_matches


def totals(hold: Hold, days: int, *, now: datetime | None = None) -> Totals:
    """``hold``'s subject totals, by subject value, with the approvals of the last ``days`` days ({} without a
    subject)."""
    own = subjects_of_hold(hold)
    if not own:
        return {}
    now = now or timezone.now()
    window = timedelta(days=days)
    related = every_related(hold, now=now, within=window)
    approved = approved_on_subject(hold, window, now=now, related=related)
    # The related rows are read up to MOST_ROWS: past it, some approvals may be missing, so the totals are in doubt.
    cut = sum(len(other.shared) for other in related) >= MOST_ROWS
    items = {item.position: item for item in hold.items.all()}
    found: dict[str, SubjectTotal] = {}
    for value in dict.fromkeys(subject.value for subject in own):
        positions = sorted({subject.position for subject in own if subject.value == value})
        asked = tuple(
            Counted(_certain(amounts.largest([items[position].data])), None, f"{hold.hold_id} item {position}")
            for position in positions
            if position in items
        )
        others = ((Counted(None, None, f"more than {MOST_ROWS} related items"),) if cut else ()) + tuple(
            Counted(
                _certain(approval.amount) if approval.certain else None,
                approval.at,
                f"{approval.hold.hold_id} item {approval.position}",
            )
            for approval in approved
            if approval.value == value and approval.same_capability
        )
        shown = next((approval.shown for approval in approved if approval.value == value), value)
        found[value] = SubjectTotal(
            _shown(items, own, value, shown), tuple(one for one in asked if one.amount != 0), others, now
        )
    return found


def totals_of_many(holds: Iterable, days: int, policies: Iterable = (), *, now: datetime | None = None) -> dict:
    """The subject totals of each of ``holds`` (by pk), for the queue's badges. Only holds that have subjects and
    that a policy with the condition may match (its globs, when ``policies`` are given) are read one by one; the
    others cost one query in all."""
    holds = list(holds)
    having = set(HoldSubject.objects.filter(hold__in=[hold.pk for hold in holds]).values_list("hold", flat=True))
    asking = [policy for policy in policies if getattr(policy, "subject_total_over", None) is not None]
    found = {}
    for hold in holds:
        if hold.pk not in having or (asking and not any(_globs_match(policy, hold) for policy in asking)):
            found[hold.pk] = {}
        else:
            full = Hold.objects.prefetch_related("items").get(pk=hold.pk)
            found[hold.pk] = totals(full, days, now=now)
    return found


def _globs_match(policy, hold) -> bool:
    return (
        glob_matches(policy.env_pattern, hold.env)
        and glob_matches(policy.agent_pattern, hold.agent)
        and glob_matches(policy.capability_pattern, hold.capability)
    )


def _certain(amount):
    """An amount as read (None: it carries none, counted as 0), or None when not read for certain."""
    if amount is None:
        return 0
    return None if amount == amounts.UNREADABLE else amount


def _shown(items: dict, own: list[HoldSubject], value: str, fallback: str) -> str:
    """The subject as this hold's item writes it ("A-1001"), else as another hold's does."""
    for subject in own:
        item = items.get(subject.position)
        if subject.value != value or item is None:
            continue
        raw = item.item_id if subject.key == ITEM_KEY else (item.data or {}).get(subject.key)
        if isinstance(raw, str | int) and not isinstance(raw, bool):
            return str(raw).strip()
    return fallback
