from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0009_remembered_approvals_from_policies"),
    ]

    operations = [
        migrations.RemoveField(model_name="approvalpolicy", name="ended_at"),
        migrations.RemoveField(model_name="approvalpolicy", name="ended_reason"),
        migrations.RemoveField(model_name="approvalpolicy", name="remembered_amount"),
        migrations.RemoveField(model_name="approvalpolicy", name="remembered_by"),
        migrations.RemoveField(model_name="approvalpolicy", name="remembered_currency"),
        migrations.RemoveField(model_name="approvalpolicy", name="remembered_from"),
        migrations.RemoveField(model_name="approvalpolicy", name="remembered_total"),
    ]
