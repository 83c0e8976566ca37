"""Changing audit rows behind the app's back."""

from django.db import connection


def tamper(sql: str, params=()) -> None:
    """Change audit rows the way an attacker with database access would: with the guarding trigger off."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's open transaction has deferred FK checks pending
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER audit_event_append_only")
        cursor.execute(sql, params)
        cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER audit_event_append_only")
