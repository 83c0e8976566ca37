"""What the admins of every app share."""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """A record that people read and nobody changes in the admin: a trail, a log, a quarantine."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
