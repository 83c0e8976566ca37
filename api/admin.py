from django.contrib import admin, messages

from api import tokens
from api.models import ApiToken
from reviewqueue.admin import ReadOnlyAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    """Everyone's tokens, to read and revoke: a token is made by its owner (Preferences → API tokens) or with
    ``createtoken``, where its secret is shown once, and never changed or deleted, so its history stays."""

    list_display = ["name", "user", "hint", "scopes", "created_at", "last_used_at", "expires_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "hint"]
    list_select_related = ["user"]
    actions = ["revoke"]
    fields = list_display + ["created_by", "revoked_by"]

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    @admin.action(description="Revoke the selected tokens", permissions=["revoke"])
    def revoke(self, request, queryset):
        revoked = sum(tokens.revoke(token, by=request.user) for token in queryset.select_related("user"))
        self.message_user(request, f"{revoked} token{'s' * (revoked != 1)} revoked.", messages.SUCCESS)

    def has_revoke_permission(self, request):
        return request.user.is_superuser
