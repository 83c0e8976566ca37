"""The local mirror of the platform's holds, reviewers' claims and decisions, and the sync state."""

import math
import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

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


class Decision(models.Model):
    """A reviewer's decision on a hold: stored first, then delivered to the platform by a task.

    A hold has at most one live decision (sending or applied), enforced by a
    partial unique constraint; one the platform refused (not applied) or its
    reviewer withdrew in the undo window stays on record, and the hold, if still
    open, may be decided anew. The idempotency key is fixed at creation, so every
    delivery attempt of a decision is the same request.
    """

    class State(models.TextChoices):
        SENDING = "sending", "Sending"
        APPLIED = "applied", "Applied"
        NOT_APPLIED = "not_applied", "Not applied"
        WITHDRAWN = "withdrawn", "Withdrawn"

    NOT_LIVE = (State.NOT_APPLIED, State.WITHDRAWN)  # the states that leave the hold free to decide again

    class Outcome(models.TextChoices):
        APPLIED = "applied", "Applied by the platform"
        DECIDED_ELSEWHERE = "decided_elsewhere", "Decided elsewhere"
        EXPIRED = "expired", "The hold expired"
        CANCELLED = "cancelled", "The run was cancelled"
        INVALID = "invalid", "Refused as invalid"
        NOT_FOUND = "not_found", "Unknown to the platform"

    hold = models.ForeignKey(Hold, on_delete=models.PROTECT, related_name="decisions")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.PROTECT,
        related_name="decisions",
        help_text="Who decided; null for a decision an approval policy made by itself (decided_by_policy).",
    )
    decided_by_policy = models.CharField(
        max_length=100, blank=True, help_text="The approval policy that made this decision by itself, by name."
    )
    idempotency_key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.SENDING)
    outcome = models.CharField(max_length=20, choices=Outcome.choices, blank=True)
    outcome_message = models.TextField(blank=True, help_text="The platform's message, or who decided instead.")
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(help_text="When delivery is due next, while sending.")
    finished_at = models.DateTimeField(null=True)
    undo_until = models.DateTimeField(
        null=True, help_text="The end of the undo window: delivery starts no earlier. Null without a window."
    )
    delivery_started_at = models.DateTimeField(
        null=True,
        help_text="When the first delivery attempt took its lease; from then on it can no longer be withdrawn.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hold"], condition=~Q(state__in=["not_applied", "withdrawn"]), name="decision_one_live_per_hold"
            ),
            models.CheckConstraint(
                condition=Q(reviewer__isnull=False, decided_by_policy="")
                | (Q(reviewer__isnull=True) & ~Q(decided_by_policy="")),
                name="decision_by_reviewer_or_policy",
            ),
        ]
        indexes = [
            models.Index(fields=["next_attempt_at"], condition=Q(state="sending"), name="decision_due"),
            models.Index(fields=["reviewer", "created_at"], name="decision_reviewer"),
        ]

    def __str__(self) -> str:
        return f"decision on {self.hold}"

    @property
    def policy_words(self) -> str:
        """ "Approved by policy ‘small refunds’" (or "Rejected by …", "Decided by …") for a decision an approval policy
        made by itself, "Approved by Alice Adams's remembered approval (until 18:00)" for a remembered approval's;
        blank for a person's."""
        if not self.decided_by_policy:
            return ""
        actions = {item.action for item in self.items.all()}
        verb = {frozenset({"approve"}): "Approved", frozenset({"reject"}): "Rejected"}.get(
            frozenset(actions), "Decided"
        )
        # A reviewer's remembered approval is named for its owner: the record of what it decided says which it was.
        made = self.policy_decisions.filter(remembered__isnull=False).select_related("remembered__owner").first()
        if made is not None:
            return f"{verb} by {made.remembered.label(timezone.now())}"
        return f"{verb} by policy ‘{self.decided_by_policy}’"

    @property
    def undoable(self) -> bool:
        """Whether its reviewer may still withdraw it: in the window, and no delivery attempt started."""
        return (
            self.state == self.State.SENDING
            and self.delivery_started_at is None
            and self.undo_until is not None
            and self.undo_until > timezone.now()
        )

    @property
    def undo_seconds_left(self) -> int:
        """Whole seconds left to undo, rounded up (0 once the window is over)."""
        if not self.undoable:
            return 0
        return math.ceil((self.undo_until - timezone.now()).total_seconds())


# How every page names an item's action: "edit" is an approval with the reviewer's changes.
ACTION_WORDS = {"approve": "Approve", "edit": "Approve with edits", "reject": "Reject"}


