"""The imports run one way: these tests read the source, so a cycle fails here before it grows."""

import ast
from pathlib import Path

from django.conf import settings

from holds import decisions
from notifications import sending
from reviewqueue.celery import app as celery_app

ROOT = Path(__file__).resolve().parent.parent


def modules_in(package: str) -> list[Path]:
    """Every Python module of a package, its subpackages included, migrations left out (Django writes those)."""
    return sorted(path for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts)


def imported_modules(path: Path) -> set[str]:
    """The dotted names a module imports anywhere in it, inside functions too; ``from a import b`` counts as ``a.b``."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = ".".join(part for part in (parent, base) if part)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def imports_of(path: Path, package: str) -> set[str]:
    """What ``path`` imports from ``package``, as dotted names."""
    return {name for name in imported_modules(path) if name == package or name.startswith(f"{package}.")}


def test_audit_imports_nothing_of_the_other_apps_but_their_models():
    """Holds records through ``audit.events``; audit only looks their rows up, so the apps never import in a circle."""
    found = {
        str(path.relative_to(ROOT)): sorted(forbidden)
        for path in modules_in("audit")
        if (
            forbidden := {
                name
                for app in ("holds", "notifications")
                for name in imports_of(path, app)
                if name != f"{app}.models" and not name.startswith(f"{app}.models.")
            }
        )
    }

    assert found == {}


def test_the_edit_rules_do_not_import_the_editing_fields():
    """Editing reads the fields and asks the rules about plain JSON values; the rules know nothing of fields."""
    assert imports_of(ROOT / "holds" / "rules.py", "holds.editing") == set()


def test_the_project_package_imports_no_app():
    """``reviewqueue`` holds what every app shares (roles, readers, agent JSON); importing an app would make a cycle."""
    apps = {"holds", "audit", "notifications"}
    found = {
        str(path.relative_to(ROOT)): sorted(forbidden)
        for path in modules_in("reviewqueue")
        if (forbidden := {name for name in imported_modules(path) if name.split(".")[0] in apps})
    }

    assert found == {}


def test_only_the_tasks_modules_import_a_tasks_module():
    """Domain code queues work by task name through ``holds/queueing.py``; the tasks modules import the domain."""
    found = {
        str(path.relative_to(ROOT)): sorted(tasks)
        for app in ("holds", "notifications")
        for path in modules_in(app)
        if path.name != "tasks.py"
        and (tasks := {name for name in imported_modules(path) if "tasks" in name.split(".")})
    }

    assert found == {}


def test_every_task_queued_or_scheduled_by_name_exists():
    """Queued and scheduled by name, a task renamed or moved must fail here, not pile up unknown at the workers."""
    celery_app.loader.import_default_modules()  # the tasks modules, as a worker imports them
    named = {decisions.DELIVERY_TASK, sending.SEND_TASK} | {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}

    assert named - set(celery_app.tasks) == set()


def test_handing_holds_over_tells_notifications_by_signal_and_imports_none_of_it():
    """Holds sits below notifications: assignments and notes announce themselves through ``holds.handoff_signals``."""
    found = {
        name: sorted(imports_of(ROOT / "holds" / name, "notifications") | imports_of(ROOT / "holds" / name, "approvals"))
        for name in ("assignments.py", "notes.py", "handoff_signals.py")
    }

    assert found == {name: [] for name in found}
