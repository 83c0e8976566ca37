"""The approvals people give, counted in rounds, and the stages an open round waits for."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models

from approvals.models.policies import ApprovalPolicy
from holds.models import Decision, Hold


class Approval(models.Model):
    """One person's approval of a hold under a policy, stored until enough people agree.

    Approvals count in rounds: an approver who changes the earlier approvers' decision
    starts a new round with theirs as its first approval, and a round approved before the
    platform changed the hold is over (``payload_digest``). The constraints make a person
    count once per round and each place in a round be taken once, whatever races. When a
    round reaches the policy's count, the decision is made from its last approval and
    every approval of the round points at it.
    """

    hold = models.ForeignKey(Hold, on_delete=models.PROTECT, related_name="approvals")
    policy = models.ForeignKey(ApprovalPolicy, null=True, on_delete=models.SET_NULL, related_name="approvals")
    policy_name = models.CharField(max_length=100, help_text="The policy's name when the approval was given.")
    approvals_required = models.PositiveSmallIntegerField(help_text="The count the policy asked for then.")
    approver = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="approvals")
    round = models.PositiveIntegerField(help_text="1 for the first round; a changed decision starts the next.")
    position = models.PositiveSmallIntegerField(help_text="1 for a round's first approval, 2 for its second …")
    stage = models.PositiveSmallIntegerField(
        default=1, help_text="The stage of the policy's chain it counts in (``approvals.chains``): 1 for the first."
    )
    stage_group = models.ForeignKey(
        Group,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The group its stage asked for when given (blank: any reviewer): it counts there only while the "
        "stage still asks for it.",
    )
    created_at = models.DateTimeField()
    payload_digest = models.CharField(
        max_length=64,
        help_text="The hold's payload digest when approved: once the platform changes the hold, the round is over.",
    )
    items = models.JSONField(
        help_text="What was approved, item by item: item_id, action, original_data, data (edits only) and comment."
    )
    decision = models.ForeignKey(
        Decision,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="approvals",
        help_text="The decision this approval led to, once its round reached the count.",
    )

    class Meta:
        ordering = ["hold", "round", "position"]
        constraints = [
            models.UniqueConstraint(fields=["hold", "round", "position"], name="approval_place_once"),
            models.UniqueConstraint(fields=["hold", "round", "approver"], name="approval_person_once_per_round"),
        ]

    def __str__(self) -> str:
        return f"approval {self.position}/{self.approvals_required} of {self.hold}"


class AwaitedStage(models.Model):
    """A stage an open hold waits for now (``approvals.awaiting``: its open round's, or a chain's first), for the
    queue's "Waiting for my stage" (``rounds.joinable_by``): rewritten with the hold's row locked whenever what it
    waits for changes."""

    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="awaited_stages")
    position = models.PositiveSmallIntegerField()
    group = models.ForeignKey(Group, null=True, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hold", "position"], name="awaited_stage_once")]

    def __str__(self) -> str:
        return f"{self.hold} awaits stage {self.position}"
