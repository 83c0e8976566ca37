"""What the admins of every app share."""

from django.contrib import admin
from django.core.paginator import Paginator
from django.utils.functional import cached_property

COUNT_LIMIT = 10_000


class ReadOnlyAdmin(admin.ModelAdmin):
    """A record that people read and nobody changes in the admin: a trail, a log, a quarantine."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class CappedCountPaginator(Paginator):
    """Counts at most ``COUNT_LIMIT`` rows, so a changelist over millions opens as fast as over thousands."""

    @cached_property
    def count(self) -> int:
        return self.object_list[: COUNT_LIMIT + 1].count()
