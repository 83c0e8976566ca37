"""Approval policies and the stages of their chains."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from reviewqueue import agent_numbers


class PolicyDecisionKind(models.TextChoices):
    """What a policy decided by itself (``PolicyDecision.Kind``), below both the remembered approvals that count them
    and the decisions that record them."""

    APPROVED = "approved", "Approved by the policy"
    DEFAULT = "default", "Default outcome before expiry"


MOST_PEOPLE = 50  # a chain's people, all stages together: more is a typing mistake, not a refund desk


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

    class ExpiryOutcome(models.TextChoices):
        REJECT = "reject", "Reject"
        APPROVE = "approve", "Approve"

    name = models.CharField(max_length=100, unique=True)
    env_pattern = models.CharField(
        max_length=200, blank=True, help_text="A glob over the env, e.g. prod-*; blank: any env."
    )
    agent_pattern = models.CharField(max_length=200, blank=True, help_text="A glob over the agent; blank: any agent.")
    capability_pattern = models.CharField(
        max_length=200, blank=True, help_text="A glob over the capability; blank: any capability."
    )
    condition_key = models.CharField(
        max_length=100,
        blank=True,
        help_text="A key of the items' data holding a number, e.g. amount; blank: no condition.",
    )
    condition_operator = models.CharField(max_length=3, choices=Operator.choices, blank=True)
    condition_threshold = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS, decimal_places=agent_numbers.AMOUNT_PLACES, null=True, blank=True
    )
    currency = models.CharField(
        max_length=3,
        blank=True,
        help_text="The currency its amounts are in, e.g. USD: an amount naming no currency, or another one, "
        "leaves the hold to people. Blank: amounts are compared whatever their currency.",
    )
    subject_total_over = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS,
        decimal_places=agent_numbers.AMOUNT_PLACES,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        verbose_name="subject total over",
        help_text="Match only when the amounts approved on one subject (an order, a customer…) within the days "
        "below, this hold's included, come to more than this: refunds on one order above 100 in 30 days. "
        "An amount not read for certain counts as over. Blank: no such condition.",
    )
    subject_total_days = models.PositiveSmallIntegerField(
        default=30,
        validators=[MinValueValidator(1), MaxValueValidator(365)],
        verbose_name="subject total days",
        help_text="How many days back the subject total counts approvals of the same capability: 1 to 365.",
    )
    approvals_required = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(0), MaxValueValidator(MOST_PEOPLE)],
        verbose_name="people needed",
        help_text="How many distinct people must approve: 0 to 3 without stages. With 0 the policy approves a matching "
        "hold itself. With stages below, the fewest people the chain needs, set from them.",
    )
    later_approver_group = models.ForeignKey(
        Group,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Who may give the approvals after the first; blank: any reviewer.",
    )
    escalate_after_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Escalate a hold nobody has claimed this many minutes after it arrived."
    )
    escalate_at_percent = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(99)],
        help_text="Escalate a hold once this share of its lifetime has gone, e.g. 75.",
    )
    escalation_group = models.ForeignKey(
        Group,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Who is told when a hold escalates.",
    )
    enabled = models.BooleanField(
        default=True, help_text="A disabled policy decides nothing by itself: the holds it matches wait for people."
    )
    valid_until = models.DateTimeField(
        null=True, blank=True, help_text="From then on the policy decides nothing by itself; blank: no end."
    )
    auto_wait_minutes = models.PositiveIntegerField(
        default=0, help_text="With 0 people needed: how long a hold waits in the queue before the policy approves it."
    )
    daily_cap_count = models.PositiveIntegerField(
        null=True, blank=True, help_text="With 0 people needed: at most this many holds approved by the policy a day."
    )
    daily_cap_amount = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS,
        decimal_places=agent_numbers.AMOUNT_PLACES,
        null=True,
        blank=True,
        help_text="With 0 people needed: at most this sum of the amounts of the holds approved by the policy a day.",
    )
    every_hold_confirmed = models.BooleanField(
        default=False,
        verbose_name="I mean every hold",
        help_text="Needed for a policy with 0 people, blank globs and no condition: it approves every hold.",
    )
    expiry_outcome = models.CharField(
        max_length=7,
        choices=ExpiryOutcome.choices,
        blank=True,
        help_text="The decision the policy sends for a hold nobody decided before its expiry; blank: none.",
    )
    expiry_outcome_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="How many minutes before the hold's expiry the default outcome is sent."
    )
    expiry_outcome_comment = models.TextField(
        blank=True, help_text="Sent with a default reject, so the agent can tell its customer why."
    )
    decide_within_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="A target: its holds should be decided within this many minutes of the agent's ask. Past it the "
        "queue marks a hold and the statistics count it late; with an escalation group it escalates then.",
    )

    class Meta:
        verbose_name_plural = "approval policies"
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(approvals_required__gte=0, approvals_required__lte=MOST_PEOPLE),
                name="policy_approvals_within_most",
            ),
            models.CheckConstraint(
                condition=~Q(expiry_outcome="approve") | Q(approvals_required__lte=1),
                name="policy_default_approve_at_most_one",
            ),
            models.CheckConstraint(
                condition=Q(expiry_outcome="") | Q(expiry_outcome_minutes__isnull=False),
                name="policy_default_outcome_has_minutes",
            ),
            models.CheckConstraint(
                condition=Q(condition_key="", condition_operator="", condition_threshold__isnull=True)
                | (~Q(condition_key="") & ~Q(condition_operator="") & Q(condition_threshold__isnull=False)),
                name="policy_condition_complete",
            ),
            models.CheckConstraint(
                condition=Q(subject_total_days__gte=1, subject_total_days__lte=365)
                & (Q(subject_total_over__isnull=True) | Q(subject_total_over__gte=0)),
                name="policy_subject_total_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ApprovalStage(models.Model):
    """One stage of a policy's approval chain (``approvals.chains``): who approves (a group, or any reviewer), how many
    of them (N distinct people, or everyone in the group), and when (after the stage before it, or alongside it).

    A policy without stages reads its ``approvals_required`` and ``later_approver_group`` as the stages they mean
    (``chains.stages_of``); one with stages keeps ``approvals_required`` as the fewest people its chain needs.
    """

    policy = models.ForeignKey(ApprovalPolicy, on_delete=models.CASCADE, related_name="stages")
    position = models.PositiveSmallIntegerField(help_text="1 for the first stage, 2 for the next …")
    group = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.PROTECT, related_name="+", help_text="Blank: any reviewer."
    )
    approvals = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MOST_PEOPLE)],
        help_text="How many distinct people; blank: everyone in the group.",
    )
    with_previous = models.BooleanField(
        default=False, help_text="Runs alongside the stage before it, rather than after it."
    )

    class Meta:
        ordering = ["policy", "position"]
        constraints = [
            models.UniqueConstraint(fields=["policy", "position"], name="stage_position_once"),
            models.CheckConstraint(
                condition=Q(approvals__isnull=False, approvals__gte=1) | Q(approvals__isnull=True, group__isnull=False),
                name="stage_has_people",
            ),
            models.CheckConstraint(condition=Q(position__gte=2) | Q(with_previous=False), name="stage_first_in_order"),
        ]

    def __str__(self) -> str:
        return f"stage {self.position} of {self.policy}"
