"""Moving a database between migrations, for the tests of data migrations.

A test of a migration's data starts on a new database migrated from nothing to the migrations before it
(``from_nothing``), or moves the suite's database back (``migrate`` to ``back_to``'s targets) where it writes rows
at the latest migrations first. Moving back costs several times as much: Django renders every model of each state
it unapplies.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.sql import emit_post_migrate_signal
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.helpers.template_database import create_database, drop_database


def latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def back_to(*targets: tuple[str, str | None]) -> list[tuple[str, str | None]]:
    """``targets``, every other app at its latest, except those built on a later migration of a target's app:
    they are unapplied (their migrations need what the targets undo)."""
    graph = MigrationExecutor(connection).loader.graph
    undone = set()
    for app, name in targets:
        kept = set(graph.forwards_plan((app, name))) if name else set()
        undone |= {node for node in graph.nodes if node[0] == app and node not in kept}
    apps = {app for app, _ in targets}
    plan = list(targets)
    for node in latest():
        if node[0] in apps:
            continue
        built_on_undone = any(set(graph.forwards_plan(own)) & undone for own in graph.nodes if own[0] == node[0])
        plan.append((node[0], None) if built_on_undone else node)
    return plan


class ModelsAt:
    """The models as they are at some migrations, worked out when a test first asks for one: every model rendered
    again costs a second or two, and most moves (back to the latest) ask for none."""

    def __init__(self, loader, nodes: list[tuple[str, str]]):
        self._loader, self._nodes, self._apps = loader, nodes, None

    def apps(self):
        if self._apps is None:
            self._apps = self._loader.project_state(self._nodes).apps
        return self._apps

    def get_model(self, app_label: str, model_name: str):
        return self.apps().get_model(app_label, model_name)


def migrate(targets) -> ModelsAt:
    """Migrate the test database to ``targets``; return the models as they are there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return ModelsAt(executor.loader, [node for node in targets if node[1] is not None])


@contextmanager
def from_nothing(targets) -> Iterator[ModelsAt]:
    """For the block's while, the default connection on a new database migrated from nothing to ``targets``, with the
    content types and permissions ``manage.py migrate`` would have made there; the models as they are there. The
    database is dropped after, and the suite's own never leaves its latest migrations. For a test marked
    ``django_db(transaction=True)``: the connection is closed, which no open transaction may span."""
    settings = connection.settings_dict
    suite_database, name = settings["NAME"], f"{settings['NAME']}_migrating"
    server = os.environ["DATABASE_URL"].rpartition("/")[0]
    drop_database(server, name)
    create_database(server, name, template="template0")
    connection.close()
    settings["NAME"] = name
    try:
        old = migrate(targets)
        emit_post_migrate_signal(0, False, connection.alias, apps=old.apps(), plan=[])
        yield old
    finally:
        connection.close()
        settings["NAME"] = suite_database
        drop_database(server, name)


def bare_hold(holds, hold_id: str, **fields):
    """A hold made with the model ``holds`` (a migration state's, or today's): the fields every hold has had since the
    first migration, at plain values, and ``fields`` over them."""
    now = timezone.now()
    plain = {
        "env": "default",
        "hold_id": hold_id,
        "run_id": "r_1",
        "agent": "support-agno",
        "capability": "support",
        "question": "?",
        "created_at": now,
        "first_seen_at": now,
        "last_synced_at": now,
        "payload": {},
        "payload_digest": "0" * 64,
    }
    return holds.objects.create(**(plain | fields))
