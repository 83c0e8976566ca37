"""Every amount a hold carries now counts (any key spelling, nested one level, hundredths scaled), and a negative
one counts as the largest: store again the amount of every hold mirrored so far, by the rule sync now applies
(``holds.mirror.amounts.largest``)."""

import importlib

from django.db import migrations


def refill_amounts(apps, schema_editor):
    importlib.import_module("holds.migrations.0009_queue_amount").fill_amounts(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("holds", "0018_first_opened")]

    operations = [migrations.RunPython(refill_amounts, migrations.RunPython.noop)]
