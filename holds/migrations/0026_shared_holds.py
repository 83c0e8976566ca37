"""The holds sharing a subject with another hold, which the queue looks at alone for possible duplicates; marked for
the open holds mirrored so far (``holds.related.sharing.mark_unmarked``), as beat's sweep would within the hour."""

import django.db.models.deletion
from django.db import migrations, models


def mark_open_holds(apps, schema_editor):
    from holds.related.sharing import mark_unmarked  # the rule every writer of subjects applies

    mark_unmarked(
        apps.get_model("holds", "Hold"), apps.get_model("holds", "HoldSubject"), apps.get_model("holds", "SharedHold")
    )


class Migration(migrations.Migration):
    dependencies = [
        ("holds", "0025_subjects_without_constraint"),
    ]

    operations = [
        migrations.CreateModel(
            name="SharedHold",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "hold",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="holds.hold",
                    ),
                ),
            ],
        ),
        migrations.RunPython(mark_open_holds, migrations.RunPython.noop),
    ]
