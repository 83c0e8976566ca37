"""Approval policies (how many people must approve which holds), the approvals given, and escalations."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.formats import date_format

from approvals.alike import literal
from holds.models import Decision, Hold
from people import naming
from reviewqueue import agent_numbers


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
        validators=[MinValueValidator(0), MaxValueValidator(3)],
        verbose_name="people needed",
        help_text="How many distinct people must approve: 0 to 3. With 0 the policy approves a matching hold itself.",
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
                condition=Q(approvals_required__gte=0, approvals_required__lte=3), name="policy_approvals_0_to_3"
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


class RememberAllowance(models.Model):
    """Holds whose approval reviewers may remember (``approvals.remembering``): none unless an admin adds one.

    Globs as a policy's (blank: any); a remembered approval made under it approves at most
    ``daily_cap_count`` holds a day and, when set, holds whose amounts sum to at most ``daily_cap_amount`` a day.
    """

    env_pattern = models.CharField(max_length=200, blank=True, help_text="A glob over the env; blank: any env.")
    agent_pattern = models.CharField(max_length=200, blank=True, help_text="A glob over the agent; blank: any agent.")
    capability_pattern = models.CharField(
        max_length=200, blank=True, help_text="A glob over the capability; blank: any capability."
    )
    daily_cap_count = models.PositiveIntegerField(
        default=20,
        validators=[MinValueValidator(1)],
        help_text="A remembered approval made under it approves at most this many holds a day.",
    )
    daily_cap_amount = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS,
        decimal_places=agent_numbers.AMOUNT_PLACES,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="… and holds whose amounts sum to at most this a day; blank: no cap on the sum.",
    )

    class Meta:
        verbose_name = "approval reviewers may remember"
        verbose_name_plural = "approvals reviewers may remember"
        ordering = ["agent_pattern", "capability_pattern", "env_pattern", "pk"]

    def __str__(self) -> str:
        return f"{self.agent_pattern or 'any agent'} / {self.capability_pattern or 'any capability'}"


class RememberedApprovals(models.QuerySet):
    def running(self) -> RememberedApprovals:
        """Those not ended (past its ``valid_until``, one runs until the sweep ends it), with owners and holds."""
        return self.filter(ended_at__isnull=True).select_related("owner", "source_hold")

    def with_matched(self) -> RememberedApprovals:
        """Newest first, each with ``matched``: the holds it approved so far."""
        approved = Q(decisions__kind=PolicyDecision.Kind.APPROVED)
        return self.annotate(matched=models.Count("decisions", filter=approved)).order_by("-pk")


class RememberedApproval(models.Model):
    """A reviewer's remembered approval (``approvals.remembering``): their "and the same again" on the summary before
    Send, approving by itself, in their name, holds like the one they approved (``approvals.alike``: the same env,
    agent and capability, each amount at most ``amount_at_most``, all together at most ``total_at_most``, in
    ``currency``), under its daily caps, until ``valid_until`` or its end.

    The policies' rules read it as a policy needing 0 people that approves at once, with no default outcome,
    escalation or target: the class attributes and properties below are what such a policy has
    (``policies.requirement`` chooses it apart, and its decisions are recorded as ``PolicyDecision.remembered``).
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="remembered_approvals",
        help_text="The reviewer who remembered the approval: it approves in their name.",
    )
    source_hold = models.ForeignKey(
        Hold, on_delete=models.PROTECT, related_name="+", help_text="The hold whose approval was remembered."
    )
    env = models.CharField(max_length=100, help_text="The env it approves holds of, as the hold's.")
    agent = models.TextField(help_text="The agent it approves holds of, exactly.")
    capability = models.TextField(help_text="The capability it approves holds of, exactly.")
    amount_at_most = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS,
        decimal_places=agent_numbers.AMOUNT_PLACES,
        help_text="It approves holds each of whose items' amounts is at most this …",
    )
    total_at_most = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS,
        decimal_places=agent_numbers.AMOUNT_PLACES,
        help_text="… and whose amounts together are at most this: the remembered hold's total.",
    )
    currency = models.CharField(
        max_length=40, blank=True, help_text="The currency every item must name, as that hold's did."
    )
    daily_cap_count = models.PositiveIntegerField(
        null=True, blank=True, help_text="At most this many holds approved a day (the allowance's when made)."
    )
    daily_cap_amount = models.DecimalField(
        max_digits=agent_numbers.AMOUNT_DIGITS,
        decimal_places=agent_numbers.AMOUNT_PLACES,
        null=True,
        blank=True,
        help_text="At most this sum of the amounts of the holds approved a day; blank: no cap on the sum.",
    )
    valid_until = models.DateTimeField(null=True, blank=True, help_text="From then on it approves nothing.")
    ended_at = models.DateTimeField(null=True, blank=True, help_text="When it was revoked or ended; blank: running.")
    ended_reason = models.CharField(max_length=200, blank=True, help_text='Why: "revoked by alice", "alice is away".')

    objects = RememberedApprovals.as_manager()

    # What a policy needing 0 people that approves at once has, and nothing more (see the class's docstring).
    approvals_required = 0
    auto_wait_minutes = 0
    condition_key = ""
    subject_total_over = None
    later_approver_group = later_approver_group_id = None
    escalation_group = escalation_group_id = escalate_after_minutes = escalate_at_percent = None
    decide_within_minutes = None
    expiry_outcome, expiry_outcome_minutes, expiry_outcome_comment = "", None, ""

    class Meta:
        ordering = ["-pk"]
        indexes = [
            models.Index(fields=["ended_at"], condition=Q(ended_at__isnull=True), name="remembered_running"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk})"

    @property
    def name(self) -> str:
        """Whom its decisions name, for the platform too: "remembered by alice"."""
        return f"remembered by {self.owner.get_username()}"[:100]

    @property
    def enabled(self) -> bool:
        return self.ended_at is None

    @property
    def env_pattern(self) -> str:
        return literal(self.env)

    @property
    def agent_pattern(self) -> str:
        return literal(self.agent)

    @property
    def capability_pattern(self) -> str:
        return literal(self.capability)

    def label(self, now) -> str:
        """ "alice's remembered approval (until 18:00)", for people (the time in the active zone, with its date when
        not today's)."""
        until = ""
        if self.valid_until is not None:
            local, today = timezone.localtime(self.valid_until), timezone.localtime(now).date()
            until = f" (until {date_format(local, 'H:i' if local.date() == today else 'Y-m-d H:i')})"
        return f"{naming.name(self.owner)}'s remembered approval{until}"


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


class PolicyDecision(models.Model):
    """A decision a policy sent by itself: its approval of a hold needing 0 people, or its default outcome.

    Unique per hold and kind, so of two sweeps at once (two beats) only one decides a hold,
    and a hold a policy decided once is never decided by it again. The policy's approvals of
    a day (in ``TIME_ZONE``), with their ``amount`` (the sum of every amount the hold carried), count towards its
    daily cap.
    """

    class Kind(models.TextChoices):
        APPROVED = "approved", "Approved by the policy"
        DEFAULT = "default", "Default outcome before expiry"

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
