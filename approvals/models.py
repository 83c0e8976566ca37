"""Approval policies (how many people must approve which holds), the approvals given, and escalations."""

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from holds.models import Decision, Hold


class ApprovalPolicy(models.Model):
    """Which holds need more than one approver, how many, who may give the later approvals, and when to escalate.

    A policy matches a hold by env, agent and capability (each a glob such as ``refund-*``;
    blank matches anything) and, optionally, by a number in an item's data compared with a
    threshold (``amount > 500``). Of the policies that match a hold, the most specific wins
    (see ``approvals.policies``). A hold no policy matches needs one approval, as before.
    """

    class Operator(models.TextChoices):
        GREATER = "gt", ">"
        AT_LEAST = "gte", "≥"
        LESS = "lt", "<"
        AT_MOST = "lte", "≤"
        EQUAL = "eq", "="

    name = models.CharField(max_length=100, unique=True)
    env_pattern = models.CharField(max_length=200, blank=True, help_text="A glob over the env, e.g. prod-*; blank: any env.")
    agent_pattern = models.CharField(max_length=200, blank=True, help_text="A glob over the agent; blank: any agent.")
    capability_pattern = models.CharField(
        max_length=200, blank=True, help_text="A glob over the capability; blank: any capability."
    )
    condition_key = models.CharField(
        max_length=100, blank=True, help_text="A key of the items' data holding a number, e.g. amount; blank: no condition."
    )
    condition_operator = models.CharField(max_length=3, choices=Operator.choices, blank=True)
    condition_threshold = models.DecimalField(max_digits=20, decimal_places=4, null=True, blank=True)
    approvals_required = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1), MaxValueValidator(3)],
        help_text="How many distinct people must approve: 1 to 3.",
    )
    later_approver_group = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Who may give the approvals after the first; blank: any reviewer.",
    )
    escalate_after_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Escalate a hold nobody has claimed this many minutes after it arrived."
    )
    escalate_at_percent = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(99)],
        help_text="Escalate a hold once this share of its lifetime has gone, e.g. 75.",
    )
    escalation_group = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Who is told when a hold escalates.",
    )

    class Meta:
        verbose_name_plural = "approval policies"
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(approvals_required__gte=1, approvals_required__lte=3), name="policy_approvals_1_to_3"
            ),
            models.CheckConstraint(
                condition=Q(condition_key="", condition_operator="", condition_threshold__isnull=True)
                | (~Q(condition_key="") & ~Q(condition_operator="") & Q(condition_threshold__isnull=False)),
                name="policy_condition_complete",
            ),
        ]

    def __str__(self) -> str:
        return self.name


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
    created_at = models.DateTimeField()
    payload_digest = models.CharField(
        max_length=64, help_text="The hold's payload digest when approved: once the platform changes the hold, the round is over."
    )
    items = models.JSONField(
        help_text="What was approved, item by item: item_id, action, original_data, data (edits only) and comment."
    )
    decision = models.ForeignKey(
        Decision, null=True, blank=True, on_delete=models.PROTECT, related_name="approvals",
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


class Escalation(models.Model):
    """A hold escalated to a policy's escalation group: at most once per hold, whatever the number of beats."""

    hold = models.OneToOneField(Hold, on_delete=models.PROTECT, related_name="escalation")
    policy = models.ForeignKey(ApprovalPolicy, null=True, on_delete=models.SET_NULL, related_name="escalations")
    group = models.ForeignKey(Group, null=True, on_delete=models.SET_NULL, related_name="+")
    group_name = models.CharField(max_length=150, help_text="The group's name when the hold escalated.")
    at = models.DateTimeField()
    reason = models.TextField(help_text='Why, for people: "not claimed 30 minutes after it arrived".')
    told = models.PositiveIntegerField(
        null=True, help_text="How many of the group's members could see the hold and were told; 0: nobody could be."
    )

    def __str__(self) -> str:
        return f"{self.hold} escalated to {self.group_name}"
