"""The local mirror of the platform's holds, and the state of syncing it."""

from django.db import models
from django.db.models import F, Q


class Hold(models.Model):
    """A hold as last seen on the platform; never deleted, so its history stays auditable."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        DECIDED = "decided", "Decided"
        EXPIRED = "expired", "Expired"
        CANCELLED = "cancelled", "Cancelled"
        GONE = "gone", "Gone from the platform"

    env = models.CharField(max_length=100)
    hold_id = models.CharField(max_length=200)
    run_id = models.CharField(max_length=200)
    agent = models.CharField(max_length=200)
    capability = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    question = models.TextField()
    intent = models.TextField(blank=True)
    details = models.TextField(blank=True)
    actions = models.JSONField(default=list)
    files = models.JSONField(default=list)
    created_at = models.DateTimeField(null=True)
    expires_at = models.DateTimeField(null=True, help_text="Null for a hold that never expires.")
    first_seen_at = models.DateTimeField()
    last_synced_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, help_text="When the mirror learned the hold left the open list.")
    decided_by = models.CharField(max_length=200, blank=True, help_text="Who decided, as the platform reports it.")
    decided_at = models.DateTimeField(null=True)
    platform_decision = models.JSONField(null=True, blank=True)
    payload = models.JSONField(help_text="The hold as the platform last sent it.")
    payload_digest = models.CharField(max_length=64, help_text="SHA-256 of the payload, to skip unchanged holds.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["env", "hold_id"], name="hold_unique_per_env")]
        indexes = [
            models.Index(
                F("expires_at").asc(nulls_last=True),
                F("created_at").asc(),
                F("id").asc(),
                condition=Q(status="open"),
                name="hold_queue_order",
            ),
            models.Index(fields=["hold_id"], name="hold_hold_id"),
            models.Index(fields=["run_id"], name="hold_run_id"),
            models.Index(fields=["env", "status"], name="hold_env_status"),
        ]

    def __str__(self) -> str:
        return f"{self.env}/{self.hold_id}"

    @property
    def allows_edit(self) -> bool:
        return "edit" in self.actions


class HoldItem(models.Model):
    """One item of a hold, in the platform's order, with the data the agent proposed."""

    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    item_id = models.CharField(max_length=200)
    title = models.TextField(blank=True)
    data = models.JSONField(null=True)

    class Meta:
        ordering = ["hold", "position"]
        constraints = [models.UniqueConstraint(fields=["hold", "position"], name="item_unique_position")]
        indexes = [models.Index(fields=["item_id"], name="item_item_id")]

    def __str__(self) -> str:
        return self.item_id


class SyncState(models.Model):
    """How the last sync of one env went, and the lease that keeps two syncs of it apart."""

    env = models.CharField(max_length=100, unique=True)
    last_started_at = models.DateTimeField(null=True)
    last_success_at = models.DateTimeField(null=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True)
    open_count = models.PositiveIntegerField(default=0)
    created_count = models.PositiveIntegerField(default=0)
    updated_count = models.PositiveIntegerField(default=0)
    closed_count = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(null=True)
    lease_token = models.CharField(max_length=36, blank=True)
    lease_until = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return self.env

    @property
    def failing(self) -> bool:
        return bool(self.last_error_at) and (not self.last_success_at or self.last_error_at > self.last_success_at)
