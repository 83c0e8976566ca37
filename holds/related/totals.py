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

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.utils import timezone

from approvals import policies, subject_totals
from approvals.subject_totals import Counted, SubjectTotal, Totals
from holds.mirror import amounts
from holds.models import Hold, HoldSubject
from holds.related.duplicates import approved_on_subject
from holds.related.related import MOST_ROWS, Related, every_related, related_of_many, subjects_of_hold, with_items
from holds.related.subjects import ITEM_KEY
from teams.scopes import glob_matches


def totals(hold: Hold, days: int, *, now: datetime | None = None) -> Totals:
    """``hold``'s subject totals, by subject value, with the approvals of the last ``days`` days ({} without a
    subject)."""
    own = subjects_of_hold(hold)
    if not own:
        return {}
    now = now or timezone.now()
    return _totals(hold, own, every_related(hold, now=now, within=timedelta(days=days)), days, now)


def totals_of_many(holds: Iterable, days: int, policies: Iterable = (), *, now: datetime | None = None) -> dict:
    """The subject totals of each of ``holds`` (by pk), for the queue's badges: as ``totals`` gives them one by one,
    in at most 8 queries whatever their number (their subjects; the holds a policy with the condition may match, with
    their items; the rows sharing their subjects; those holds, their items, live decisions and the decisions' items).
    """
    now = now or timezone.now()
    asking = [policy for policy in policies if policy.subject_total_over is not None]
    pks = [hold.pk for hold in holds if not asking or any(_globs_match(policy, hold) for policy in asking)]
    found: dict[int, Totals] = {hold.pk: {} for hold in holds}
    own: dict[int, list[HoldSubject]] = defaultdict(list)
    for subject in HoldSubject.objects.filter(hold__in=pks).order_by("hold", "position", "pk"):
        own[subject.hold_id].append(subject)
    if not own:
        return found
    listed = with_items(Hold.objects.filter(pk__in=list(own)))
    related = related_of_many(listed, own, now - timedelta(days=days))
    for hold in listed:
        if related is None:  # more rows share their subjects than are read at once: each hold as ``totals`` reads it
            found[hold.pk] = totals(hold, days, now=now)
        else:
            found[hold.pk] = _totals(hold, own[hold.pk], related[hold.pk], days, now)
    return found


def _totals(hold: Hold, own: list[HoldSubject], related: list[Related], days: int, now: datetime) -> Totals:
    approved = approved_on_subject(hold, timedelta(days=days), now=now, related=related)
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


def lock_subjects(locked: Hold) -> None:
    """Decide holds sharing a subject in turns while a policy has a condition on a subject's total: lock the subject
    rows of every hold sharing ``locked``'s (the caller locked its row, in a transaction), in one order, so that a
    decision of another hold on that subject, made meanwhile, is committed and counted before this one's is.
    Without such a policy, nothing."""
    if subject_totals.days_asked(policies.all_policies()) is None:
        return
    values = HoldSubject.objects.filter(hold=locked).values("value")
    sharing = HoldSubject.objects.filter(value__in=values).order_by("pk").select_for_update(no_key=True)
    list(sharing.values_list("pk", flat=True)[:MOST_ROWS])


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
