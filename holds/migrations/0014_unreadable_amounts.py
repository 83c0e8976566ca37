"""Amounts written unusually ("1,500.00", "$1500.00") are now read, and an unreadable one counts as the largest:
store again the amount of every hold mirrored so far, by the rule sync now applies (``holds.mirror.amounts.largest``)."""

import importlib

from django.db import migrations


def refill_amounts(apps, schema_editor):
    importlib.import_module("holds.migrations.0009_queue_amount").fill_amounts(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("holds", "0013_filter_value_combinations")]

    operations = [migrations.RunPython(refill_amounts, migrations.RunPython.noop)]
