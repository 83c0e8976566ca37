"""The audit trail: append-only events, chained by hash, and the chain's head.

Each ``AuditEvent`` is written once by ``audit.events`` and never changed: the
model refuses to save an existing row, its queryset refuses ``update`` and
``delete``, and on Postgres a trigger refuses both (migration 0002). The columns
besides ``payload`` are copies of facts in it (or about the hold), kept as plain
indexed columns so that the audit list filters with indexes on a large table.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class EventKind(models.TextChoices):
    HOLD_SEEN = "hold_seen", "Hold first seen"
    CLAIMED = "claimed", "Claimed"
    RELEASED = "released", "Released"
    TAKEN_OVER = "taken_over", "Taken over"
    ASSIGNED = "assigned", "Assigned"
    REASSIGNED = "reassigned", "Reassigned"
    UNASSIGNED = "unassigned", "Unassigned"
    NOTE_ADDED = "note_added", "Note added"
    DECISION_SUBMITTED = "decision_submitted", "Decision submitted"
    HELD_FOR_PEOPLE = "held_for_people", "Left to people"
    APPROVAL_GIVEN = "approval_given", "Approval given"
    STAGE_COMPLETED = "stage_completed", "Approval stage completed"
    ESCALATED = "escalated", "Escalated"
    WITHDRAWN = "withdrawn", "Decision withdrawn"
    APPROVAL_WITHDRAWN = "approval_withdrawn", "Approval taken back"
    DELIVERY_ATTEMPT = "delivery_attempt", "Delivery attempt"
    APPLIED = "applied", "Applied"
    NOT_APPLIED = "not_applied", "Not applied"
    EXPIRED = "expired", "Hold expired"
    DECIDED_ELSEWHERE = "decided_elsewhere", "Decided elsewhere"
    NOTIFICATION_SENT = "notification_sent", "Notification sent"
    NOTIFICATION_FAILED = "notification_failed", "Notification failed"
    SIGNED_IN = "signed_in", "Signed in"
    # No longer written (failed sign-ins are counted in django-axes' table); kept so that earlier rows still read.
    SIGN_IN_FAILED = "sign_in_failed", "Sign-in failed"
    LOCKED_OUT = "locked_out", "Locked out of signing in"
    ROLE_CHANGED = "role_changed", "Role changed"
    SETTING_CHANGED = "setting_changed", "Setting changed"
    TOKEN_CREATED = "token_created", "API token created"
    TOKEN_FIRST_USED = "token_first_used", "API token first used"
    TOKEN_REVOKED = "token_revoked", "API token revoked"


# Kinds no builder writes any more (``audit.events``), kept so that earlier rows still read.
RETIRED_KINDS = frozenset({EventKind.SIGN_IN_FAILED})

# What the audit list opens on: decisions and what became of them, without the sign-ins and notifications around them.
DECISION_KINDS = (
    EventKind.APPROVAL_GIVEN,
    EventKind.STAGE_COMPLETED,
    EventKind.ESCALATED,
    EventKind.DECISION_SUBMITTED,
    EventKind.WITHDRAWN,
    EventKind.APPROVAL_WITHDRAWN,
    EventKind.APPLIED,
    EventKind.NOT_APPLIED,
    EventKind.EXPIRED,
    EventKind.DECIDED_ELSEWHERE,
)


class AuditImmutable(Exception):
    """Raised when code tries to change or remove an audit event."""


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AuditImmutable("audit events are never updated")

    def delete(self):
        raise AuditImmutable("audit events are never deleted")


class AuditEvent(models.Model):
    """One thing that shaped a decision's fate (or an account's access), as it happened.

    ``hash`` is SHA-256 over ``prev_hash`` and the canonical JSON of every other
    column (see ``audit.chain``), so changing, removing or reordering a row breaks
    the chain at that row.
    """

    sequence = models.BigIntegerField(unique=True, help_text="Position in the hash chain: 1, 2, 3 … without gaps.")
    at = models.DateTimeField()
    kind = models.CharField(max_length=32, choices=EventKind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="audit_events",
        db_index=False,  # audit_actor_at leads with it
        help_text="Null for the system (sync, delivery) or an anonymous sign-in attempt.",
    )
    actor_name = models.CharField(max_length=150, blank=True, help_text="The actor's username when it happened.")
    env = models.CharField(max_length=100, blank=True)
    hold_id = models.CharField(max_length=200, blank=True, help_text="The platform's hold id.")
    run_id = models.CharField(max_length=200, blank=True)
    agent = models.CharField(max_length=200, blank=True)
    hold_record = models.ForeignKey(
        "holds.Hold", null=True, blank=True, on_delete=models.PROTECT, related_name="audit_events", db_index=False
    )
    decision = models.ForeignKey(
        "holds.Decision", null=True, blank=True, on_delete=models.PROTECT, related_name="audit_events"
    )
    actions = models.CharField(max_length=32, blank=True, help_text="The items' actions, sorted, space-separated.")
    outcome = models.CharField(max_length=32, blank=True)
    item_ids = models.JSONField(default=list, blank=True)
    search_text = models.TextField(blank=True, help_text="Lower-cased ids and item data values, one a line.")
    payload = models.JSONField(default=dict, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-sequence"]
        indexes = [
            models.Index(fields=["-at", "-sequence"], name="audit_at"),
            models.Index(fields=["kind", "-at", "-sequence"], name="audit_kind_at"),
            models.Index(fields=["actor", "-at", "-sequence"], name="audit_actor_at"),
            models.Index(fields=["agent", "-at", "-sequence"], name="audit_agent_at"),
            models.Index(fields=["hold_id", "-at", "-sequence"], name="audit_hold_at"),
            models.Index(fields=["run_id", "-at", "-sequence"], name="audit_run_at"),
            models.Index(fields=["outcome", "-at", "-sequence"], condition=~Q(outcome=""), name="audit_outcome_at"),
            # The list's first page reads the newest decisions without stepping over every sign-in and hold seen.
            models.Index(fields=["-at", "-sequence"], condition=Q(kind__in=DECISION_KINDS), name="audit_decisions_at"),
        ]

    def __str__(self) -> str:
        return f"#{self.sequence} {self.kind}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AuditImmutable("audit events are never updated")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AuditImmutable("audit events are never deleted")

    @property
    def actor_label(self) -> str:
        if self.actor_name:
            return self.actor_name
        if self.kind == EventKind.DECISION_SUBMITTED and isinstance(policy := self.payload.get("policy"), dict):
            if policy.get("remembered_by"):
                return f"policy ‘{policy.get('name')}’, owned by {policy.get('remembered_by')}"
            changed_by = f", last changed by {policy.get('last_changed_by')}" if policy.get("last_changed_by") else ""
            return f"policy ‘{policy.get('name')}’{changed_by}"
        return "anonymous" if self.kind in (EventKind.SIGN_IN_FAILED, EventKind.LOCKED_OUT) else "system"


class AuditChainHead(models.Model):
    """The chain's last sequence and hash, in one row that every append locks.

    Locking it (``SELECT … FOR NO KEY UPDATE``) inside the caller's transaction makes
    appends take turns, so each one chains onto the row committed before it; on
    SQLite the database's write lock does the same.
    """

    sequence = models.BigIntegerField(default=0)
    hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"head at #{self.sequence}"
