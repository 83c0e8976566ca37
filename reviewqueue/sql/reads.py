"""Reads written out in SQL, where building them through the ORM cost a page more than running them.

Each function's docstring is its contract: what it reads, and what it returns in which form.
"""

from __future__ import annotations

from django.apps import apps
from django.db import connection

from reviewqueue.sql import prepared


def groups_with_scopes(user) -> list[tuple]:
    """The user's groups as (name, scope pk, env patterns, agent patterns, capability patterns): one row per group and
    team scope of it, the scope's four values None for a group without one; in no particular order. Prepared
    (reviewqueue/sql/prepared.py): every page asks."""
    groups = user._meta.get_field("groups")
    membership = groups.remote_field.through._meta.db_table
    group = groups.related_model._meta.db_table
    scope = apps.get_model("teams", "TeamScope")._meta.db_table
    with prepared.cursor() as cursor:
        cursor.execute(
            f"SELECT g.name, s.id, s.env_patterns, s.agent_patterns, s.capability_patterns FROM {group} g"
            f" JOIN {membership} m ON m.{groups.m2m_reverse_name()} = g.id LEFT JOIN {scope} s ON s.group_id = g.id"
            f" WHERE m.{groups.m2m_column_name()} = %s",
            [user.pk],
        )
        return cursor.fetchall()


def database_answers() -> None:
    """Ask the database the least it can answer (``SELECT 1``); raises Django's ``DatabaseError`` when it cannot."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
