"""The audit models in the admin: readable by staff with view permission, changeable by nobody.

The changelist never counts the whole table: its paginator counts at most
``COUNT_LIMIT`` rows (``reviewqueue.admin``), so a million events open as fast as a thousand.
"""

from django.contrib import admin

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
