"""Every row lock the app takes is FOR NO KEY UPDATE: it serialises the writers of the row as FOR UPDATE does, but never
stops another transaction's foreign-key check, which PostgreSQL makes at COMMIT (FOR KEY SHARE), after that
transaction took the audit chain's head. A FOR UPDATE there would deadlock two audited changes
(``tests/audit/test_lock_order.py``). Nothing here deletes a locked row or changes its key, the cases FOR UPDATE is
for."""

import ast

from tests.architecture.source import ROOT, app_modules, nodes_of


def test_every_row_lock_leaves_foreign_key_checks_alone():
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if (lines := sorted(node.lineno for node in nodes_of(path) if _locks_for_update(node)))
    }

    assert found == {}


def _locks_for_update(node: ast.AST) -> bool:
    """``select_for_update(…)`` called without ``no_key=True``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr != "select_for_update":
        return False
    return not any(
        keyword.arg == "no_key" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        for keyword in node.keywords
    )
