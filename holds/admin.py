from django.contrib import admin

from holds.models import Notification, NotificationAttempt, WebhookChannel


@admin.register(WebhookChannel)
class WebhookChannelAdmin(admin.ModelAdmin):
    list_display = ["name", "url", "active", "failing", "last_error_at", "last_error"]
    list_filter = ["active", "failing"]
    readonly_fields = ["failing", "last_error", "last_error_at"]
    fields = ["name", "url", "secret", "events", "active", "failing", "last_error", "last_error_at"]


class NotificationAttemptInline(admin.TabularInline):
    model = NotificationAttempt
    extra = 0
    can_delete = False
    readonly_fields = ["at", "outcome", "message"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    """Read-only: admins see what was sent and what failed, and change nothing."""

    list_display = ["created_at", "event", "channel", "recipient_key", "status", "attempts", "last_error"]
    list_filter = ["status", "channel", "event"]
    search_fields = ["recipient_key", "subject_key", "title"]
    inlines = [NotificationAttemptInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
