"""The mirrored holds: a hold as last seen on the platform, its items, the filters' choices, and who has a hold open
or opened it first."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from holds.models.decisions import Decision
from reviewqueue import agent_numbers
from reviewqueue.sql import expressions


class HoldQuerySet(models.QuerySet):
    def waiting(self, now):
        """The open holds nobody here has decided yet and whose time is not up: the queue's, the digest's, the
        sweeps'. A decision being sent, or an expiry the sweep has not closed yet, takes a hold out at once."""
        return self.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now)).filter(_OPEN_WITHOUT_LIVE_DECISION)


class Hold(models.Model):
    """A hold as last seen on the platform; never deleted, so its history stays auditable."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        DECIDED = "decided", "Decided"
        EXPIRED = "expired", "Expired"
        CANCELLED = "cancelled", "Cancelled"
        GONE = "gone", "Gone from the platform"

    env = models.CharField(max_length=100)
    # Text, as the contract sets no limit; sync refuses ids too long for an index entry.
    hold_id = models.TextField()
    run_id = models.TextField()
    agent = models.TextField()
    capability = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    question = models.TextField()
    intent = models.TextField(blank=True)
    details = models.TextField(blank=True)
    actions = models.JSONField(default=list)
    files = models.JSONField(default=list)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, help_text="Null for a hold that never expires.")
    first_seen_at = models.DateTimeField()
    last_synced_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, help_text="When the mirror learned the hold left the open list.")
    decided_by = models.TextField(blank=True, help_text="Who decided, as the platform reports it.")
    decided_at = models.DateTimeField(null=True)
    platform_decision = models.JSONField(null=True, blank=True)
    payload = models.JSONField(help_text="The hold as the platform last sent it.")
    payload_digest = models.CharField(max_length=64, help_text="SHA-256 of the payload, to skip unchanged holds.")
    search_text = models.TextField(blank=True, help_text="Lower-cased ids and item values, for the queue's search.")
    run_snapshot = models.JSONField(
        null=True, blank=True, help_text="The run as last fetched, shown when the platform is down."
    )
    run_fetched_at = models.DateTimeField(null=True)
    digested_at = models.DateTimeField(null=True, help_text="When a new-holds digest announced it.")
    expired_here_at = models.DateTimeField(
        null=True, help_text="When our expiry sweep closed it; sync then confirms the platform's final state."
    )
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="claims"
    )
    claimed_at = models.DateTimeField(null=True)
    claim_expires_at = models.DateTimeField(null=True)
    amount = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS,
        decimal_places=agent_numbers.AMOUNT_PLACES,
        null=True,
        help_text="The largest amount its items carry (see holds/mirror/amounts.py), for the queue's order and filter.",
    )

    objects = HoldQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["env", "hold_id"], name="hold_unique_per_env")]
        indexes = [
            # Postgres sorts NULLs last in ascending order, as the queue wants; SQLite's
            # CREATE INDEX does not accept NULLS LAST, so the index leaves it implicit.
            models.Index(
                fields=["expires_at", "created_at", "id"], condition=Q(status="open"), name="hold_queue_order"
            ),
            models.Index(fields=["created_at", "id"], condition=Q(status="open"), name="hold_queue_oldest"),
            # Largest amount first is the negated amount ascending, where Postgres puts NULLs last by
            # default: the same order as DESC NULLS LAST, without NULLS LAST in CREATE INDEX.
            models.Index(
                F("amount") * -1, F("created_at"), F("id"), condition=Q(status="open"), name="hold_queue_largest"
            ),
            models.Index(fields=["hold_id"], name="hold_hold_id"),
            models.Index(fields=["run_id"], name="hold_run_id"),
            models.Index(fields=["env", "status"], name="hold_env_status"),
            # The queue's refresh counts the holds that arrived since it was opened: a few, never all.
            models.Index(fields=["first_seen_at"], condition=Q(status="open"), name="hold_open_first_seen"),
        ]

    def __str__(self) -> str:
        return f"{self.env}/{self.hold_id}"

    @property
    def allows_edit(self) -> bool:
        return "edit" in self.actions

    def live_decision(self):
        """The decision being sent or applied, if any: while there is one, nobody may decide again."""
        return self.decisions.exclude(state__in=Decision.NOT_LIVE).select_related("reviewer").first()

    def latest_decision(self):
        return self.decisions.select_related("reviewer").order_by("-created_at", "-pk").first()

    def claimant(self, now):
        """The user reviewing this hold now, if their claim has not timed out."""
        if self.claimed_by_id and self.claim_expires_at and self.claim_expires_at > now:
            return self.claimed_by
        return None


class FilterValue(models.Model):
    """An env, agent and capability that an open hold had together at its env's last sync: what the filters offer.

    Sync replaces an env's rows with those of the open holds it listed, whenever the
    listing brought a change, so the queue reads a handful of rows instead of every open
    hold, and the choices are as fresh as the mirror itself. The three are kept together
    so that a team scope, which admits a hold by all three, admits a row the same way: a
    viewer is offered only the values of holds they may see. A value too long to index is
    kept blank, and never offered.
    """

    env = models.CharField(max_length=100)
    agent = models.TextField(blank=True)
    capability = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["env", "agent", "capability"], name="filter_combination_once")]

    def __str__(self) -> str:
        return f"{self.env}/{self.agent}/{self.capability}"


class HoldItem(models.Model):
    """One item of a hold, in the platform's order, with the data the agent proposed."""

    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    item_id = models.TextField(help_text="Agent-made (a tool call id, an order id): any length.")
    title = models.TextField(blank=True)
    data = models.JSONField(null=True)

    class Meta:
        ordering = ["hold", "position"]
        constraints = [models.UniqueConstraint(fields=["hold", "position"], name="item_unique_position")]
        indexes = [models.Index(fields=["item_id"], name="item_item_id")]

    def __str__(self) -> str:
        return self.item_id


class HoldViewer(models.Model):
    """Who has a hold's page open: presence, renewed by the page's heartbeat. It claims nothing."""

    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="viewers")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    seen_until = models.DateTimeField(help_text="The page counts as open until then, unless a heartbeat renews it.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hold", "user"], name="hold_viewer_once")]

    def __str__(self) -> str:
        return f"{self.user} on {self.hold}"


class HoldFirstOpened(models.Model):
    """When a reviewer first opened a hold's page, kept (unlike presence) to tell how long they looked before
    deciding."""

    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    opened_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hold", "user"], name="hold_first_opened_once")]

    def __str__(self) -> str:
        return f"{self.user} first opened {self.hold} at {self.opened_at}"


# Open holds without a live decision (one neither withdrawn nor not applied). Written out, as the ORM's Exists took
# longer to build than the queue's whole query takes to run; with its constants in the SQL, so that the listing's
# prepared statement keeps a plan that uses the open holds' partial indexes.
_OPEN_WITHOUT_LIVE_DECISION = expressions.in_status_with_none_live(
    Hold.Status.OPEN, Decision, "hold_id", Decision.NOT_LIVE
)
