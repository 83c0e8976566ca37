"""Notifications resolve themselves when their hold is decided, expired or cancelled."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("notifications", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="notification",
            name="resolved_at",
            field=models.DateTimeField(
                blank=True,
                null=True,
                help_text="When what it is about stopped needing anyone (see notify.resolve_for_holds).",
            ),
        ),
        migrations.AddField(
            model_name="notification",
            name="resolved_reason",
            field=models.CharField(blank=True, help_text='E.g. "decided by Alice Adams".', max_length=300),
        ),
        migrations.AlterField(
            model_name="notification",
            name="status",
            field=models.CharField(
                choices=[
                    ("pending", "Pending"),
                    ("sending", "Sending"),
                    ("sent", "Sent"),
                    ("failed", "Failed"),
                    ("resolved", "Not sent: resolved first"),
                ],
                default="pending",
                max_length=10,
            ),
        ),
    ]
