from django.contrib import admin
from django.db import transaction
from django.db.models import Q

from audit.admin_changes import AuditedAdmin
from holds.models import FilterValue, Hold, HoldItem, QuarantinedHold, SubjectKeys
from holds.related import stored
from reviewqueue import readers
from reviewqueue.admin import CappedCountPaginator, ReadOnlyAdmin


@admin.register(QuarantinedHold)
class QuarantinedHoldAdmin(ReadOnlyAdmin):
    """Read-only: the holds sync could not mirror and why; sync removes each once it is stored or gone."""

    list_display = ["env", "hold_id", "reason", "times_seen", "first_seen_at", "last_seen_at"]
    fields = ["env", "hold_id", "reason", "excerpt", "times_seen", "first_seen_at", "last_seen_at"]


class _RecordedValueFilter(admin.SimpleListFilter):
    """Choices from the values sync recorded (``FilterValue``): listing the distinct ones would read every hold."""

    def lookups(self, request, model_admin):
        values = FilterValue.objects.exclude(**{self.parameter_name: ""}).values_list(self.parameter_name, flat=True)
        return [(value, value) for value in values.order_by(self.parameter_name).distinct()]

    def queryset(self, request, queryset):
        value = readers.text(self.value() or "", self.parameter_name)
        return queryset.filter(**{self.parameter_name: value}) if value else queryset


class EnvFilter(_RecordedValueFilter):
    title = "env"
    parameter_name = "env"


class AgentFilter(_RecordedValueFilter):
    title = "agent"
    parameter_name = "agent"


class HoldItemInline(admin.TabularInline):
    model = HoldItem
    fields = ["position", "item_id", "title", "data"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Hold)
class HoldAdmin(ReadOnlyAdmin):
    """The mirror, read-only: sync writes holds and reviewers decide them in the app.

    Nothing here counts or scans the whole table: the paginator counts at most
    ``COUNT_LIMIT`` rows, filter choices come from ``FilterValue``, and search matches the
    start of a hold, run or item id through their indexes.
    """

    list_display = ["env", "hold_id", "agent", "capability", "status", "created_at", "expires_at"]
    list_filter = [EnvFilter, "status", AgentFilter]  # status's choices are the model's, not the table's
    search_fields = ["hold_id", "run_id", "items__item_id"]  # shows the box; get_search_results does the matching
    search_help_text = "A hold, run or item id, or its beginning."
    ordering = ["-pk"]  # the primary key's index: newest mirrored first, without sorting the table
    paginator = CappedCountPaginator
    show_full_result_count = False
    list_select_related = False
    inlines = [HoldItemInline]

    def get_search_results(self, request, queryset, search_term):
        term = readers.text(search_term, "q")
        if not term:
            return queryset, False
        # Each arm is a prefix match on an indexed id; items through a subquery, so no hold repeats.
        with_item = HoldItem.objects.filter(item_id__startswith=term).values("hold_id")
        matching = Q(hold_id__startswith=term) | Q(run_id__startswith=term) | Q(pk__in=with_item)
        return queryset.filter(matching), False


@admin.register(SubjectKeys)
class SubjectKeysAdmin(AuditedAdmin):
    """Which keys of an agent's items are read as their subjects (``holds/related/subjects.py``), beyond the usual
    ones or fewer. Takes effect for holds mirrored from then on, and for the agent's stored holds once a worker has
    read them again (``holds.related.stored.ask_to_reread``): those of the agent before and after the change."""

    list_display = ["agent", "capability", "keys_added", "keys_removed"]
    search_fields = ["agent", "capability"]
    fields = ["agent", "capability", "keys_added", "keys_removed"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        before = [(form.initial["agent"], form.initial["capability"])] if change else []
        stored.ask_to_reread([*before, (obj.agent, obj.capability)])

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        stored.ask_to_reread([(obj.agent, obj.capability)])

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            stored.ask_to_reread(queryset.values_list("agent", "capability"))
            super().delete_queryset(request, queryset)
