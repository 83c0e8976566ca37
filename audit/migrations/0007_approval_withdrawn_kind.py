"""Taking one's approval back is its own audit event, and the audit list opens on it with the decisions."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0006_approval_and_escalation_kinds"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="auditevent",
            name="audit_decisions_at",
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="kind",
            field=models.CharField(
                choices=[
                    ("hold_seen", "Hold first seen"),
                    ("claimed", "Claimed"),
                    ("released", "Released"),
                    ("taken_over", "Taken over"),
                    ("decision_submitted", "Decision submitted"),
                    ("approval_given", "Approval given"),
                    ("escalated", "Escalated"),
                    ("withdrawn", "Decision withdrawn"),
                    ("approval_withdrawn", "Approval taken back"),
                    ("delivery_attempt", "Delivery attempt"),
                    ("applied", "Applied"),
                    ("not_applied", "Not applied"),
                    ("expired", "Hold expired"),
                    ("decided_elsewhere", "Decided elsewhere"),
                    ("notification_sent", "Notification sent"),
                    ("notification_failed", "Notification failed"),
                    ("signed_in", "Signed in"),
                    ("sign_in_failed", "Sign-in failed"),
                    ("locked_out", "Locked out of signing in"),
                    ("role_changed", "Role changed"),
                    ("setting_changed", "Setting changed"),
                ],
                max_length=32,
            ),
        ),
        migrations.AddIndex(
            model_name="auditevent",
            index=models.Index(
                condition=models.Q(
                    (
                        "kind__in",
                        (
                            "approval_given",
                            "escalated",
                            "decision_submitted",
                            "withdrawn",
                            "approval_withdrawn",
                            "applied",
                            "not_applied",
                            "expired",
                            "decided_elsewhere",
                        ),
                    )
                ),
                fields=["-at", "-sequence"],
                name="audit_decisions_at",
            ),
        ),
    ]
