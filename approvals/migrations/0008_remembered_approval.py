import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0007_remembered_total_and_amount_cap"),
        ("holds", "0020_tail_and_reconciling_walk"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="RememberedApproval",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("env", models.CharField(help_text="The env it approves holds of, as the hold's.", max_length=100)),
                ("agent", models.TextField(help_text="The agent it approves holds of, exactly.")),
                ("capability", models.TextField(help_text="The capability it approves holds of, exactly.")),
                (
                    "amount_at_most",
                    models.DecimalField(
                        decimal_places=4,
                        help_text="It approves holds each of whose items' amounts is at most this …",
                        max_digits=20,
                    ),
                ),
                (
                    "total_at_most",
                    models.DecimalField(
                        decimal_places=4,
                        help_text="… and whose amounts together are at most this: the remembered hold's total.",
                        max_digits=20,
                    ),
                ),
                (
                    "currency",
                    models.CharField(
                        blank=True, help_text="The currency every item must name, as that hold's did.", max_length=40
                    ),
                ),
                (
                    "daily_cap_count",
                    models.PositiveIntegerField(
                        blank=True,
                        help_text="At most this many holds approved a day (the allowance's when made).",
                        null=True,
                    ),
                ),
                (
                    "daily_cap_amount",
                    models.DecimalField(
                        blank=True,
                        decimal_places=4,
                        help_text="At most this sum of the amounts of the holds approved a day; blank: no cap on the sum.",
                        max_digits=20,
                        null=True,
                    ),
                ),
                (
                    "valid_until",
                    models.DateTimeField(blank=True, help_text="From then on it approves nothing.", null=True),
                ),
                (
                    "ended_at",
                    models.DateTimeField(
                        blank=True, help_text="When it was revoked or ended; blank: running.", null=True
                    ),
                ),
                (
                    "ended_reason",
                    models.CharField(blank=True, help_text='Why: "revoked by alice", "alice is away".', max_length=200),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        help_text="The reviewer who remembered the approval: it approves in their name.",
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="remembered_approvals",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "source_hold",
                    models.ForeignKey(
                        help_text="The hold whose approval was remembered.",
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="holds.hold",
                    ),
                ),
            ],
            options={"ordering": ["-pk"]},
        ),
        migrations.AddIndex(
            model_name="rememberedapproval",
            index=models.Index(
                condition=models.Q(("ended_at__isnull", True)), fields=["ended_at"], name="remembered_running"
            ),
        ),
        migrations.AddField(
            model_name="policydecision",
            name="remembered",
            field=models.ForeignKey(
                blank=True,
                help_text="The reviewer's remembered approval that decided, instead of a policy.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="decisions",
                to="approvals.rememberedapproval",
            ),
        ),
        migrations.AlterField(
            model_name="policydecision",
            name="decision",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="policy_decisions",
                to="holds.decision",
            ),
        ),
        migrations.AddIndex(
            model_name="policydecision",
            index=models.Index(fields=["remembered", "day"], name="policy_decision_remembered_day"),
        ),
        migrations.AddConstraint(
            model_name="policydecision",
            constraint=models.CheckConstraint(
                condition=models.Q(("policy__isnull", True), ("remembered__isnull", True), _connector="OR"),
                name="policy_decision_one_decider",
            ),
        ),
    ]
