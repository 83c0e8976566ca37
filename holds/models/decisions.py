"""Decisions on holds: the decision, its items, its delivery attempts, the channel it came through and the
one-tap links used for it."""

import math
import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


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

    hold = models.ForeignKey("holds.Hold", on_delete=models.PROTECT, related_name="decisions")
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
    PUSH_LINK = "push_link", "push notification"
    SLACK = "slack", "Slack"
    POLICY = "policy", "approval policy"
    API = "api", "API"
    REMEMBERED = "remembered", "remembered approval"


class ActionLinkUse(models.Model):
    """A one-tap link that was used (``holds.links.action_links``): the unique token id is what makes a link
    single-use."""

    token_id = models.CharField(max_length=32, unique=True)
    hold = models.ForeignKey("holds.Hold", on_delete=models.CASCADE, related_name="action_link_uses")
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
