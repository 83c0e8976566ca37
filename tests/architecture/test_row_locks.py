"""Every row lock the app takes is FOR NO KEY UPDATE: it serialises the writers of the row as FOR UPDATE does, but never
stops another transaction's foreign-key check, which PostgreSQL makes at COMMIT (FOR KEY SHARE), after that
transaction took the audit chain's head. A FOR UPDATE there would deadlock two audited changes
(``tests/audit/test_lock_order.py``). A locked row deleted or given a new key takes FOR UPDATE by that statement,
which is when it needs it."""

import ast

from django.apps import apps

from tests.architecture.source import ROOT, app_modules, nodes_of

# Models Django's ``update_or_create`` may lock FOR UPDATE: no foreign key names them, so no check waits on them.
UNREFERENCED = {"NotificationSettings", "Preference", "RememberAllowance", "SubjectRereading"}


def test_every_row_lock_leaves_foreign_key_checks_alone():
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if (lines := sorted(node.lineno for node in nodes_of(path) if _locks_for_update(node)))
    }

    assert found == {}


def test_the_models_left_to_update_or_create_are_named_by_no_foreign_key():
    models = {model.__name__: model for model in apps.get_models()}

    # Reverse relations, those a related_name="+" hides included.
    named_by = {
        name: [str(field) for field in models[name]._meta.get_fields(include_hidden=True) if not field.concrete]
        for name in UNREFERENCED
    }

    assert named_by == {name: [] for name in UNREFERENCED}


def _locks_for_update(node: ast.AST) -> bool:
    """``select_for_update(…)`` called without ``no_key=True``, or ``update_or_create``, which locks FOR UPDATE inside
    Django, on a model a foreign key names."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr == "update_or_create":
        return _model_of(node.func.value) not in UNREFERENCED
    if node.func.attr != "select_for_update":
        return False
    return not any(
        keyword.arg == "no_key" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        for keyword in node.keywords
    )


def _model_of(manager: ast.AST) -> str:
    """``Model`` of ``Model.objects``; "" for anything else."""
    if isinstance(manager, ast.Attribute) and isinstance(manager.value, ast.Name):
        return manager.value.id
    return ""
