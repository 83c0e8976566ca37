"""Running totals of decisions for /metrics, folded in from the audit trail as it grows.

Counting every decision at each scrape costs a scan of the whole decisions table, which
only grows. The audit trail records each decision stored, applied, not applied or
withdrawn, and its sequence numbers commit in order (appends take turns on the chain
head's lock), so the events after the last one folded are exactly the new ones: each
scrape folds just those into ``DecisionTally`` rows and reads the totals back. One
process folds at a time (a lock on the watermark row); a scrape that finds it taken
reads the totals as they are. A deployment's first scrape catches up on the history in
chunks of ``FOLD_CHUNK`` events per scrape, so no scrape runs long.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict

from django.db import transaction
from django.db.models import DurationField, ExpressionWrapper, F, Max

from audit.models import AuditEvent, EventKind
from operations.models import DecisionTally, TallyWatermark

FOLD_CHUNK = 100_000
OUTCOMES = {EventKind.APPLIED: "applied", EventKind.NOT_APPLIED: "not_applied", EventKind.WITHDRAWN: "withdrawn"}
DECIDE_BUCKETS = (60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 3 * 24 * 3600)
DELIVERY_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 300, 600, 1800)
# From the agent's ask to the decision, by the channel it came through: name "time_to_decision:page", label a bucket.
DECISION_BUCKETS = (5, 15, 30, 60, 120, 300, 600, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 12 * 3600, 24 * 3600)
BY_CHANNEL = "time_to_decision"
UNKNOWN_CHANNEL = "page"  # decisions recorded before their events named a channel came from the hold page
BY_POLICY = "by_policy"  # a policy's own decisions: name "by_policy:approved" (or ":default_outcome"), label its name
HISTOGRAMS = {"time_to_decide": DECIDE_BUCKETS, "delivery_latency": DELIVERY_BUCKETS, BY_CHANNEL: DECISION_BUCKETS}

# The time each new event adds: from the hold's creation to the decision stored (decision_submitted),
# and from the decision stored to the platform applying it (applied). Portable expressions, not SQL of
# PostgreSQL's, so the quickstart's SQLite folds too.
TO_DECIDE = ExpressionWrapper(F("decision__created_at") - F("decision__hold__created_at"), output_field=DurationField())
TO_APPLY = ExpressionWrapper(F("decision__finished_at") - F("decision__created_at"), output_field=DurationField())


def fold() -> None:
    """Add the audit events recorded since the last fold to the tallies, unless another process is folding."""
    with transaction.atomic():
        TallyWatermark.objects.get_or_create(pk=1)
        # SQLite has no row locks (Django then drops FOR UPDATE): its IMMEDIATE transactions fold one at a time.
        watermark = TallyWatermark.objects.select_for_update(skip_locked=True, no_key=True).filter(pk=1).first()
        if watermark is None:
            return
        latest = AuditEvent.objects.aggregate(latest=Max("sequence"))["latest"] or 0
        upper = min(latest, watermark.audit_sequence + FOLD_CHUNK)
        if upper <= watermark.audit_sequence:
            return
        _add(_tallies_between(watermark.audit_sequence, upper))
        TallyWatermark.objects.filter(pk=1).update(audit_sequence=upper)


def _tallies_between(after: int, upto: int) -> dict[tuple[str, str], list[float]]:
    kinds = (EventKind.DECISION_SUBMITTED, *OUTCOMES)
    counts: Counter = Counter()
    totals: defaultdict = defaultdict(float)
    events = AuditEvent.objects.filter(sequence__gt=after, sequence__lte=upto, kind__in=kinds, decision__isnull=False)
    rows = events.order_by().values_list("kind", TO_DECIDE, TO_APPLY, "payload__policy", "payload__channel")
    for kind, to_decide, to_apply, policy, channel in rows.iterator(chunk_size=10_000):
        if kind in OUTCOMES:
            counts["outcome", OUTCOMES[kind]] += 1
        if kind == EventKind.DECISION_SUBMITTED:
            _observe(counts, totals, "time_to_decide", to_decide.total_seconds())
            channel = channel[:20] if isinstance(channel, str) and channel else UNKNOWN_CHANNEL
            _observe(counts, totals, BY_CHANNEL, to_decide.total_seconds(), f"{BY_CHANNEL}:{channel}")
            if isinstance(policy, dict) and policy.get("name"):  # a policy's own decision
                counts[f"{BY_POLICY}:{policy.get('kind') or 'approved'}", str(policy["name"])] += 1
        elif kind == EventKind.APPLIED and to_apply is not None:
            _observe(counts, totals, "delivery_latency", to_apply.total_seconds())
    keys = set(counts) | set(totals)
    return {key: [counts[key], totals[key]] for key in keys}


def _observe(counts: Counter, totals: defaultdict, name: str, seconds: float, stored_as: str = "") -> None:
    """One observation of histogram ``name`` (its tallies named ``stored_as``, when given: one series of it): its
    (non-cumulative) bucket, the count and the sum (kept under the label "")."""
    buckets = HISTOGRAMS[name]
    stored_as = stored_as or name
    index = bisect.bisect_left(buckets, seconds)
    counts[stored_as, str(float(buckets[index])) if index < len(buckets) else "+Inf"] += 1
    counts[stored_as, ""] += 1
    totals[stored_as, ""] += seconds


def _add(tallies: dict[tuple[str, str], list[float]]) -> None:
    for (name, label), (count, total) in tallies.items():
        DecisionTally.objects.get_or_create(name=name, label=label)
        DecisionTally.objects.filter(name=name, label=label).update(count=F("count") + count, total=F("total") + total)


def outcomes() -> dict[str, int]:
    """Decisions finished so far, by outcome."""
    found = dict(DecisionTally.objects.filter(name="outcome").values_list("label", "count"))
    return {label: found.get(label, 0) for label in OUTCOMES.values()}


def by_policy() -> list[tuple[str, str, int]]:
    """The decisions policies made by themselves so far, as (policy, kind, count): kind "approved" or
    "default_outcome"."""
    rows = DecisionTally.objects.filter(name__startswith=f"{BY_POLICY}:").order_by("name", "label")
    return [
        (label, name.removeprefix(f"{BY_POLICY}:"), count)
        for name, label, count in rows.values_list("name", "label", "count")
    ]


def by_channel() -> dict[str, tuple[list[tuple[str, int]], int, float]]:
    """The time from the agent's ask to the decision, as ``histogram`` gives one, for each channel seen so far."""
    channels = DecisionTally.objects.filter(name__startswith=f"{BY_CHANNEL}:").values_list("name", flat=True)
    return {
        name.removeprefix(f"{BY_CHANNEL}:"): histogram(BY_CHANNEL, name) for name in sorted(set(channels.order_by()))
    }


def histogram(name: str, stored_as: str = "") -> tuple[list[tuple[str, int]], int, float]:
    """A histogram's cumulative buckets (``+Inf`` last), its count and its sum (of its series ``stored_as``)."""
    rows = {
        label: (count, total)
        for label, count, total in DecisionTally.objects.filter(name=stored_as or name).values_list(
            "label", "count", "total"
        )
    }
    cumulative, buckets = 0, []
    for bound in [str(float(bound)) for bound in HISTOGRAMS[name]] + ["+Inf"]:
        cumulative += rows.get(bound, (0, 0.0))[0]
        buckets.append((bound, cumulative))
    count, total = rows.get("", (0, 0.0))
    return buckets, count, total
