"""Modules stay small enough to hold one concern: a views module at most 300 lines, any module of the checkout at
most 450 (migrations, the simulator and the benches aside)."""

import os
from pathlib import Path

from tests.architecture.source import ROOT, app_modules, imported_modules, modules_in

VIEWS_MOST_LINES = 300


def is_views_module(path: Path) -> bool:
    """A module that answers requests: named ``views.py`` or ``…_views.py``, in a ``pages`` package, or importing
    Django's shortcuts for pages (``render``, ``redirect``) or its views' decorators."""
    if path.name == "views.py" or path.name.endswith("_views.py") or "pages" in path.parent.parts:
        return True
    text = path.read_text()
    return ("django.shortcuts" in text or "django.views" in text) and any(
        name.startswith("django.views.") or name in {"django.shortcuts.render", "django.shortcuts.redirect"}
        for name in imported_modules(path)
    )


def test_no_views_module_is_over_300_lines():
    """Views stay thin and split by page or by concern (``holds/pages/``): a long views module is rules that belong
    in a module named for what they do, or pages that want a module each."""
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if is_views_module(path) and (lines := len(path.read_text().splitlines())) > VIEWS_MOST_LINES
    }

    assert found == {}


MODULE_MOST_LINES = 450


# What no module past its most lines is held to: migrations (Django writes them), the simulator (a program apart, with
# its tests) and the benches.
NOT_HELD_TO_SIZE = ("simulator", "tests/platform/simulator", "bench")


def python_modules() -> list[Path]:
    """Every Python module of the checkout: each ``.py`` file, and each script without the suffix that runs under
    Python (``bin/quickstart``), hidden folders (``.venv``), ``node_modules`` and what is not the project's own
    (``staticfiles``, ``var``) left out."""
    found = []
    for directory, subfolders, files in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if not name.startswith(".") and name not in {"node_modules", "__pycache__", "staticfiles", "var"}
        ]
        for path in (Path(directory) / name for name in files):
            if path.suffix == ".py" or (path.suffix == "" and _runs_under_python(path)):
                found.append(path)
    return sorted(found)


def _runs_under_python(path: Path) -> bool:
    with path.open("rb") as script:
        first = script.readline(200)
    return first.startswith(b"#!") and b"python" in first


def test_no_module_is_over_450_lines():
    """A module past 450 lines holds more than one concern: cut it along them, as ``holds/mirror/``,
    ``holds/models/`` and these checks (``tests/architecture/``) were. Every module counts, the apps', the tests' and
    the scripts' (``manage.py``, ``bin/``); migrations (Django writes them), the simulator (a program apart, with its
    tests) and the benches do not."""
    modules = [
        path
        for path in python_modules()
        if "migrations" not in path.parts and not any(ROOT / folder in path.parents for folder in NOT_HELD_TO_SIZE)
    ]
    found = {
        str(path.relative_to(ROOT)): lines
        for path in modules
        if (lines := len(path.read_text().splitlines())) > MODULE_MOST_LINES
    }

    assert {"manage.py", "bin/quickstart", "tests/conftest.py", "holds/lifecycle.py"} <= {
        str(path.relative_to(ROOT)) for path in modules
    }
    assert found == {}


def test_the_views_modules_are_found():
    """The check itself: it sees the hold pages, the one-tap link's page and the apps' ``views.py``."""
    views = {
        str(path.relative_to(ROOT)) for app in ("holds", "audit") for path in modules_in(app) if is_views_module(path)
    }

    assert {"holds/pages/queue.py", "holds/pages/hold_page.py", "holds/links/link_views.py", "audit/views.py"} <= views
    assert "holds/deciding/decisions.py" not in views
