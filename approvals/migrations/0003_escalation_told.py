"""An escalation records how many of its group's members could see the hold and were told."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0002_approval_payload_digest"),
    ]

    operations = [
        migrations.AddField(
            model_name="escalation",
            name="told",
            # Escalations made before were not counted: null, and the page says nothing of it.
            field=models.PositiveIntegerField(
                help_text="How many of the group's members could see the hold and were told; 0: nobody could be.",
                null=True,
            ),
        ),
    ]
