"""Assignments and notes: a hold handed to a person or a group; notes between reviewers, added and never changed.

PostgreSQL refuses UPDATE and DELETE of a note with a trigger, as the audit trail's (audit 0002);
SQLite with triggers that abort them.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

TABLE = "holds_note"

POSTGRES_ADD_ONLY = f"""
CREATE FUNCTION holds_note_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'notes are added, never changed: % refused; add a new note instead', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER holds_note_add_only BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION holds_note_refuse_change();
"""
POSTGRES_DROP = f"""
DROP TRIGGER IF EXISTS holds_note_add_only ON {TABLE};
DROP FUNCTION IF EXISTS holds_note_refuse_change();
"""
SQLITE_ADD_ONLY = [
    f"CREATE TRIGGER holds_note_no_{operation.lower()} BEFORE {operation} ON {TABLE} "
    f"BEGIN SELECT RAISE(ABORT, 'notes are added, never changed: {operation} refused'); END"
    for operation in ("UPDATE", "DELETE")
]
SQLITE_DROP = ["DROP TRIGGER IF EXISTS holds_note_no_update", "DROP TRIGGER IF EXISTS holds_note_no_delete"]


def add_only(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for statement in {"postgresql": [POSTGRES_ADD_ONLY], "sqlite": SQLITE_ADD_ONLY}.get(vendor, []):
        schema_editor.execute(statement, params=None)  # no params: the body's "%" stays as written


def drop_add_only(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for statement in {"postgresql": [POSTGRES_DROP], "sqlite": SQLITE_DROP}.get(vendor, []):
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("holds", "0016_action_link_use"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Assignment",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("note", models.TextField(blank=True)),
                ("assigned_at", models.DateTimeField()),
                (
                    "ended_at",
                    models.DateTimeField(blank=True, help_text="When it was reassigned or unassigned.", null=True),
                ),
                (
                    "assigned_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "ended_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "group",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="assignments",
                        to="auth.group",
                    ),
                ),
                (
                    "hold",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="assignments", to="holds.hold"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="assignments",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        condition=models.Q(("ended_at__isnull", True)), fields=["user"], name="assignment_current_user"
                    ),
                    models.Index(
                        condition=models.Q(("ended_at__isnull", True)),
                        fields=["group"],
                        name="assignment_current_group",
                    ),
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("group__isnull", True), ("user__isnull", False)),
                            models.Q(("group__isnull", False), ("user__isnull", True)),
                            _connector="OR",
                        ),
                        name="assignment_to_a_person_or_a_group",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("ended_at__isnull", True)), fields=("hold",), name="assignment_current_once"
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Note",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("text", models.TextField()),
                ("created_at", models.DateTimeField()),
                (
                    "author",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "hold",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="notes", to="holds.hold"
                    ),
                ),
                (
                    "mentioned",
                    models.ManyToManyField(
                        blank=True,
                        help_text="Those its @mentions told: people who could see the hold.",
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["hold", "created_at", "pk"],
                "indexes": [models.Index(fields=["hold", "created_at"], name="note_thread")],
            },
        ),
        migrations.RunPython(add_only, drop_add_only),
    ]
