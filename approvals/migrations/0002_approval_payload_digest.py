"""Approvals remember the hold's payload digest, so that a round approved before the platform changed the hold is over."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="approval",
            name="payload_digest",
            # Approvals given before: "" matches no hold's digest, so their open rounds end.
            field=models.CharField(
                default="",
                help_text="The hold's payload digest when approved: once the platform changes the hold, the round is over.",
                max_length=64,
            ),
            preserve_default=False,
        ),
    ]
