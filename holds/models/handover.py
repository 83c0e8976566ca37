"""Handing a hold over: its assignment to a person or a group, and the reviewers' notes on it."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from holds.models.mirror import Hold


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
