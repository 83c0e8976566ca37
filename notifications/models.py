"""What the app says to people: webhooks, each user's preferences, every message and its sending attempts.

The tables keep the names they had under ``holds`` (``db_table``), where these models lived first.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q


class WebhookChannel(models.Model):
    """A webhook that admins set up: it receives the chosen events as signed JSON in its ``format``
    (``notifications.webhook_formats``)."""

    class Format(models.TextChoices):
        SLACK = "slack", "Slack (Block Kit, with the structured fields beside it)"
        TEAMS = "teams", "Microsoft Teams (Adaptive Card)"
        JSON = "json", "JSON (the structured fields alone)"

    name = models.CharField(max_length=100, unique=True)
    url = models.URLField(max_length=500)
    # Slack by default, existing webhooks too: its body is the one every webhook got before formats existed, with
    # Block Kit added, so a receiver other than Slack keeps every field it read. The database default too, so
    # rows the previous release inserts during a rolling deploy get it.
    format = models.CharField(
        max_length=10,
        choices=Format.choices,
        default=Format.SLACK,
        db_default=Format.SLACK,
        help_text="The shape of each body. Slack's carries the structured fields too, for any other receiver.",
    )
    secret = models.CharField(max_length=200, help_text="Signs each body with HMAC-SHA256 (X-ReviewQueue-Signature).")
    events = models.JSONField(default=list, blank=True, help_text="Event names this webhook receives.")
    active = models.BooleanField(default=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    failing = models.BooleanField(default=False, help_text="Set when the webhook refused a message (a 4xx).")
    slack_channel = models.CharField(
        max_length=40,
        blank=True,
        default="",
        db_default="",  # rows the previous release inserts during a rolling deploy have none
        help_text="A Slack channel id (C…): with SLACK_BOT_TOKEN set, a Slack-format message goes there through "
        "chat.postMessage instead of the URL, and is updated in place once its hold is decided or closed.",
    )

    class Meta:
        db_table = "holds_webhookchannel"

    def __str__(self) -> str:
        return self.name


class NotificationSettings(models.Model):
    """Which events reach one user on which channels; users without a row get the defaults."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_settings"
    )
    channels_by_event = models.JSONField(default=dict)
    # Away: until this moment the person's reminders and escalations go to ``delegate`` (``notifications.away``).
    # The moment alone ends it: nothing needs to run to bring them back.
    away_until = models.DateTimeField(null=True, blank=True, help_text="Away until this moment; blank: not away.")
    delegate = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="standing_in_for",
        help_text="Who gets their messages while they are away: a reviewer who sees at least what they see.",
    )
    # Quiet hours: no push between these times of day, in the person's time zone (``notifications.push_pacing``).
    quiet_from = models.TimeField(null=True, blank=True, help_text="No push from this time of day…")
    quiet_until = models.TimeField(null=True, blank=True, help_text="…until this one, in their time zone.")

    class Meta:
        db_table = "holds_notificationsettings"

    def __str__(self) -> str:
        return f"notification settings of {self.user}"


