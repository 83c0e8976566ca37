"""The admin of approval policies, and a read-only record of the approvals given.

A policy's changes are audited as every admin change is (``audit.admin_changes``), with the values
of its changed fields before and after.
"""

from django.contrib import admin
from django.http import Http404
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals import chains, policies, remembering, replay, subject_totals
from approvals.models import Approval, ApprovalPolicy, RememberAllowance, RememberedApproval
from approvals.policy_form import CONDITION_FIELDS, SUBJECT_TOTAL_FIELDS, ApprovalPolicyForm
from audit.admin_changes import AuditedAdmin
from reviewqueue import readers
from reviewqueue.admin import CappedCountPaginator, ReadOnlyAdmin


@admin.register(ApprovalPolicy)
class ApprovalPolicyAdmin(AuditedAdmin):
    form = ApprovalPolicyForm
    list_display = (
        "name",
        "env_pattern",
        "agent_pattern",
        "capability_pattern",
        "condition",
        "approvals_required",
        "later_approver_group",
        "escalation_group",
        "enabled",
        "valid_until",
    )
    list_select_related = ("later_approver_group", "escalation_group")
    search_fields = ("name",)
    readonly_fields = ("chain",)
    fieldsets = (
        (None, {"fields": ("name",)}),
        (
            "Which holds",
            {"fields": ("env_pattern", "agent_pattern", "capability_pattern", *CONDITION_FIELDS, "currency")},
        ),
        ("Subject total", {"fields": SUBJECT_TOTAL_FIELDS}),
        ("People", {"fields": ("approvals_required", "later_approver_group", "chain")}),
        ("Escalation", {"fields": ("escalate_after_minutes", "escalate_at_percent", "escalation_group")}),
        ("Target", {"fields": ("decide_within_minutes",)}),
        (
            "Deciding alone (0 people needed)",
            {
                "fields": (
                    "enabled",
                    "valid_until",
                    "auto_wait_minutes",
                    "daily_cap_count",
                    "daily_cap_amount",
                    "every_hold_confirmed",
                )
            },
        ),
        (
            "Default outcome before expiry",
            {"fields": ("expiry_outcome", "expiry_outcome_minutes", "expiry_outcome_comment")},
        ),
    )

    def get_urls(self):
        replay_view = self.admin_site.admin_view(require_POST(self.replay_view))
        return [
            path("<path:object_id>/replay/", replay_view, name="approvals_approvalpolicy_replay"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The change page shows the saved policy's replay over the window ``replay_days`` names (30 by default)."""
        days = _replay_days(request.GET.get("replay_days", ""))
        policy = self.get_object(request, object_id)
        context = {"replay_days_choices": replay.WINDOWS, "replay_days": days}
        if policy is not None:
            context["saved_replay"] = replay.replay(policy, days)
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **context})

    def replay_view(self, request, object_id):
        """The replay of the values POSTed from the change form, validated by the admin's form, never saved."""
        saved = self.get_object(request, object_id)
        if saved is None or not self.has_change_permission(request, saved):
            raise Http404("No such policy.")
        days = _replay_days(request.POST.get("replay_days", ""))
        form = self.get_form(request, saved)(request.POST, instance=saved)
        context = {**self.admin_site.each_context(request), "policy": saved, "replay_days": days, "form": form}
        if form.is_valid():
            context["replayed"] = replay.replay(form.save(commit=False), days)
            context["saved_replay"] = replay.replay(ApprovalPolicy.objects.get(pk=saved.pk), days)
        template = "approvals/_replay.html" if request.headers.get("HX-Request") else "approvals/replay.html"
        return TemplateResponse(request, template, context)

    @admin.display(description="approval chain")
    def chain(self, policy: ApprovalPolicy) -> str:
        """Its stages in words (``chains.stages_of``); stages of its own are kept as code (``manage.py
        loadpolicies``)."""
        stages = chains.stages_of(policy) if policy.pk else []
        return chains.chain_words(stages) or "Decides by itself (0 people)"

    @admin.display(description="condition")
    def condition(self, policy: ApprovalPolicy) -> str:
        words = [f"{policy.condition_key} {policies.comparison_words(policy)}"] if policy.condition_key else []
        words += [subject_totals.condition_words(policy)] if policy.subject_total_over is not None else []
        return "; ".join(words) or "—"


