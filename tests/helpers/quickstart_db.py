"""The quickstart's SQLite database, migrated, for the tests that run Django on it (``migrated_var_dir``)."""

import contextlib
import os
import sqlite3
from pathlib import Path

from filelock import FileLock

from tests.helpers.preloaded import start_django

DATABASE = "reviewqueue.sqlite3"  # as reviewqueue/settings.py names it in REVIEWQUEUE_VAR_DIR
MIGRATE = 'from django.core.management import call_command\ncall_command("migrate", verbosity=0)'


def migrated_var_dir(tmp_path_factory, var_dir: Path) -> Path:
    """``var_dir``, holding a copy of the quickstart's SQLite database as ``migrate`` leaves it.

    Migrating SQLite from nothing takes seconds, so the run migrates once: the first test to ask does, under a lock
    in the run's own temporary folder (shared by its pytest-xdist workers), and every test copies the result
    through SQLite's backup, which reads what is still in the write-ahead log too.
    """
    run_folder = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_folder = run_folder.parent  # the workers' folders are popen-gwN inside the run's
    shared = run_folder / "quickstart-var"
    with FileLock(f"{shared}.lock"):
        if not (shared / DATABASE).exists():
            migrated = start_django(MIGRATE, REVIEWQUEUE_VAR_DIR=str(shared), DEBUG="1")
            assert migrated.returncode == 0, migrated.stderr
        var_dir.mkdir(parents=True, exist_ok=True)
        with (
            contextlib.closing(sqlite3.connect(shared / DATABASE)) as source,
            contextlib.closing(sqlite3.connect(var_dir / DATABASE)) as copy,
        ):
            source.backup(copy)
    return var_dir
