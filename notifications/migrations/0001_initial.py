"""The notification models, moved here from ``holds``: their tables stay as they are.

``holds`` created the tables (holds/migrations/0003); this migration only tells
Django that the models now belong to ``notifications`` (``db_table`` keeps the
table names), and ``holds/migrations/0006`` removes them from ``holds``. The
content types move with them, so permissions and the admin's log keep pointing
at the same models.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED_MODELS = ["webhookchannel", "notificationsettings", "notification", "notificationattempt", "digeststate"]


def _move_content_types(apps, schema_editor, from_app: str, to_app: str) -> None:
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
    # A content type already under ``to_app`` is left as it is: two rows for one model would break the unique key.
    present = list(content_types.filter(app_label=to_app, model__in=MOVED_MODELS).values_list("model", flat=True))
    content_types.filter(app_label=from_app, model__in=MOVED_MODELS).exclude(model__in=present).update(app_label=to_app)


def content_types_to_notifications(apps, schema_editor) -> None:
    _move_content_types(apps, schema_editor, "holds", "notifications")


def content_types_back_to_holds(apps, schema_editor) -> None:
    _move_content_types(apps, schema_editor, "notifications", "holds")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("holds", "0005_sync_quarantine"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="DigestState",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "started_at",
                            models.DateTimeField(
                                help_text="Holds first seen before the digest existed are not announced."
                            ),
                        ),
                        ("last_run_at", models.DateTimeField()),
                    ],
                    options={
                        "db_table": "holds_digeststate",
                    },
                ),
                migrations.CreateModel(
                    name="WebhookChannel",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=100, unique=True)),
                        ("url", models.URLField(max_length=500)),
                        (
                            "secret",
                            models.CharField(
                                help_text="Signs each body with HMAC-SHA256 (X-ReviewQueue-Signature).", max_length=200
                            ),
                        ),
                        (
                            "events",
                            models.JSONField(blank=True, default=list, help_text="Event names this webhook receives."),
                        ),
                        ("active", models.BooleanField(default=True)),
                        ("last_error", models.TextField(blank=True)),
                        ("last_error_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "failing",
                            models.BooleanField(
                                default=False, help_text="Set when the webhook refused a message (a 4xx)."
                            ),
                        ),
                    ],
                    options={
                        "db_table": "holds_webhookchannel",
                    },
                ),
                migrations.CreateModel(
                    name="Notification",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "event",
                            models.CharField(
                                choices=[
                                    ("new_holds", "New holds"),
                                    ("expiring_soon", "Expiring soon"),
                                    ("expired", "Expired undecided"),
                                    ("not_applied", "Decision not applied"),
                                    ("undelivered", "Decision still undelivered"),
                                ],
                                max_length=20,
                            ),
                        ),
                        (
                            "subject_key",
                            models.CharField(
                                help_text="What it is about: a hold, a decision or a digest window.", max_length=100
                            ),
                        ),
                        (
                            "channel",
                            models.CharField(
                                choices=[("email", "Email"), ("webhook", "Webhook"), ("in_app", "In-app")],
                                max_length=10,
                            ),
                        ),
                        ("recipient_key", models.CharField(help_text='"user:<id>" or "webhook:<id>".', max_length=50)),
                        ("title", models.CharField(max_length=300)),
                        ("body", models.TextField()),
                        ("link", models.URLField(blank=True, max_length=500)),
                        (
                            "holds",
                            models.JSONField(blank=True, default=list, help_text="For digests: the holds listed."),
                        ),
                        ("created_at", models.DateTimeField()),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("sending", "Sending"),
                                    ("sent", "Sent"),
                                    ("failed", "Failed"),
                                ],
                                default="pending",
                                max_length=10,
                            ),
                        ),
                        ("attempts", models.PositiveIntegerField(default=0)),
                        ("next_attempt_at", models.DateTimeField()),
                        ("sent_at", models.DateTimeField(blank=True, null=True)),
                        ("last_error", models.TextField(blank=True)),
                        ("read_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "decision",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="notifications",
                                to="holds.decision",
                            ),
                        ),
                        (
                            "hold",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="notifications",
                                to="holds.hold",
                            ),
                        ),
                        (
                            "user",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="notifications",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "webhook",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="notifications",
                                to="notifications.webhookchannel",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "holds_notification",
                    },
                ),
                migrations.CreateModel(
                    name="NotificationAttempt",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("at", models.DateTimeField()),
                        ("outcome", models.CharField(help_text="sent, retry or failed.", max_length=10)),
                        ("message", models.TextField(blank=True)),
                        (
                            "notification",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="attempts_made",
                                to="notifications.notification",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "holds_notificationattempt",
                        "ordering": ["notification", "at"],
                    },
                ),
                migrations.CreateModel(
                    name="NotificationSettings",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("channels_by_event", models.JSONField(default=dict)),
                        (
                            "user",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="notification_settings",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "holds_notificationsettings",
                    },
                ),
                migrations.AddIndex(
                    model_name="notification",
                    index=models.Index(
                        condition=models.Q(("status", "pending")), fields=["next_attempt_at"], name="notification_due"
                    ),
                ),
                migrations.AddIndex(
                    model_name="notification",
                    index=models.Index(
                        condition=models.Q(("channel", "in_app")),
                        fields=["user", "-created_at"],
                        name="notification_inbox",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="notification",
                    constraint=models.UniqueConstraint(
                        fields=("event", "subject_key", "channel", "recipient_key"), name="notification_once"
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_notifications, content_types_back_to_holds),
    ]
