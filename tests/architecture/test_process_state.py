"""What a module may keep: a process-level cache only through ``reviewqueue/processcache.py``, and no private
state hung on a user object."""

import ast

from tests.architecture.source import ROOT, app_modules, nodes_of


def test_every_process_level_cache_is_registered_for_the_tests_to_forget():
    """A ``functools`` cache outside ``reviewqueue/processcache.py`` would keep one test's answers for the next."""
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if path != ROOT / "reviewqueue" / "processcache.py"
        and (lines := sorted(node.lineno for node in nodes_of(path) if _functools_cache(node)))
    }

    assert found == {}


def _functools_cache(node: ast.AST) -> bool:
    """``functools.cache`` or ``functools.lru_cache``, or either imported by name."""
    names = {"cache", "lru_cache"}
    if isinstance(node, ast.Attribute):
        return node.attr in names and isinstance(node.value, ast.Name) and node.value.id == "functools"
    return isinstance(node, ast.ImportFrom) and node.module == "functools" and any(a.name in names for a in node.names)


def test_no_module_hangs_private_state_on_a_user():
    """Who is asking travels as a viewer (``reviewqueue/viewer.py``): a private attribute set on a user object would
    make an answer depend on which copy of the user a caller holds. Its own fields a module may set, and save."""
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if (
            lines := sorted(
                node.lineno
                for node in nodes_of(path)
                if isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and node.attr.startswith("_")
                and isinstance(node.value, ast.Name)
                and "user" in node.value.id
            )
        )
    }

    assert found == {}