class Notification(models.Model):
    """One message about one subject to one recipient on one channel, sent at most once.

    The unique constraint over (event, subject, channel, recipient) is what makes a
    retried task or a second scheduler harmless: the row is created once, and only
    the task that moves it from pending to sending sends it.
    """

    class Event(models.TextChoices):
        NEW_HOLDS = "new_holds", "New holds"
        EXPIRING_SOON = "expiring_soon", "Expiring soon"
        EXPIRED = "expired", "Expired undecided"
        NOT_APPLIED = "not_applied", "Decision not applied"
        UNDELIVERED = "undelivered", "Decision still undelivered"
        ESCALATED = "escalated", "Escalated"
        STAGE_WAITING = "stage_waiting", "An approval stage waiting for you"
        DEFAULT_OUTCOME = "default_outcome", "Decided by a policy's default outcome"
        ASSIGNED = "assigned", "Assigned to you"
        MENTIONED = "mentioned", "Mentioned in a note"

    class Channel(models.TextChoices):
        EMAIL = "email", "Email"
        WEBHOOK = "webhook", "Webhook"
        IN_APP = "in_app", "In-app"
        PUSH = "push", "Push"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"
        RESOLVED = "resolved", "Not sent: resolved first"
        FOLDED = "folded", "Sent within another push"
        PRUNED = "pruned", "Not sent: the device's subscription ended"

    event = models.CharField(max_length=20, choices=Event.choices)
    subject_key = models.CharField(max_length=100, help_text="What it is about: a hold, a decision or a digest window.")
    channel = models.CharField(max_length=10, choices=Channel.choices)
    recipient_key = models.CharField(max_length=50, help_text='"user:<id>", "webhook:<id>" or "push:<id>".')
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="notifications"
    )
    webhook = models.ForeignKey(
        WebhookChannel, null=True, blank=True, on_delete=models.CASCADE, related_name="notifications"
    )
    push_subscription = models.ForeignKey(
        "PushSubscription", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    hold = models.ForeignKey(
        "holds.Hold", null=True, blank=True, on_delete=models.CASCADE, related_name="notifications"
    )
    decision = models.ForeignKey(
        "holds.Decision", null=True, blank=True, on_delete=models.CASCADE, related_name="notifications"
    )
    title = models.CharField(max_length=300)
    body = models.TextField()
    link = models.URLField(max_length=500, blank=True)
    holds = models.JSONField(default=list, blank=True, help_text="For digests: the holds listed.")
    created_at = models.DateTimeField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    read_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(
        null=True, blank=True, help_text="When what it is about stopped needing anyone (see notify.resolve_for_holds)."
    )
    resolved_reason = models.CharField(max_length=300, blank=True, help_text='E.g. "decided by Alice Adams".')

    class Meta:
        db_table = "holds_notification"
        constraints = [
            models.UniqueConstraint(
                fields=["event", "subject_key", "channel", "recipient_key"], name="notification_once"
            )
        ]
        indexes = [
            models.Index(fields=["next_attempt_at"], condition=Q(status="pending"), name="notification_due"),
            models.Index(fields=["user", "-created_at"], condition=Q(channel="in_app"), name="notification_inbox"),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.recipient_key} by {self.channel}"


class PushSubscription(models.Model):
    """One device a person hears of holds on by Web Push: the push service's ``endpoint`` and the keys its browser
    gave to encrypt for it (RFC 8291). ``last_pushed_at`` paces what it is sent (``notifications.push_pacing``)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions")
    name = models.CharField(max_length=60)
    endpoint = models.URLField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=100)
    auth = models.CharField(max_length=50)
    created_at = models.DateTimeField()
    last_pushed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} of {self.user}"


class NotificationAttempt(models.Model):
    notification = models.ForeignKey(Notification, on_delete=models.CASCADE, related_name="attempts_made")
    at = models.DateTimeField()
    outcome = models.CharField(max_length=10, help_text="sent, retry or failed.")
    message = models.TextField(blank=True)

    class Meta:
        db_table = "holds_notificationattempt"
        ordering = ["notification", "at"]

    def __str__(self) -> str:
        return f"{self.outcome} at {self.at}"


class DigestState(models.Model):
    """When the new-holds digest last ran: advanced by compare-and-set, so one scheduler wins each window."""

    started_at = models.DateTimeField(help_text="Holds first seen before the digest existed are not announced.")
    last_run_at = models.DateTimeField()

    class Meta:
        db_table = "holds_digeststate"

    def __str__(self) -> str:
        return f"new-holds digest, last run {self.last_run_at}"


class SlackMessage(models.Model):
    """A Slack message about one hold, to replace once the hold is decided or closed (``slackapp.messages``).

    The bot posted it (``by_bot``: ``chat.update`` replaces it by ``channel_id`` and ``ts``), or a press on it
    gave a ``response_url`` that replaces it until ``response_url_expires_at``. ``shown`` names the state it shows
    last, so the same state is never sent twice.
    """

    hold = models.ForeignKey("holds.Hold", on_delete=models.CASCADE, related_name="+")
    channel_id = models.CharField(max_length=40)
    ts = models.CharField(max_length=40)
    by_bot = models.BooleanField(default=False)
    response_url = models.URLField(max_length=500, blank=True)
    response_url_expires_at = models.DateTimeField(null=True, blank=True)
    shown = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["channel_id", "ts"], name="slack_message_once")]

    def __str__(self) -> str:
        return f"Slack message {self.channel_id}/{self.ts} about {self.hold}"
