"""Whether each subject's item was approved, as the platform reports its hold decided, for the queue's possible
duplicates; filled for the holds decided so far (``holds.related.stored.approved_positions``)."""

from types import SimpleNamespace

from django.db import migrations, models

BATCH = 1000


def fill_approved(apps, schema_editor):
    """Mark the approved items' subjects of every decided hold with subjects, a batch of holds at a time."""
    from holds.related.stored import approved_positions  # the rule sync applies

    Hold = apps.get_model("holds", "Hold")
    HoldItem = apps.get_model("holds", "HoldItem")
    HoldSubject = apps.get_model("holds", "HoldSubject")
    decided = Hold.objects.filter(status="decided", subjects__isnull=False).distinct()
    last_pk = 0
    while batch := list(
        decided.filter(pk__gt=last_pk).order_by("pk").values_list("pk", "status", "platform_decision")[:BATCH]
    ):
        items = {pk: [] for pk, _, _ in batch}
        rows = HoldItem.objects.filter(hold_id__in=list(items)).order_by("hold_id", "position")
        for hold_pk, item_id in rows.values_list("hold_id", "item_id"):
            items[hold_pk].append(SimpleNamespace(id=item_id))
        for pk, status, decision in batch:
            positions = approved_positions(status, items[pk], decision)
            if positions:
                HoldSubject.objects.filter(hold_id=pk, position__in=positions).update(approved=True)
        last_pk = batch[-1][0]


class Migration(migrations.Migration):
    dependencies = [("holds", "0021_hold_subjects")]

    operations = [
        migrations.AddField(
            model_name="holdsubject",
            name="approved",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="The item approved, as the platform reports the hold decided (every item, when it reports a"
                " decision but not item by item).",
            ),
        ),
        migrations.RunPython(fill_approved, migrations.RunPython.noop),
    ]
