from django import forms
from django.contrib import admin

from notifications import destinations, notify
from notifications.models import Notification, NotificationAttempt, NotificationSettings, WebhookChannel
from reviewqueue.admin import ReadOnlyAdmin

# The events a webhook can hear: an event announced under another's preference is heard through that one.
WEBHOOK_EVENTS = [(value, label) for value, label in Notification.Event.choices if value not in notify.PREFERENCE_FOR]


class WebhookChannelForm(forms.ModelForm):
    """The secret is write-only: never rendered back, and left blank on a change it stays as it is."""

    secret = forms.CharField(
        max_length=WebhookChannel._meta.get_field("secret").max_length,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Signs each body with HMAC-SHA256 (X-ReviewQueue-Signature). It is never shown again: "
        "to change it, type a new one; leave it blank to keep the current one.",
    )
    events = forms.MultipleChoiceField(
        choices=WEBHOOK_EVENTS,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The events this webhook receives.",
    )

    class Meta:
        model = WebhookChannel
        fields = ["name", "url", "format", "secret", "events", "active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["secret"].required = self.instance.pk is None

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        if refused := destinations.refusal_on_save(url):
            raise forms.ValidationError(f"Refused: {refused}.")
        return url

    def clean_secret(self) -> str:
        return self.cleaned_data["secret"] or self.instance.secret


@admin.register(WebhookChannel)
class WebhookChannelAdmin(admin.ModelAdmin):
    form = WebhookChannelForm
    list_display = ["name", "url", "format", "active", "failing", "last_error_at", "last_error"]
    list_filter = ["format", "active", "failing"]
    readonly_fields = ["failing", "last_error", "last_error_at"]
    fields = ["name", "url", "format", "secret", "events", "active", "failing", "last_error", "last_error_at"]


class NotificationAttemptInline(admin.TabularInline):
    model = NotificationAttempt
    extra = 0
    can_delete = False
    readonly_fields = ["at", "outcome", "message"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    """Read-only: admins see what was sent and what failed, and change nothing."""

    list_display = ["created_at", "event", "channel", "recipient_key", "status", "attempts", "last_error"]
    list_filter = ["status", "channel", "event"]
    search_fields = ["recipient_key", "subject_key", "title"]
    ordering = ["-created_at"]
    inlines = [NotificationAttemptInline]


@admin.register(NotificationSettings)
class AwayAdmin(admin.ModelAdmin):
    """For an admin to set someone's away while they are absent; audited like every admin change (``audit.signals``)."""

    list_display = ["user", "away_until", "delegate"]
    search_fields = ["user__username"]
    fields = ["user", "away_until", "delegate"]
    raw_id_fields = ["user", "delegate"]

    def get_readonly_fields(self, request, obj=None):
        return ["user"] if obj else []
