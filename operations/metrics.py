"""The Prometheus metrics, computed from the database at each scrape.

Web and worker processes come and go in any number, so nothing is counted in a
process's memory: a custom collector reads the rows every process writes, with
one aggregate query per metric family, and the numbers are the same whichever
gunicorn worker answers the scrape. Counters only grow: notifications are counted
from their rows (never deleted), syncs from per-env running totals, and decisions,
whose table grows without end, from running totals that each scrape brings up to
date from the audit trail (``operations.decisionstats``), so a scrape costs the same
at any number of decisions.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from django.db.models import Count, Min, Q
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from audit import handoffstats
from holds.models import Decision, Hold, SyncState
from notifications.models import Notification
from operations import auditcheck, decisionstats, sweepstats
from operations.models import SyncStats

PREFIX = "reviewqueue"
EXPIRING_WITHIN = timedelta(minutes=15)
# Agents name themselves: past this many (env, agent) series the smallest are summed as agent="(other)",
# so a flood of agent names cannot blow up Prometheus' series count.
MAX_AGENT_SERIES = 200
OTHER_AGENTS = "(other)"


class ReviewQueueCollector(Collector):
    """Yields every Review Queue metric family; registered in its own registry by the /metrics view."""

    def collect(self) -> Iterator[Metric]:
        now = timezone.now()
        yield from open_holds(now)
        yield from decisions(now)
        yield time_to_decide()
        yield time_to_decision()
        yield delivery_latency()
        yield from syncs(now)
        yield sweep_failures()
        yield from notifications()
        yield from audit_chain()
        yield from handoffs(now)


def open_holds(now: datetime) -> Iterator[Metric]:
    by_agent = GaugeMetricFamily(f"{PREFIX}_open_holds", "Open holds awaiting a decision.", labels=["env", "agent"])
    counts = list(
        Hold.objects.filter(status=Hold.Status.OPEN)
        .values_list("env", "agent")
        .annotate(n=Count("*"))
        .order_by("-n", "env", "agent")
    )
    others: dict[str, int] = {}
    named = 0
    for env, agent, count in counts:
        # An agent that names itself "(other)" joins the roll-up rather than adding a second series of that name.
        if named < MAX_AGENT_SERIES and agent != OTHER_AGENTS:
            by_agent.add_metric([env, agent], count)
            named += 1
        else:
            others[env] = others.get(env, 0) + count
    for env, count in others.items():
        by_agent.add_metric([env, OTHER_AGENTS], count)
    yield by_agent

    per_env = (
        Hold.objects.filter(status=Hold.Status.OPEN)
        .values("env")
        .annotate(
            oldest=Min("created_at"),
            # Counting a column of operations' covering index (not pk) keeps this an index-only scan.
            expiring=Count("expires_at", filter=Q(expires_at__gt=now, expires_at__lte=now + EXPIRING_WITHIN)),
        )
    )
    oldest = GaugeMetricFamily(
        f"{PREFIX}_oldest_open_hold_age_seconds", "Age of the oldest open hold, from its creation.", labels=["env"]
    )
    expiring = GaugeMetricFamily(
        f"{PREFIX}_holds_expiring_soon", "Open holds expiring within the next 15 minutes.", labels=["env"]
    )
    for row in per_env:
        oldest.add_metric([row["env"]], max((now - row["oldest"]).total_seconds(), 0.0))
        expiring.add_metric([row["env"]], row["expiring"])
    yield oldest
    yield expiring


def decisions(now: datetime) -> Iterator[Metric]:
    finished = CounterMetricFamily(
        f"{PREFIX}_decisions", "Decisions by how they ended: applied, not applied, withdrawn.", labels=["outcome"]
    )
    decisionstats.fold()
    for outcome, count in decisionstats.outcomes().items():
        finished.add_metric([outcome], count)
    yield finished

    by_policy = CounterMetricFamily(
        f"{PREFIX}_policy_decisions",
        "Decisions approval policies made by themselves: approved (0 people needed) or their default outcome.",
        labels=["policy", "kind"],
    )
    for policy, kind, count in decisionstats.by_policy():
        by_policy.add_metric([policy, kind], count)
    yield by_policy

    retrying = Decision.objects.filter(state=Decision.State.SENDING, attempts__gt=0).aggregate(
        count=Count("*"), since=Min("delivery_started_at")
    )
    yield GaugeMetricFamily(
        f"{PREFIX}_deliveries_retrying",
        "Decisions being sent that the platform has not taken yet.",
        value=retrying["count"],
    )
    since = retrying["since"]
    yield GaugeMetricFamily(
        f"{PREFIX}_oldest_retrying_delivery_seconds",
        "How long the longest-retrying decision has been in delivery (0 when none is).",
        value=max((now - since).total_seconds(), 0.0) if since else 0.0,
    )


def time_to_decide() -> Metric:
    """Seconds from a hold's creation on the platform to a reviewer's decision stored here."""
    return _histogram(
        "time_to_decide",
        f"{PREFIX}_time_to_decide_seconds",
        "Time from a hold's creation to its decision being stored.",
    )


def time_to_decision() -> Metric:
    """Seconds from the agent's ask to the decision stored, by the channel it came through (page, bulk, email_link,
    chat_link, policy, remembered …): one observation per decision, folded from the audit trail."""
    family = HistogramMetricFamily(
        f"{PREFIX}_time_to_decision_seconds",
        "Time from the agent's ask (the hold's creation) to its decision, by the channel the decision came through.",
        labels=["channel"],
    )
    for channel, (buckets, _, total) in decisionstats.by_channel().items():
        family.add_metric([channel], buckets, total)
    return family


def delivery_latency() -> Metric:
    """Seconds from a decision stored to the platform's applying it (decisions applied only)."""
    return _histogram(
        "delivery_latency",
        f"{PREFIX}_delivery_latency_seconds",
        "Time from a decision being stored to the platform applying it.",
    )


