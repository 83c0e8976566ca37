"""A hold's status, closing and claim are written only by ``holds/lifecycle.py``, and changes are announced to the
open pages only by it and the few writers of other things."""

import ast

from tests.architecture.source import ROOT, app_modules, nodes_of

# A hold's life: every change of these columns of a hold is one of ``holds/lifecycle.py``'s named actions.
LIFE_COLUMNS = frozenset({"status", "closed_at", "claimed_by", "claimed_at", "claim_expires_at"})
# The field lists that carry them (``holds.mirror.mirrored``), named where they are written.
LIFE_FIELD_LISTS = frozenset({"MIRRORED_FIELDS", "ENDING_FIELDS"})


def test_a_holds_status_closing_and_claim_are_written_only_by_its_lifecycle():
    lifecycle = ROOT / "holds" / "lifecycle.py"
    found = {
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in app_modules()
        if path != lifecycle
        for node in nodes_of(path)
        if _writes_a_holds_life(node)
    }

    assert found == set()


def test_the_lifecycle_check_finds_each_way_of_writing_a_hold():
    writes = [
        "Hold.objects.filter(pk=1).update(status='gone')",
        "hold.save(update_fields=['closed_at'])",
        "hold.save(update_fields=mirrored.ENDING_FIELDS)",
        "Hold.objects.bulk_update(holds, MIRRORED_FIELDS)",
        "hold.claim_expires_at = now",
        "hold.status, hold.closed_at = 'gone', now",
    ]
    left_alone = [
        "Hold.objects.filter(status='open').update(last_synced_at=now)",
        "kept.status = response.status_code",
        "hold.save(update_fields=['last_synced_at'])",
        "kept.save(update_fields=['status'])",
    ]

    assert [any(_writes_a_holds_life(node) for node in ast.walk(ast.parse(code))) for code in writes] == [True] * 6
    assert [any(_writes_a_holds_life(node) for node in ast.walk(ast.parse(code))) for code in left_alone] == [False] * 4


def _writes_a_holds_life(node: ast.AST) -> bool:
    """An ``update(…)`` of a hold's query, a hold's ``save`` or ``bulk_update`` naming the fields, or an attribute of a
    hold set, that changes one of ``LIFE_COLUMNS``; a hold being whatever its code names so."""
    if isinstance(node, ast.Assign):
        targets = [element for target in node.targets for element in getattr(target, "elts", [target])]
        return any(
            isinstance(target, ast.Attribute)
            and target.attr in LIFE_COLUMNS
            and "hold" in ast.unparse(target.value).lower()
            for target in targets
        )
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and "hold" in ast.unparse(node.func.value).lower()
    ):
        return False
    if node.func.attr == "update":
        return any(keyword.arg in LIFE_COLUMNS for keyword in node.keywords)
    fields = [keyword.value for keyword in node.keywords if keyword.arg in {"update_fields", "fields"}]
    if node.func.attr == "bulk_update" and len(node.args) > 1:
        fields.append(node.args[1])
    return node.func.attr in {"save", "bulk_update"} and any(_names_life_columns(value) for value in fields)


def _names_life_columns(fields: ast.AST) -> bool:
    names = {getattr(node, "value", None) for node in ast.walk(fields) if isinstance(node, ast.Constant)}
    names |= {node.attr for node in ast.walk(fields) if isinstance(node, ast.Attribute)}
    names |= {node.id for node in ast.walk(fields) if isinstance(node, ast.Name)}
    return bool(names & (LIFE_COLUMNS | LIFE_FIELD_LISTS))


# Who announces a change to the open pages (``reviewqueue.changes.publish``): a hold's life is announced by the action
# that changed it, in ``holds/lifecycle.py``; only the writers of what is no part of a hold's life announce their own:
# who is looking at a hold, whom it is handed to, the notes on it, and the bell.
PUBLISHERS = {
    "holds/lifecycle.py",
    "holds/deciding/presence.py",
    "holds/handover/assignments.py",
    "holds/handover/notes.py",
    "notifications/notify.py",
    "notifications/views.py",
}


def test_only_a_holds_lifecycle_and_the_writers_of_other_things_publish_changes():
    found = {str(path.relative_to(ROOT)) for path in app_modules() if _publishes(ast.parse(path.read_text()))}

    assert sorted(found) == sorted(PUBLISHERS)


def test_the_publish_check_finds_each_way_of_calling_it():
    calls = ["changes.publish('hold', [hold])", "from reviewqueue.changes import publish"]
    left_alone = ["changes.latest_id()", "events.publish('x')", "from reviewqueue.changes import STREAM_PATH"]

    assert [_publishes(ast.parse(code)) for code in calls + left_alone] == [True, True, False, False, False]


def _publishes(tree: ast.AST) -> bool:
    """Whether a module calls ``changes.publish`` or imports ``publish`` from ``reviewqueue.changes``."""
    return any(
        (
            isinstance(node, ast.Attribute)
            and node.attr == "publish"
            and isinstance(node.value, ast.Name)
            and node.value.id == "changes"
        )
        or (
            isinstance(node, ast.ImportFrom)
            and node.module == "reviewqueue.changes"
            and any(alias.name == "publish" for alias in node.names)
        )
        for node in ast.walk(tree)
    )
