"""Admins see every linked Slack account and may remove anyone's (audited as every admin change); nobody adds or
changes one here: only its person links it (``slackapp.linking``)."""

from django.contrib import admin

from slackapp.models import SlackAccount


@admin.register(SlackAccount)
class SlackAccountAdmin(admin.ModelAdmin):
    list_display = ("user", "slack_user_id", "team_id", "linked_at")
    search_fields = ("user__username", "slack_user_id", "team_id")
    readonly_fields = ("user", "slack_user_id", "team_id", "linked_at")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
