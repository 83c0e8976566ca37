"""The notification models moved to the ``notifications`` app: removed from ``holds``' state, tables kept.

``notifications/migrations/0001_initial`` takes them over first, with the same tables.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("holds", "0005_sync_quarantine"),
        ("notifications", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name="DigestState",
                ),
                migrations.RemoveIndex(
                    model_name="notification",
                    name="notification_due",
                ),
                migrations.RemoveIndex(
                    model_name="notification",
                    name="notification_inbox",
                ),
                migrations.RemoveConstraint(
                    model_name="notification",
                    name="notification_once",
                ),
                migrations.RemoveField(
                    model_name="notificationsettings",
                    name="user",
                ),
                migrations.RemoveField(
                    model_name="notification",
                    name="decision",
                ),
                migrations.RemoveField(
                    model_name="notification",
                    name="hold",
                ),
                migrations.RemoveField(
                    model_name="notification",
                    name="user",
                ),
                migrations.RemoveField(
                    model_name="notification",
                    name="webhook",
                ),
                migrations.DeleteModel(
                    name="NotificationAttempt",
                ),
                migrations.DeleteModel(
                    name="NotificationSettings",
                ),
                migrations.DeleteModel(
                    name="Notification",
                ),
                migrations.DeleteModel(
                    name="WebhookChannel",
                ),
            ],
            database_operations=[],
        ),
    ]
