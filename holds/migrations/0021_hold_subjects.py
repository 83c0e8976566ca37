"""Each item's subjects (what it acts on), stored for related holds and possible duplicates, and the admins' subject
keys; the subjects of every hold mirrored so far, by the rule sync now applies (``holds.related.stored.rows_of``)."""

import logging
from types import SimpleNamespace

import django.db.models.deletion
from django.db import migrations, models

BATCH = 1000
logger = logging.getLogger(__name__)


def fill_subjects(apps, schema_editor):
    """Store the subjects of every hold mirrored so far, a batch of holds at a time; a hold whose items cannot be read
    is left without, logged, and stops no other."""
    from holds.related import stored, subjects  # the rule sync applies, so old and new holds match alike

    Hold = apps.get_model("holds", "Hold")
    HoldItem = apps.get_model("holds", "HoldItem")
    HoldSubject = apps.get_model("holds", "HoldSubject")
    last_pk = 0
    while batch := list(
        Hold.objects.filter(pk__gt=last_pk).order_by("pk").values_list("pk", "agent", "capability")[:BATCH]
    ):
        items = {pk: [] for pk, _, _ in batch}
        for hold_pk, item_id, title, data in (
            HoldItem.objects.filter(hold_id__in=list(items))
            .order_by("hold_id", "position")
            .values_list("hold_id", "item_id", "title", "data")
        ):
            items[hold_pk].append(SimpleNamespace(id=item_id, title=title, data=data))
        rows = [
            HoldSubject(hold_id=pk, **row._asdict())
            for pk, agent, capability in batch
            for row in stored.rows_of(agent, capability, items[pk], subjects.NO_SETTINGS)
        ]
        HoldSubject.objects.bulk_create(rows, batch_size=2000)
        last_pk = batch[-1][0]


class Migration(migrations.Migration):
    dependencies = [
        ("holds", "0020_tail_and_reconciling_walk"),
    ]

    operations = [
        migrations.CreateModel(
            name="SubjectKeys",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("agent", models.CharField(max_length=500)),
                (
                    "capability",
                    models.CharField(blank=True, help_text="Blank: every capability of the agent.", max_length=500),
                ),
                (
                    "keys_added",
                    models.TextField(blank=True, help_text="Keys to read as subjects too, separated by commas."),
                ),
                (
                    "keys_removed",
                    models.TextField(
                        blank=True,
                        help_text="Keys never to read as subjects, separated by commas; “item id” stops reading item ids.",
                    ),
                ),
            ],
            options={
                "verbose_name": "subject keys",
                "verbose_name_plural": "subject keys",
                "constraints": [models.UniqueConstraint(fields=("agent", "capability"), name="subject_keys_once")],
            },
        ),
        migrations.CreateModel(
            name="HoldSubject",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("position", models.PositiveIntegerField(help_text="The item's position in its hold.")),
                ("key", models.TextField(help_text="The key as the agent wrote it, shown only.")),
                (
                    "value",
                    models.CharField(
                        help_text="Normalised: trimmed, case-folded, a leading # dropped.", max_length=200
                    ),
                ),
                ("capability", models.TextField(help_text="The hold's, cut to what an index holds.")),
                (
                    "action_kind",
                    models.CharField(blank=True, help_text="Blank when unknown: it matches any kind.", max_length=100),
                ),
                (
                    "hold",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="subjects", to="holds.hold"
                    ),
                ),
            ],
            options={
                "ordering": ["hold", "position", "pk"],
                "indexes": [models.Index(fields=["value", "capability"], name="subject_value_capability")],
            },
        ),
        migrations.RunPython(fill_subjects, migrations.RunPython.noop),
    ]
