import re

from django import forms
from django.contrib import admin

from audit.admin_changes import AuditedAdmin
from notifications import away, destinations, subscriptions
from notifications.models import Notification, NotificationAttempt, NotificationSettings, WebhookChannel
from reviewqueue import readers
from reviewqueue.admin import ReadOnlyAdmin
from teams import scopes

SLACK_CHANNEL = re.compile(r"[CGD][A-Z0-9]{2,39}")  # a public, private or direct channel's id
# The events a webhook can hear: an event announced under another's preference is heard through that one.
WEBHOOK_EVENTS = [
    (value, label) for value, label in Notification.Event.choices if value not in subscriptions.PREFERENCE_FOR
]


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
        fields = ["name", "url", "format", "slack_channel", "secret", "events", "active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["secret"].required = self.instance.pk is None

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        if refused := destinations.refusal_on_save(url):
            raise forms.ValidationError(f"Refused: {refused}.")
        return url

    def clean_slack_channel(self) -> str:
        channel = self.cleaned_data["slack_channel"].strip()
        if channel and not SLACK_CHANNEL.fullmatch(channel):
            raise forms.ValidationError("A Slack channel id, such as C0123ABCD: not the channel's name.")
        return channel

    def clean_secret(self) -> str:
        return self.cleaned_data["secret"] or self.instance.secret


@admin.register(WebhookChannel)
class WebhookChannelAdmin(AuditedAdmin):
    form = WebhookChannelForm
    list_display = ["name", "url", "format", "active", "failing", "last_error_at", "last_error"]
    list_filter = ["format", "active", "failing"]
    readonly_fields = ["failing", "last_error", "last_error_at"]
    fields = [
        "name",
        "url",
        "format",
        "slack_channel",
        "secret",
        "events",
        "active",
        "failing",
        "last_error",
        "last_error_at",
    ]


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


class AwayForm(forms.ModelForm):
    """Away as an admin sets it for someone absent, under the rules their Preferences apply (``notifications.away``):
    a time to come, and a delegate who may stand in for them; blank "away until" ends it."""

    class Meta:
        model = NotificationSettings
        fields = ["user", "away_until", "delegate"]

    def clean(self):
        cleaned = super().clean()
        user = cleaned.get("user") or (self.instance.user if self.instance.user_id else None)
        until, delegate = cleaned.get("away_until"), cleaned.get("delegate")
        try:
            if until is not None and until != self.instance.away_until:
                away.check_until(until)
            if user is not None and until is not None and delegate is not None:
                away.check_delegate(scopes.viewer_of(user), delegate)
        except readers.BadValue as bad:
            self.add_error(bad.name, bad.problem)
        return cleaned


@admin.register(NotificationSettings)
class AwayAdmin(AuditedAdmin):
    """For an admin to set someone's away while they are absent. Saved by ``away.save``, as their Preferences save
    it, so it is audited alike (with the admin as the actor), besides the admin's own log of the change."""

    form = AwayForm
    list_display = ["user", "away_until", "delegate"]
    search_fields = ["user__username"]
    fields = ["user", "away_until", "delegate"]
    raw_id_fields = ["user", "delegate"]

    def get_readonly_fields(self, request, obj=None):
        return ["user"] if obj else []

    def save_model(self, request, obj, form, change):
        saved = away.save(obj.user, obj.away_until, obj.delegate, by=request.user)
        obj.pk = saved.pk
