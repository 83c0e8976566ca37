"""The queue sorts and filters by a hold's amount: the column, its indexes, and the amounts of the holds already mirrored."""

from django.db import migrations, models
from django.db.models import F, Q

BATCH = 1000


def fill_amounts(apps, schema_editor):
    """Give every hold mirrored so far the amount sync now stores, a batch of holds at a time."""
    from holds.mirror.amounts import largest  # the rule sync applies, so old and new holds sort alike

    Hold = apps.get_model("holds", "Hold")
    HoldItem = apps.get_model("holds", "HoldItem")
    last_pk = 0
    while batch := list(Hold.objects.filter(pk__gt=last_pk).order_by("pk").values_list("pk", flat=True)[:BATCH]):
        data_by_hold = {pk: [] for pk in batch}
        for hold_pk, data in HoldItem.objects.filter(hold_id__in=batch).values_list("hold_id", "data"):
            data_by_hold[hold_pk].append(data)
        Hold.objects.bulk_update(
            [Hold(pk=pk, amount=largest(item_data)) for pk, item_data in data_by_hold.items() if item_data],
            ["amount"],
        )
        last_pk = batch[-1]


class Migration(migrations.Migration):
    dependencies = [("holds", "0008_undo_window")]

    operations = [
        migrations.AddField(
            model_name="hold",
            name="amount",
            field=models.DecimalField(
                decimal_places=4,
                max_digits=20,
                null=True,
                help_text="The largest amount its items carry (see holds/mirror/amounts.py), for the queue's order and filter.",
            ),
        ),
        migrations.AddIndex(
            model_name="hold",
            index=models.Index(condition=Q(status="open"), fields=["created_at", "id"], name="hold_queue_oldest"),
        ),
        migrations.AddIndex(
            model_name="hold",
            index=models.Index(
                F("amount") * -1, F("created_at"), F("id"), condition=Q(status="open"), name="hold_queue_largest"
            ),
        ),
        migrations.RunPython(fill_amounts, migrations.RunPython.noop),
    ]
