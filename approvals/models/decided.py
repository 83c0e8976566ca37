"""What policies did by themselves: their decisions, and escalations."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q

from approvals.models.policies import ApprovalPolicy, PolicyDecisionKind
from approvals.models.remembered import RememberedApproval
from holds.models import Decision, Hold
from reviewqueue import agent_numbers


class PolicyDecision(models.Model):
    """A decision a policy sent by itself: its approval of a hold needing 0 people, or its default outcome.

    Unique per hold and kind, so of two sweeps at once (two beats) only one decides a hold,
    and a hold a policy decided once is never decided by it again. The policy's approvals of
    a day (in ``TIME_ZONE``), with their ``amount`` (the sum of every amount the hold carried), count towards its
    daily cap.
    """

    Kind = PolicyDecisionKind

    hold = models.ForeignKey(Hold, on_delete=models.PROTECT, related_name="policy_decisions")
    policy = models.ForeignKey(ApprovalPolicy, null=True, on_delete=models.SET_NULL, related_name="decisions")
    remembered = models.ForeignKey(
        RememberedApproval,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="decisions",
        help_text="The reviewer's remembered approval that decided, instead of a policy.",
    )
    policy_name = models.CharField(max_length=100, help_text="The policy's name when it decided.")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    at = models.DateTimeField()
    day = models.DateField(help_text="The day it counts towards the policy's daily cap, in TIME_ZONE.")
    amount = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS,
        decimal_places=agent_numbers.AMOUNT_PLACES,
        null=True,
        help_text="Every amount of the hold, summed: counted in the daily cap.",
    )
    # Its decision's words (``Decision.policy_words``) read through it which remembered approval decided.
    decision = models.ForeignKey(Decision, null=True, on_delete=models.PROTECT, related_name="policy_decisions")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hold", "kind"], name="policy_decision_once_per_hold"),
            models.CheckConstraint(
                condition=Q(policy__isnull=True) | Q(remembered__isnull=True), name="policy_decision_one_decider"
            ),
        ]
        indexes = [
            models.Index(fields=["policy", "day"], name="policy_decision_day"),
            models.Index(fields=["remembered", "day"], name="policy_decision_remembered_day"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} '{self.policy_name}' on {self.hold}"


class Escalation(models.Model):
    """A hold escalated to a policy's escalation group: at most once per stage of its approval chain (``stage`` 1 for
    a hold without one), whatever the number of beats."""

    hold = models.ForeignKey(Hold, on_delete=models.PROTECT, related_name="escalations")
    stage = models.PositiveSmallIntegerField(
        default=1, help_text="The stage of the hold's approval chain that waited too long; 1 for a hold without one."
    )
    policy = models.ForeignKey(ApprovalPolicy, null=True, on_delete=models.SET_NULL, related_name="escalations")
    group = models.ForeignKey(Group, null=True, on_delete=models.SET_NULL, related_name="+")
    group_name = models.CharField(max_length=150, help_text="The group's name when the hold escalated.")
    at = models.DateTimeField()
    reason = models.TextField(help_text='Why, for people: "not claimed 30 minutes after it arrived".')
    told = models.PositiveIntegerField(
        null=True, help_text="How many of the group's members could see the hold and were told; 0: nobody could be."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hold", "stage"], name="escalation_once_per_stage")]

    def __str__(self) -> str:
        return f"{self.hold} escalated to {self.group_name}"