def _histogram(tally: str, name: str, documentation: str) -> Metric:
    buckets, _, total = decisionstats.histogram(tally)
    return HistogramMetricFamily(name, documentation, buckets=buckets, sum_value=total)


def syncs(now: datetime) -> Iterator[Metric]:
    labels = ["env"]
    failing = GaugeMetricFamily(
        f"{PREFIX}_sync_failing_seconds", "How long every sync of an env has failed (0 while it syncs).", labels=labels
    )
    last_success = GaugeMetricFamily(
        f"{PREFIX}_last_sync_success_timestamp_seconds",
        "When an env last synced successfully (Unix time).",
        labels=labels,
    )
    last_walk = GaugeMetricFamily(
        f"{PREFIX}_last_sync_walk_end_timestamp_seconds",
        "When the last reconciling walk of an env's whole listing ended (Unix time).",
        labels=labels,
    )
    refusals = CounterMetricFamily(
        f"{PREFIX}_sync_cursor_refusals",
        "Kept listing cursors the platform refused, each followed by a walk of the whole listing.",
        labels=labels,
    )
    for env, failing_since, success, walk_ended, refused in SyncState.objects.order_by("env").values_list(
        "env", "failing_since", "last_success_at", "last_walk_ended_at", "cursor_refusals"
    ):
        failing.add_metric([env], max((now - failing_since).total_seconds(), 0.0) if failing_since else 0.0)
        if success is not None:
            last_success.add_metric([env], success.timestamp())
        if walk_ended is not None:
            last_walk.add_metric([env], walk_ended.timestamp())
        refusals.add_metric([env], refused)
    yield from (failing, last_success, last_walk, refusals)

    runs = CounterMetricFamily(f"{PREFIX}_syncs", "Syncs of an env that ended, failed or not.", labels=labels)
    failures = CounterMetricFamily(f"{PREFIX}_sync_failures", "Syncs of an env that failed.", labels=labels)
    seconds = CounterMetricFamily(f"{PREFIX}_sync_duration_seconds", "Time spent syncing an env.", labels=labels)
    last = GaugeMetricFamily(
        f"{PREFIX}_last_sync_duration_seconds", "How long the last sync of an env took.", labels=labels
    )
    for stats in SyncStats.objects.order_by("env"):
        runs.add_metric([stats.env], stats.syncs)
        failures.add_metric([stats.env], stats.failures)
        seconds.add_metric([stats.env], stats.seconds_total)
        if stats.last_seconds is not None:
            last.add_metric([stats.env], stats.last_seconds)
    yield from (runs, failures, seconds, last)


