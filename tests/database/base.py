"""PostgreSQL as Django's backend has it, with a cheaper flush between transactional tests that keeps what
migrating wrote.

After every transactional test (``django_db(transaction=True)``) Django empties the test database with one
``TRUNCATE`` of every table. A truncate gives each table and each of its indexes new files, so it costs the same
whether a table holds a few rows or none: over the suite, that was most of the transactional tests' teardown.
Deleting the few rows is far cheaper. The deletes run with ``session_replication_role`` set to ``replica`` for
the flush's transaction alone, so that neither foreign keys (the order of the deletes) nor the add-only triggers
of the audit and of notes (which refuse a ``DELETE``, not a ``TRUNCATE``) stand in the way: the suite's
PostgreSQL user is a superuser.

The flush keeps the rows that migrating wrote: the content types and permissions, and the role groups of
``holds/migrations/0002_roles.py``. So every test, whatever ran before it on its pytest-xdist worker, starts from
the database as migrated, where a truncate left the roles gone for the tests after it.
"""

import time

from django.db import OperationalError
from django.db.backends.postgresql import base, operations

from reviewqueue import roles

FLUSH_ATTEMPTS = 3
KEPT_TABLES = {"django_content_type", "auth_permission"}
KEPT_ROWS = {"auth_group": f"name IN ('{roles.REVIEWERS}', '{roles.AUDITORS}')"}


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if not tables or reset_sequences:
            return super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        deletes = [
            f"DELETE FROM {self.quote_name(table)}" + (f" WHERE NOT ({KEPT_ROWS[table]})" if table in KEPT_ROWS else "")
            for table in tables
            if table not in KEPT_TABLES
        ]
        return ["SET LOCAL session_replication_role = replica", *deletes]

    def execute_sql_flush(self, sql_list):
        """Flush, and again should the flush lose a deadlock: a live server's thread may still be answering a page
        the test left (a heartbeat claiming a hold) while the rows go, and PostgreSQL then cancels one of the two."""
        for attempt in range(FLUSH_ATTEMPTS):
            try:
                return super().execute_sql_flush(sql_list)
            except OperationalError as error:
                if "deadlock detected" not in str(error) or attempt == FLUSH_ATTEMPTS - 1:
                    raise
                time.sleep(0.2)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
