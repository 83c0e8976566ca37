"""Sync's own bookkeeping: each env's cursors and lease, the holds seen in a reconciling walk, the holds quarantined
as unreadable, and when each periodic task last ran."""

from django.db import models

from holds.models.mirror import Hold


class SyncState(models.Model):
    """How the last sync of one env went, and the lease that keeps two syncs of it apart."""

    class ErrorSource(models.TextChoices):
        PLATFORM = "platform", "The platform"
        REVIEW_QUEUE = "review_queue", "Review Queue"

    env = models.CharField(max_length=100, unique=True)
    last_started_at = models.DateTimeField(null=True)
    last_success_at = models.DateTimeField(null=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True)
    error_source = models.CharField(
        max_length=16, choices=ErrorSource.choices, blank=True, help_text="Whose fault the last error was."
    )
    failing_since = models.DateTimeField(null=True, help_text="The first failure since the last success.")
    open_count = models.PositiveIntegerField(default=0)
    created_count = models.PositiveIntegerField(default=0)
    updated_count = models.PositiveIntegerField(default=0)
    closed_count = models.PositiveIntegerField(default=0)
    quarantined_count = models.PositiveIntegerField(default=0, help_text="Listed holds the last sync could not mirror.")
    duration_ms = models.PositiveIntegerField(null=True)
    lease_token = models.CharField(max_length=36, blank=True)
    lease_until = models.DateTimeField(null=True)
    filter_values_version = models.CharField(
        max_length=36,
        blank=True,
        help_text="Changed whenever sync changes the env's filter values (names their cache).",
    )
    tail_cursor = models.TextField(
        blank=True, help_text="The cursor that led to the listing's last page at the last sync ('': the first page)."
    )
    walk_cursor = models.TextField(blank=True, help_text="Where the reconciling walk under way lists next.")
    walk_started_at = models.DateTimeField(null=True, help_text="When the reconciling walk under way began.")
    last_walk_started_at = models.DateTimeField(null=True, help_text="When the last reconciling walk began.")
    last_walk_ended_at = models.DateTimeField(null=True, help_text="When the last reconciling walk ended.")
    cursor_refusals = models.PositiveBigIntegerField(
        default=0, help_text="Kept cursors the platform refused, each followed by a full walk."
    )

    def __str__(self) -> str:
        return self.env

    @property
    def failing(self) -> bool:
        return self.failing_since is not None


class ListedInWalk(models.Model):
    """A mirrored hold the reconciling walk under way has listed: the open holds it did not list have left."""

    env = models.CharField(max_length=100)
    hold = models.OneToOneField(Hold, on_delete=models.CASCADE, related_name="+")

    def __str__(self) -> str:
        return f"{self.env}/{self.hold_id}"


class QuarantinedHold(models.Model):
    """A hold the platform lists that sync can neither read nor store, so that it stops no other hold.

    It reaches no reviewer. Sync keeps the row while the platform lists the hold
    unchanged, and removes it once the hold is stored or leaves the platform.
    """

    env = models.CharField(max_length=100)
    key = models.CharField(max_length=64, help_text="SHA-256 of the hold id (or, without one, of the excerpt).")
    hold_id = models.TextField(blank=True, help_text="As the platform sent it; blank when it sent none.")
    reason = models.TextField()
    excerpt = models.TextField(help_text="The start of the hold's JSON as received.")
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    times_seen = models.PositiveIntegerField(default=1, help_text="How many syncs found it.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["env", "key"], name="quarantined_hold_once_per_env")]
        ordering = ["-first_seen_at"]

    def __str__(self) -> str:
        return f"{self.env}/{self.hold_id or '(no hold id)'}"


class PeriodicRun(models.Model):
    """When each periodic task last ran: nothing recent here means Celery beat is not running."""

    task = models.CharField(max_length=100, unique=True)
    last_run_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.task
