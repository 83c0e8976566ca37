"""PostgreSQL as Django's backend has it, but with a test's flush that deletes rows instead of truncating tables.

After every transactional test (``django_db(transaction=True)``) Django empties the test database with one
``TRUNCATE`` of every table. A truncate gives each table and each of its indexes new files, so it costs the same
whether the tables hold a row or none: over the suite's transactional tests, that is most of their teardown.
Deleting the rows of a table that holds a few is far cheaper. It runs with ``session_replication_role`` set to
``replica`` for the flush's transaction alone, so that neither foreign keys (the order of the deletes) nor the
add-only triggers of the audit and of notes (which refuse a ``DELETE``, not a ``TRUNCATE``) stand in its way: the
test database's owner is a superuser, as the suite's PostgreSQL runs it. A flush that must also restart the
sequences (``reset_sequences``) keeps Django's ``TRUNCATE … RESTART IDENTITY``.
"""

from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if not tables or reset_sequences:
            return super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return [
            "SET LOCAL session_replication_role = replica",
            *(f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))}" for table in tables),
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
