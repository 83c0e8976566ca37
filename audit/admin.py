"""The audit models in the admin: readable by staff with view permission, changeable by nobody; and the users'
admin, whose every change is a role change on the trail.

The changelist never counts the whole table: its paginator counts at most
``COUNT_LIMIT`` rows (``reviewqueue.admin``), so a million events open as fast as a thousand.
"""

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db import transaction

from audit import events, role_changes
from audit.admin_changes import AuditedAdmin
from audit.events import roles_and_settings
from audit.models import AuditChainHead, AuditEvent
from holds.models import Decision
from reviewqueue.admin import CappedCountPaginator, ReadOnlyAdmin


class OutcomeFilter(admin.SimpleListFilter):
    """Fixed choices: listing the distinct outcomes would read the whole table."""

    title = "outcome"
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return [*Decision.Outcome.choices, ("retry", "Retry later")]

    def queryset(self, request, queryset):
        return queryset.filter(outcome=self.value()) if self.value() else queryset


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["sequence", "at", "kind", "actor_name", "env", "hold_id", "run_id", "agent", "actions", "outcome"]
    list_filter = ["kind", OutcomeFilter, ("at", admin.DateFieldListFilter)]
    search_fields = ["=hold_id", "=run_id", "=actor_name", "=agent"]
    ordering = ["-at", "-sequence"]
    paginator = CappedCountPaginator
    show_full_result_count = False
    list_select_related = False
    readonly_fields = [field.name for field in AuditEvent._meta.fields]


@admin.register(AuditChainHead)
class AuditChainHeadAdmin(ReadOnlyAdmin):
    list_display = ["sequence", "hash"]


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class AuditedUserAdmin(AuditedAdmin, UserAdmin):
    def user_change_password(self, request, id, form_url=""):
        """The password page saves outside ``save_model``: its change is recorded here, in the same transaction."""
        with transaction.atomic():
            response = super().user_change_password(request, id, form_url)
            if request.method == "POST" and response.status_code == 302:
                user = self.get_object(request, unquote(id))
                events.append(
                    roles_and_settings.role_changed(
                        actor=request.user,
                        model=role_changes.USER_MODEL,
                        object_id=str(user.pk),
                        object_repr=str(user)[:200],
                        action="changed",
                        message="Changed password.",
                        now=role_changes.user_roles(user.pk),
                    )
                )
        return response
