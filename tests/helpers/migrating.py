"""Moving the test database between migrations, for the tests of data migrations."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


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


def migrate(targets):
    """Migrate the test database to ``targets``; return the models as they are there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state([node for node in targets if node[1] is not None]).apps