class DecisionChannel(models.TextChoices):
    """Where a decision or an approval came from, as its audit event records it (``channel``)."""

    PAGE = "page", "page"
    BULK = "bulk", "bulk decision"
    EMAIL_LINK = "email_link", "email link"
    CHAT_LINK = "chat_link", "Slack link"
    SLACK = "slack", "Slack"
    POLICY = "policy", "approval policy"
    API = "api", "API"
    REMEMBERED = "remembered", "remembered approval"


class ActionLinkUse(models.Model):
    """A one-tap link that was used (``holds.links.action_links``): the unique token id is what makes a link
    single-use."""

    token_id = models.CharField(max_length=32, unique=True)
    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="action_link_uses")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=16)
    used_at = models.DateTimeField()
    decision = models.ForeignKey(
        "Decision",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The decision the link sent; none when it gave an approval that sent nothing yet.",
    )

    def __str__(self) -> str:
        return f"{self.action} link of {self.hold} used by {self.user}"


class DecisionItem(models.Model):
    """What the reviewer decided for one item: ``data`` is the full edited data, for edits only."""

    class Action(models.TextChoices):
        APPROVE = "approve", "Approve"
        EDIT = "edit", "Edit"
        REJECT = "reject", "Reject"

    decision = models.ForeignKey(Decision, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    item_id = models.TextField()
    action = models.CharField(max_length=8, choices=Action.choices)
    original_data = models.JSONField(null=True)
    data = models.JSONField(null=True)
    comment = models.TextField(blank=True)

    class Meta:
        ordering = ["decision", "position"]
        constraints = [models.UniqueConstraint(fields=["decision", "position"], name="decision_item_unique_position")]

    def __str__(self) -> str:
        return f"{self.action} {self.item_id}"


class DeliveryAttempt(models.Model):
    """One try at posting a decision to the platform, and what came of it."""

    decision = models.ForeignKey(Decision, on_delete=models.CASCADE, related_name="delivery_attempts")
    at = models.DateTimeField()
    outcome = models.CharField(max_length=20, help_text="applied, retry, or the final outcome's code.")
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["decision", "at"]

    def __str__(self) -> str:
        return f"{self.outcome} at {self.at}"


# Open holds without a live decision (one neither withdrawn nor not applied). Written out, as the ORM's Exists took
# longer to build than the queue's whole query takes to run; with its constants in the SQL, so that the listing's
# prepared statement keeps a plan that uses the open holds' partial indexes.
_OPEN_WITHOUT_LIVE_DECISION = expressions.in_status_with_none_live(
    Hold.Status.OPEN, Decision, "hold_id", Decision.NOT_LIVE
)


class Assignment(models.Model):
    """A hold handed to a person or a group, with a note: whom the others ask to look at it
    (``holds.handover.assignments``).

    It locks nothing. A hold has at most one current assignment (``ended_at`` null); reassigning
    or unassigning ends it and keeps it on record. Its hold's decision or expiry ends it too, by
    the hold's state rather than a write here (see ``holds.handover.assignments``).
    """

    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="assignments")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="assignments"
    )
    group = models.ForeignKey("auth.Group", null=True, blank=True, on_delete=models.CASCADE, related_name="assignments")
    note = models.TextField(blank=True)
    assigned_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    assigned_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True, help_text="When it was reassigned or unassigned.")
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, group__isnull=True) | Q(user__isnull=True, group__isnull=False),
                name="assignment_to_a_person_or_a_group",
            ),
            models.UniqueConstraint(
                fields=["hold"], condition=Q(ended_at__isnull=True), name="assignment_current_once"
            ),
        ]
        indexes = [
            models.Index(fields=["user"], condition=Q(ended_at__isnull=True), name="assignment_current_user"),
            models.Index(fields=["group"], condition=Q(ended_at__isnull=True), name="assignment_current_group"),
        ]

    def __str__(self) -> str:
        return f"{self.hold} assigned to {self.user or self.group}"


class Note(models.Model):
    """A reviewer's note on a hold, for everyone who can see it (``holds.handover.notes``).

    Plain text, kept here: never sent to the agent or the platform. Added, never edited or
    deleted (a correction is a new note): on PostgreSQL a trigger refuses UPDATE and DELETE.
    """

    hold = models.ForeignKey(Hold, on_delete=models.PROTECT, related_name="notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    text = models.TextField()
    created_at = models.DateTimeField()
    mentioned = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="+",
        help_text="Those its @mentions told: people who could see the hold.",
    )

    class Meta:
        ordering = ["hold", "created_at", "pk"]
        indexes = [models.Index(fields=["hold", "created_at"], name="note_thread")]

    def __str__(self) -> str:
        return f"note on {self.hold} by {self.author}"
