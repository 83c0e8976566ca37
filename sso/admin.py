from django.contrib import admin

from audit.admin_changes import AuditedAdmin
from sso.models import Identity


@admin.register(Identity)
class IdentityAdmin(AuditedAdmin):
    """The links between accounts and identity-provider subjects: deleting one lets the person be linked anew."""

    list_display = ("user", "subject", "issuer", "linked_at")
    search_fields = ("user__username", "subject")
    readonly_fields = ("user", "issuer", "subject", "linked_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
