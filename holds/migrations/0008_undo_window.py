"""The undo window: a decision waits before delivery and can be withdrawn."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("holds", "0007_presence")]

    operations = [
        migrations.AddField(
            model_name="decision",
            name="undo_until",
            field=models.DateTimeField(
                null=True, help_text="The end of the undo window: delivery starts no earlier. Null without a window."
            ),
        ),
        migrations.AddField(
            model_name="decision",
            name="delivery_started_at",
            field=models.DateTimeField(
                null=True,
                help_text="When the first delivery attempt took its lease; from then on it can no longer be withdrawn.",
            ),
        ),
        migrations.AlterField(
            model_name="decision",
            name="state",
            field=models.CharField(
                choices=[
                    ("sending", "Sending"),
                    ("applied", "Applied"),
                    ("not_applied", "Not applied"),
                    ("withdrawn", "Withdrawn"),
                ],
                default="sending",
                max_length=16,
            ),
        ),
        migrations.RemoveConstraint(model_name="decision", name="decision_one_live_per_hold"),
        migrations.AddConstraint(
            model_name="decision",
            constraint=models.UniqueConstraint(
                condition=models.Q(("state__in", ["not_applied", "withdrawn"]), _negated=True),
                fields=("hold",),
                name="decision_one_live_per_hold",
            ),
        ),
    ]