def _replay_days(value: str) -> int:
    """The replay's window from a request: 7, 30 or 90 days (30 when not given); anything else is a 400."""
    chosen = readers.choice(value, "replay_days", [str(days) for days in replay.WINDOWS])
    return int(chosen) if chosen else replay.DEFAULT_WINDOW


class PolicyNameFilter(admin.SimpleListFilter):
    """Choices from the policies' names (a small table): listing the distinct names approvals carry would read them all.

    An approval keeps its policy's name as it was, so one given under a policy since renamed
    or deleted is found by searching, not here.
    """

    title = "policy"
    parameter_name = "policy_name"

    def lookups(self, request, model_admin):
        return [(name, name) for name in ApprovalPolicy.objects.order_by("name").values_list("name", flat=True)]

    def queryset(self, request, queryset):
        name = readers.text(self.value() or "", self.parameter_name)
        return queryset.filter(policy_name=name) if name else queryset


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    """Approvals are the record of who agreed to what: nobody edits or deletes them here.

    Nothing here counts or scans the whole table: the paginator counts at most ``COUNT_LIMIT``
    rows and the policy filter's choices come from ``ApprovalPolicy``.
    """

    list_display = (
        "hold",
        "round",
        "position",
        "approvals_required",
        "approver",
        "policy_name",
        "created_at",
        "decision",
    )
    list_select_related = ("hold", "approver", "decision")
    list_filter = (PolicyNameFilter,)
    search_fields = ("hold__hold_id", "approver__username")
    ordering = ("-pk",)
    paginator = CappedCountPaginator
    show_full_result_count = False


@admin.register(RememberAllowance)
class RememberAllowanceAdmin(AuditedAdmin):
    """Which holds' approvals reviewers may remember (none by default); each change audited as a setting change."""

    list_display = ("agent_pattern", "capability_pattern", "env_pattern", "daily_cap_count", "daily_cap_amount")


# What a remembered approval approves at most, and until when.
REMEMBERED_BOUNDS = (
    "amount_at_most",
    "total_at_most",
    "currency",
    "daily_cap_count",
    "daily_cap_amount",
    "valid_until",
)


@admin.register(RememberedApproval)
class RememberedApprovalAdmin(AuditedAdmin):
    """Reviewers' remembered approvals (``approvals.remembering``), made on the summary before Send: the admin sees
    who made each, from which hold, what it approves and why it ended; changes its daily caps (audited as every admin
    change is) and ends it (audited as its owner's revoke is); never adds or deletes one."""

    list_display = ("owner", "agent", "capability", "env", *REMEMBERED_BOUNDS, "state")
    list_select_related = ("owner",)
    list_filter = (("ended_at", admin.EmptyFieldListFilter),)
    search_fields = ("owner__username", "agent", "capability")
    actions = ("end",)
    paginator = CappedCountPaginator
    show_full_result_count = False
    fields = ("owner", "source_hold", "env", "agent", "capability", *REMEMBERED_BOUNDS, "ended_at", "ended_reason")
    readonly_fields = tuple(field for field in fields if field not in ("daily_cap_count", "daily_cap_amount"))

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="state")
    def state(self, remembered: RememberedApproval) -> str:
        return f"ended: {remembered.ended_reason or 'ended'}" if remembered.ended_at else "running"

    @admin.action(description="End the selected remembered approvals")
    def end(self, request, queryset):
        now = timezone.now()
        for remembered in queryset:
            remembering.revoke(remembered.pk, request.user, now)
        self.message_user(request, "The selected remembered approvals have ended.")
