"""The one form an approval policy is checked by, in the admin and in a policy file (``approvals.policy_files``)."""

import re

from django import forms

from approvals.models import ApprovalPolicy
from teams import scopes

CONDITION_FIELDS = ("condition_key", "condition_operator", "condition_threshold")
SUBJECT_TOTAL_FIELDS = ("subject_total_over", "subject_total_days")
DAYS_WORDS = "A subject total counts 1 to 365 days."
CURRENCY_CODE = re.compile(r"[A-Z]{3}")
PATTERN_FIELDS = ("env_pattern", "agent_pattern", "capability_pattern")
PEOPLE_FIELDS = ("approvals_required", "later_approver_group")
SIMPLE_MOST = 3  # a policy without stages: 0 to 3 people, the later ones of one group
PEOPLE_WORDS = "A policy needs 0, 1, 2 or 3 people."


class ApprovalPolicyForm(forms.ModelForm):
    class Meta:
        model = ApprovalPolicy
        fields = (
            "name",
            "env_pattern",
            "agent_pattern",
            "capability_pattern",
            *CONDITION_FIELDS,
            "currency",
            *SUBJECT_TOTAL_FIELDS,
            "approvals_required",
            "later_approver_group",
            "escalate_after_minutes",
            "escalate_at_percent",
            "escalation_group",
            "enabled",
            "valid_until",
            "auto_wait_minutes",
            "daily_cap_count",
            "daily_cap_amount",
            "every_hold_confirmed",
            "expiry_outcome",
            "expiry_outcome_minutes",
            "expiry_outcome_comment",
            "decide_within_minutes",
        )
        error_messages = {
            "approvals_required": {"min_value": PEOPLE_WORDS, "max_value": PEOPLE_WORDS},
            "subject_total_days": {"min_value": DAYS_WORDS, "max_value": DAYS_WORDS},
            "subject_total_over": {"min_value": "A subject total is compared with 0 or more."},
        }

    def __init__(self, *args, chained: bool | None = None, **kwargs):
        """``chained``: the policy has stages of its own (``approvals.chains``; read from the stored policy when not
        given), which set its people: the form then leaves them as they are (policy files give them from the
        stages)."""
        super().__init__(*args, **kwargs)
        self.fields["auto_wait_minutes"].required = False  # blank: no wait
        self.fields["subject_total_days"].required = False  # blank: the default, 30
        self.chained = chained if chained is not None else bool(self.instance.pk and self.instance.stages.exists())
        if self.chained and chained is None:
            for name in PEOPLE_FIELDS:
                self.fields[name].disabled = True
                self.fields[name].help_text = "Set by the policy's stages: change them with manage.py loadpolicies."

    def clean_approvals_required(self) -> int:
        people = self.cleaned_data.get("approvals_required")
        if people is not None and people > SIMPLE_MOST and not self.chained:
            raise forms.ValidationError(PEOPLE_WORDS)
        return people

    def clean_env_pattern(self) -> str:
        return _glob(self.cleaned_data.get("env_pattern", ""))

    def clean_agent_pattern(self) -> str:
        return _glob(self.cleaned_data.get("agent_pattern", ""))

    def clean_capability_pattern(self) -> str:
        return _glob(self.cleaned_data.get("capability_pattern", ""))

    def clean_currency(self) -> str:
        currency = self.cleaned_data.get("currency", "").strip().upper()
        if currency and not CURRENCY_CODE.fullmatch(currency):
            raise forms.ValidationError("Write the currency as its three-letter code, such as USD.")
        return currency

    def clean_auto_wait_minutes(self) -> int:
        return self.cleaned_data.get("auto_wait_minutes") or 0

    def clean_subject_total_days(self) -> int:  # a subject total's days: 1 to 365 (the model's validators), blank 30
        days = self.cleaned_data.get("subject_total_days")
        return ApprovalPolicy._meta.get_field("subject_total_days").default if days is None else days

    def clean(self):
        """A condition is a key, an operator and a threshold: all three, or none. A policy approving every hold by
        itself is meant (the box ticked); a default approve needs at most one person, and a default outcome its
        minutes."""
        cleaned = super().clean()
        given = {name: cleaned.get(name) not in ("", None) for name in CONDITION_FIELDS}
        if any(given.values()) and not all(given.values()):
            for name, present in given.items():
                if not present and name not in self.errors:
                    self.add_error(
                        name, "A condition needs a key, a comparison and a threshold; give all three or none."
                    )
        people = cleaned.get("approvals_required")
        matches_every_hold = not any(cleaned.get(name) for name in (*PATTERN_FIELDS, "condition_key")) and (
            cleaned.get("subject_total_over") is None
        )
        if people == 0 and matches_every_hold and not cleaned.get("every_hold_confirmed"):
            self.add_error(
                "every_hold_confirmed",
                "With 0 people needed, blank globs and no condition, this policy approves every hold by itself. "
                "Tick “I mean every hold” if that is what you want.",
            )
        outcome = cleaned.get("expiry_outcome")
        if outcome == ApprovalPolicy.ExpiryOutcome.APPROVE and (self.chained or (people is not None and people > 1)):
            self.add_error(
                "expiry_outcome",
                "A default approve never stands in for an approval chain's stages."
                if self.chained
                else "A default approve is allowed only on a policy needing at most one person.",
            )
        if outcome and cleaned.get("expiry_outcome_minutes") is None:
            self.add_error(
                "expiry_outcome_minutes", "Say how many minutes before the expiry the default outcome is sent."
            )
        return cleaned


def _glob(pattern: str) -> str:
    """A glob checked as team scopes check theirs: one that cannot be a glob (a ``[`` no ``]`` closes) is refused."""
    try:
        scopes.check_patterns(pattern)
    except scopes.InvalidPattern as bad:
        raise forms.ValidationError(str(bad)) from None
    return pattern
