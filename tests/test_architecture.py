"""The imports run one way: these tests read the source, so a cycle fails here before it grows."""

import ast
import re
from pathlib import Path

from django.conf import settings

from holds.deciding import decisions
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


def models_looked_up(path: Path) -> set[str]:
    """The apps whose models a module reaches by label, ``apps.get_model("teams", …)`` or ``("teams.TeamScope")``,
    as ``teams.models``: an import the import statements do not show."""
    return {
        f"{node.args[0].value.split('.')[0]}.models"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "get_model"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def layers() -> list[set[str]]:
    """The README's order of the apps, lowest first, written once there: each step a set of peers."""
    order = re.search(r"The apps are layers, lowest first: (.+?)\.\s", (ROOT / "README.md").read_text(), re.DOTALL)
    assert order, "the README's layout no longer orders the apps"
    return [set(re.findall(r"`(\w+)`", step)) for step in order.group(1).split("→")]


def test_the_readme_places_every_app_in_one_layer():
    """A new app must be given its place in the order before it can import anything."""
    placed = [app for layer in layers() for app in layer]
    apps = {path.parent.name for path in ROOT.glob("*/apps.py")} - {"simulator"}

    assert sorted(placed) == sorted(apps | {"reviewqueue"})


def test_apps_import_only_lower_apps_beyond_their_models():
    """Between two apps, imports beyond models run one way: a lower app tells a higher one by a signal or a callback.

    ``get_model`` lookups count as imports; ``reviewqueue``, the lowest, imports no app at all, models neither.
    """
    order = layers()
    found = {}
    for height, layer in enumerate(order):
        above = {app for higher in order[height:] for app in higher}
        for app in layer:
            for path in modules_in(app):
                names = imported_modules(path) | models_looked_up(path)
                forbidden = {
                    name
                    for name in names
                    if name.split(".")[0] in above - {app}
                    and (app == "reviewqueue" or name.split(".")[1:2] != ["models"])
                }
                if forbidden:
                    found[str(path.relative_to(ROOT))] = sorted(forbidden)

    assert found == {}


def test_the_simulator_and_the_apps_import_nothing_of_each_other():
    """The simulator stands for the platform: a program apart, speaking to the app only over HTTP."""
    apps = {app for layer in layers() for app in layer}
    found = {
        str(path.relative_to(ROOT)): sorted(names)
        for package, others in [("simulator", apps), *((app, {"simulator"}) for app in apps)]
        for path in modules_in(package)
        if (names := {name for name in imported_modules(path) | models_looked_up(path) if name.split(".")[0] in others})
    }

    assert found == {}


def test_every_process_level_cache_is_registered_for_the_tests_to_forget():
    """A ``functools`` cache outside ``reviewqueue/processcache.py`` would keep one test's answers for the next."""
    found = {
        str(path.relative_to(ROOT)): lines
        for layer in layers()
        for app in layer
        for path in modules_in(app)
        if path != ROOT / "reviewqueue" / "processcache.py"
        and (lines := sorted(node.lineno for node in ast.walk(ast.parse(path.read_text())) if _functools_cache(node)))
    }

    assert found == {}


def _functools_cache(node: ast.AST) -> bool:
    """``functools.cache`` or ``functools.lru_cache``, or either imported by name."""
    names = {"cache", "lru_cache"}
    if isinstance(node, ast.Attribute):
        return node.attr in names and isinstance(node.value, ast.Name) and node.value.id == "functools"
    return isinstance(node, ast.ImportFrom) and node.module == "functools" and any(a.name in names for a in node.names)


def test_hand_written_sql_runs_only_in_the_sql_modules():
    """A cursor, ``raw`` or ``RawSQL`` anywhere but ``reviewqueue/sql/`` would be SQL with no contract beside it."""
    sql_modules = ROOT / "reviewqueue" / "sql"
    found = {
        str(path.relative_to(ROOT)): lines
        for layer in layers()
        for app in layer
        for path in modules_in(app)
        if sql_modules not in path.parents
        and (lines := sorted(node.lineno for node in ast.walk(ast.parse(path.read_text())) if _runs_sql(node)))
    }

    assert found == {}


def _runs_sql(node: ast.AST) -> bool:
    """A database cursor opened (``.cursor()``, no arguments: ``readers.cursor`` reads page cursors), ``.raw(…)``
    or ``.execute(…)`` called, or ``RawSQL`` used."""
    if isinstance(node, ast.Name) and node.id == "RawSQL":
        return True
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    return node.func.attr in {"raw", "execute", "executemany"} or (node.func.attr == "cursor" and not node.args)


def test_no_module_hangs_private_state_on_a_user():
    """Who is asking travels as a viewer (``reviewqueue/viewer.py``): a private attribute set on a user object would
    make an answer depend on which copy of the user a caller holds. Its own fields a module may set, and save."""
    found = {
        str(path.relative_to(ROOT)): lines
        for layer in layers()
        for app in layer
        for path in modules_in(app)
        if (
            lines := sorted(
                node.lineno
                for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and node.attr.startswith("_")
                and isinstance(node.value, ast.Name)
                and "user" in node.value.id
            )
        )
    }

    assert found == {}


def test_the_edit_rules_do_not_import_the_editing_fields():
    """Editing reads the fields and asks the rules about plain JSON values; the rules know nothing of fields."""
    assert imports_of(ROOT / "holds" / "deciding" / "rules.py", "holds.deciding.editing") == set()


def test_only_the_tasks_modules_import_a_tasks_module():
    """Domain code queues work by task name through ``reviewqueue/queueing.py``; the tasks modules import the domain."""
    found = {
        str(path.relative_to(ROOT)): sorted(tasks)
        for layer in layers()
        for app in layer
        for path in modules_in(app)
        if path.name != "tasks.py"
        and (tasks := {name for name in imported_modules(path) if "tasks" in name.split(".")})
    }

    assert found == {}


def test_every_task_queued_or_scheduled_by_name_exists():
    """Queued and scheduled by name, a task renamed or moved must fail here, not pile up unknown at the workers."""
    celery_app.loader.import_default_modules()  # the tasks modules, as a worker imports them
    named = {decisions.DELIVERY_TASK, sending.SEND_TASK} | {
        entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }

    assert named - set(celery_app.tasks) == set()


def test_modules_under_tests_import_no_conftest_and_no_test_module():
    """Fixtures come from conftest.py by name and helpers from ``tests.helpers``: importing either kind of module
    would run its fixtures or tests twice and tie one test file to another's insides."""
    found = {
        str(path.relative_to(ROOT)): sorted(names)
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if "node_modules" not in path.parts
        and (
            names := {
                name
                for name in imported_modules(path)
                if any(part == "conftest" or part.startswith("test_") for part in name.split("."))
            }
        )
    }

    assert found == {}


def test_every_folder_of_tests_is_a_package():
    """Without ``__init__.py`` pytest would put ``tests/`` itself on ``sys.path``, and ``tests/audit`` would stand in
    for the ``audit`` app."""
    folders = {path.parent for path in (ROOT / "tests").rglob("*.py") if "node_modules" not in path.parts}

    assert sorted(str(folder.relative_to(ROOT)) for folder in folders if not (folder / "__init__.py").exists()) == []
