"""Admins see every linked Slack account, remove anyone's and link one for someone: a link an admin makes counts as
proven (the admin vouches for it), and adding and removing are audited as every admin change is. Nobody changes a
link here: it is removed and made again."""

from django.contrib import admin
from django.utils import timezone

from audit.admin_changes import AuditedAdmin
from slackapp.models import SlackAccount


@admin.register(SlackAccount)
class SlackAccountAdmin(AuditedAdmin):
    list_display = ("user", "slack_user_id", "team_id", "linked_at", "proof_shown")
    list_filter = ("proof",)
    search_fields = ("user__username", "slack_user_id", "team_id")
    fields = ("user", "slack_user_id", "team_id", "linked_at", "proof")

    @admin.display(description="Verified", ordering="proof")
    def proof_shown(self, account: SlackAccount) -> str:
        return account.get_proof_display()

    def get_fields(self, request, obj=None):
        return ("user", "slack_user_id", "team_id") if obj is None else self.fields

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.fields

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj: SlackAccount, form, change) -> None:
        obj.linked_at = timezone.now()
        obj.proof = SlackAccount.Proof.ADMIN
        super().save_model(request, obj, form, change)
