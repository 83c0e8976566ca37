"""Reviewers' remembered approvals, and the holds an admin lets them remember."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.formats import date_format

from approvals.alike import literal
from approvals.models.policies import PolicyDecisionKind
from holds.models import Hold
from people import naming
from reviewqueue import agent_numbers


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
        approved = Q(decisions__kind=PolicyDecisionKind.APPROVED)
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
