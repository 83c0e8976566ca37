"""The filters' values are kept as an env, agent and capability together, so that team scopes can narrow them."""

import uuid

from django.db import migrations, models

LONGEST_FILTER_VALUE = 200  # holds.queue.listing's at the time of writing


def seed_combinations(apps, schema_editor):
    Hold = apps.get_model("holds", "Hold")
    FilterValue = apps.get_model("holds", "FilterValue")
    SyncState = apps.get_model("holds", "SyncState")
    combinations = Hold.objects.filter(status="open").values_list("env", "agent", "capability").distinct().order_by()
    offerable = {
        (env, *(value if len(value) <= LONGEST_FILTER_VALUE else "" for value in (agent, capability)))
        for env, agent, capability in combinations
    }
    FilterValue.objects.bulk_create(
        [FilterValue(env=env, agent=agent, capability=capability) for env, agent, capability in sorted(offerable)],
        ignore_conflicts=True,
    )
    for state in SyncState.objects.all():  # a new cache key: the cached choices had the old shape
        SyncState.objects.filter(pk=state.pk).update(filter_values_version=str(uuid.uuid4()))


class Migration(migrations.Migration):
    dependencies = [("holds", "0012_sync_filter_values_version")]

    operations = [
        migrations.RemoveConstraint(model_name="filtervalue", name="filter_value_once"),
        migrations.RunSQL("DELETE FROM holds_filtervalue", migrations.RunSQL.noop),
        migrations.RemoveField(model_name="filtervalue", name="kind"),
        migrations.RemoveField(model_name="filtervalue", name="value"),
        migrations.AddField(
            model_name="filtervalue",
            name="agent",
            field=models.TextField(blank=True, default=""),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="filtervalue",
            name="capability",
            field=models.TextField(blank=True, default=""),
            preserve_default=False,
        ),
        migrations.AddConstraint(
            model_name="filtervalue",
            constraint=models.UniqueConstraint(fields=("env", "agent", "capability"), name="filter_combination_once"),
        ),
        migrations.RunPython(seed_combinations, migrations.RunPython.noop),
    ]
