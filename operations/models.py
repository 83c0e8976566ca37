"""What operators read beside the mirror: per-env sync counts, sweep failures and the last audit chain verification."""

from django.db import models


class SyncStats(models.Model):
    """Cumulative syncs of one env, for Prometheus counters: never reset, so ``rate()`` works across restarts."""

    env = models.CharField(max_length=100, unique=True)
    syncs = models.PositiveBigIntegerField(default=0)
    failures = models.PositiveBigIntegerField(default=0)
    seconds_total = models.FloatField(default=0.0, help_text="The summed duration of every sync counted.")
    last_seconds = models.FloatField(null=True, help_text="How long the last sync took.")
    last_ended_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return self.env


class SweepStats(models.Model):
    """Cumulative failures of one periodic sweep on a hold (``reviewqueue.sweeping``), for a Prometheus counter: never
    reset, so ``rate()`` works across restarts."""

    sweep = models.CharField(max_length=60, unique=True)
    failures = models.PositiveBigIntegerField(default=0)
    last_failed_at = models.DateTimeField(null=True)

    class Meta:
        verbose_name_plural = "sweep stats"

    def __str__(self) -> str:
        return self.sweep


class AuditVerification(models.Model):
    """The outcome of the latest check of the audit hash chain (one row, replaced by each check)."""

    checked_at = models.DateTimeField()
    intact = models.BooleanField()
    events_checked = models.PositiveBigIntegerField()
    seconds = models.FloatField(help_text="How long the check took.")
    problem = models.TextField(blank=True, help_text="Where the chain breaks, when it does.")

    def __str__(self) -> str:
        return f"{'intact' if self.intact else 'broken'} at {self.checked_at}"


class DecisionTally(models.Model):
    """A running total behind the decision metrics, folded in from the audit trail (``operations.decisionstats``).

    ``name`` is the metric (``outcome``, ``time_to_decide``, ``delivery_latency``), ``label`` the
    outcome or the histogram bucket's upper bound (``+Inf`` for the last, "" for the sum in ``total``).
    """

    name = models.CharField(max_length=40)
    label = models.CharField(max_length=100, blank=True, help_text="Also a policy's name, for by_policy:… tallies.")
    count = models.PositiveBigIntegerField(default=0)
    total = models.FloatField(default=0.0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["name", "label"], name="decision_tally_once")]

    def __str__(self) -> str:
        return f"{self.name} {self.label}"


class TallyWatermark(models.Model):
    """The last audit event folded into the tallies (one row); its lock lets one process fold at a time."""

    audit_sequence = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"folded up to audit event #{self.audit_sequence}"
