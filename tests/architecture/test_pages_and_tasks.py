"""An app's pages and tasks are on top of it: no other app nor the domain imports them, and every task queued or
scheduled by name exists."""

from pathlib import Path

from django.conf import settings

from holds.deciding import delivery
from notifications import sending
from reviewqueue.celery import app as celery_app
from tests.architecture.source import ROOT, app_modules, import_graph, imported_modules, layers, module_name, modules_in


def test_only_the_tasks_modules_import_a_tasks_module():
    """Domain code queues work by task name through ``reviewqueue/queueing.py``; the tasks modules import the domain."""
    found = {
        str(path.relative_to(ROOT)): sorted(tasks)
        for path in app_modules()
        if path.name != "tasks.py"
        and (tasks := {name for name in imported_modules(path) if "tasks" in name.split(".")})
    }

    assert found == {}


def is_pages_or_tasks(path: Path) -> bool:
    """A module on top of its app by its name: its pages (in a ``pages`` package, ``views.py`` or ``…_views.py``, as the
    one-tap links' are) or its Celery tasks (``tasks.py``)."""
    return "pages" in path.parent.parts or path.name in {"views.py", "tasks.py"} or path.name.endswith("_views.py")


def test_no_app_imports_another_apps_pages_or_tasks():
    """An app's pages and tasks are on top of it: besides each other, only its ``urls.py`` and ``apps.py`` (and
    Celery, by name) reach them. Another app asks the module below them, where the rule lives, and queues a task by
    its name through ``reviewqueue/queueing.py``."""
    apps = sorted({app for layer in layers() for app in layer})
    paths = {module_name(path): path for app in apps for path in modules_in(app)}
    graph = import_graph(*apps)
    found = {
        (importer, imported)
        for importer, targets in graph.items()
        for imported in targets
        if importer.split(".")[0] != imported.split(".")[0]
        and paths[importer].name not in {"urls.py", "apps.py"}
        and is_pages_or_tasks(paths[imported])
    }

    assert sorted(found) == []


def test_every_task_queued_or_scheduled_by_name_exists():
    """Queued and scheduled by name, a task renamed or moved must fail here, not pile up unknown at the workers."""
    celery_app.loader.import_default_modules()  # the tasks modules, as a worker imports them
    named = {delivery.DELIVERY_TASK, sending.SEND_TASK} | {
        entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }

    assert named - set(celery_app.tasks) == set()