def sweep_failures() -> Metric:
    """Holds a periodic sweep failed on (``reviewqueue.sweeping``): each left to people, the others handled."""
    family = CounterMetricFamily(
        f"{PREFIX}_sweep_failures",
        "Holds a periodic sweep failed to handle, by sweep: each was left to people while the sweep went on.",
        labels=["sweep"],
    )
    for sweep, count in sweepstats.failures():
        family.add_metric([sweep], count)
    return family


def notifications() -> Iterator[Metric]:
    labels = ["channel"]
    sent = CounterMetricFamily(f"{PREFIX}_notifications_sent", "Notifications sent, per channel.", labels=labels)
    failed = CounterMetricFamily(f"{PREFIX}_notifications_failed", "Notifications that failed for good.", labels=labels)
    pruned = CounterMetricFamily(
        f"{PREFIX}_push_pruned",
        "Pushes whose device's push service answered 404 or 410: the device was removed.",
    )
    counts = (
        Notification.objects.values("channel")
        .annotate(
            sent=Count("pk", filter=Q(status=Notification.Status.SENT)),
            failed=Count("pk", filter=Q(status=Notification.Status.FAILED)),
            pruned=Count("pk", filter=Q(status=Notification.Status.PRUNED)),
        )
        .order_by()
    )
    by_channel = {row["channel"]: row for row in counts}
    for channel in Notification.Channel.values:
        row = by_channel.get(channel, {"sent": 0, "failed": 0})
        sent.add_metric([channel], row["sent"])
        failed.add_metric([channel], row["failed"])
    pruned.add_metric([], by_channel.get(Notification.Channel.PUSH, {}).get("pruned", 0))
    yield from (sent, failed, pruned)


def audit_chain() -> Iterator[Metric]:
    verification = auditcheck.latest()
    intact = GaugeMetricFamily(
        f"{PREFIX}_audit_chain_intact",
        "1 if the last verification found the audit hash chain intact, 0 if it broke; absent before the first.",
    )
    checked_at = GaugeMetricFamily(
        f"{PREFIX}_audit_chain_verified_timestamp_seconds", "When the audit chain was last verified (Unix time)."
    )
    duration = GaugeMetricFamily(
        f"{PREFIX}_audit_chain_verification_duration_seconds", "How long the last verification took."
    )
    if verification is not None:
        intact.add_metric([], int(verification.intact))
        checked_at.add_metric([], verification.checked_at.timestamp())
        duration.add_metric([], verification.seconds)
    yield from (intact, checked_at, duration)


def handoffs(now: datetime) -> Iterator[Metric]:
    """Open holds assigned, by assignee (a username or a group's name, as many series as agents at most), the oldest
    open assignment's age, and how many notes the open holds have (a histogram over the open holds): the figures
    of ``audit.handoffstats``, which the statistics page shows too."""
    figures = handoffstats.current()
    assigned = GaugeMetricFamily(
        f"{PREFIX}_open_holds_assigned", "Open holds assigned, by assignee (a person or a group).", labels=["assignee"]
    )
    for row in figures.assigned[:MAX_AGENT_SERIES]:
        assigned.add_metric([row.label], row.holds)
    if others := sum(row.holds for row in figures.assigned[MAX_AGENT_SERIES:]):
        assigned.add_metric([OTHER_AGENTS], others)
    yield assigned

    yield GaugeMetricFamily(
        f"{PREFIX}_oldest_open_assignment_age_seconds",
        "Age of the oldest assignment of an open hold (0 with none).",
        value=figures.oldest_age_seconds(now),
    )

    buckets = [(str(bound), figures.holds_with_at_most(bound)) for bound in handoffstats.NOTE_BOUNDS]
    yield HistogramMetricFamily(
        f"{PREFIX}_notes_per_open_hold",
        "Notes between reviewers on each open hold.",
        buckets=[*buckets, ("+Inf", figures.open_holds)],
        sum_value=figures.notes,
    )
