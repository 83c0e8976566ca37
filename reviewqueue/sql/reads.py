"""Reads written out in SQL, where building them through the ORM cost a page more than running them.

Each function's docstring is its contract: what it reads, and what it returns in which form.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import connection

from reviewqueue.sql import prepared


def groups_with_scopes(user_pks: set[int], scope_table: str) -> list[tuple]:
    """The users' groups as (user pk, group name, scope pk, env patterns, agent patterns, capability patterns): one
    row per user, group and team scope of that group, the scope's four values None for a group without one; in no
    particular order. ``scope_table`` is the team scopes' table (``teams`` passes it: this layer knows no app).
    Prepared (reviewqueue/sql/prepared.py) for one user, a page's viewer, as every page asks; each other number of
    users would be another statement, so those run unprepared."""
    if not user_pks:
        return []
    groups = get_user_model()._meta.get_field("groups")
    membership = groups.remote_field.through._meta.db_table
    group = groups.related_model._meta.db_table
    with prepared.cursor() if len(user_pks) == 1 else connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.{groups.m2m_column_name()}, g.name, s.id, s.env_patterns, s.agent_patterns,"
            f" s.capability_patterns FROM {group} g JOIN {membership} m ON m.{groups.m2m_reverse_name()} = g.id"
            f" LEFT JOIN {scope_table} s ON s.group_id = g.id"
            f" WHERE m.{groups.m2m_column_name()} IN ({', '.join(['%s'] * len(user_pks))})",
            sorted(user_pks),
        )
        return cursor.fetchall()


def database_answers() -> None:
    """Ask the database the least it can answer (``SELECT 1``); raises Django's ``DatabaseError`` when it cannot."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
