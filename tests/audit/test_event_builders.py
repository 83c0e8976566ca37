"""Every kind of audit event has one builder, named as the kind; the app's code appends only what builders make; and
every admin that changes anything records its changes."""

import ast
import importlib
import inspect
import pkgutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib import admin
from django.test import RequestFactory

import audit.events
from audit.admin_changes import AuditedAdmin
from audit.models import RETIRED_KINDS, EventKind
from tests.helpers.users import make_user

ROOT = Path(__file__).resolve().parent.parent.parent
BUILDER_MODULES = [
    importlib.import_module(f"audit.events.{module.name}") for module in pkgutil.iter_modules(audit.events.__path__)
]


def builders() -> dict[str, list]:
    found = {}
    for module in BUILDER_MODULES:
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__ and not name.startswith("_"):
                found.setdefault(name, []).append(function)
    return found


def test_every_kind_written_has_one_builder_named_as_it():
    written = set(EventKind.values) - RETIRED_KINDS
    found = builders()

    assert sorted(written - set(found)) == [], "a kind without a builder in audit.events"
    assert sorted(set(found) - set(EventKind.values)) == [], "a builder for no kind"
    assert sorted(name for name, functions in found.items() if len(functions) > 1) == []


def test_every_builder_takes_keyword_arguments_only():
    positional = {
        name: [parameter.name for parameter in inspect.signature(function).parameters.values()]
        for name, [function] in builders().items()
        if any(one.kind != one.KEYWORD_ONLY for one in inspect.signature(function).parameters.values())
    }

    assert positional == {}


def test_a_builder_makes_its_own_kind():
    class Token:
        pk, name, hint, scopes, expires_at = 7, "nightly", "rq_Ab", ["read"], datetime(2027, 1, 1, tzinfo=UTC)
        user = type("User", (), {"get_username": lambda self: "alice", "is_authenticated": True, "pk": 3})()

    entry = audit.events.access.token_first_used(token=Token())

    assert entry.kind == EventKind.TOKEN_FIRST_USED and entry.payload["owner"] == "alice"


def app_modules() -> list[Path]:
    apps = {path.parent for path in ROOT.glob("*/apps.py")}
    return [path for app in sorted(apps) for path in app.rglob("*.py") if "migrations" not in path.parts]


def raw_writes(source: str) -> list[int]:
    """Lines that make an event without a builder: ``events.Entry(...)``, ``Entry(...)`` imported from
    ``audit.events``, or ``events.record(...)``."""
    tree = ast.parse(source)
    entry_imported = any(
        isinstance(node, ast.ImportFrom) and node.module == "audit.events" and "Entry" in {a.name for a in node.names}
        for node in ast.walk(tree)
    )
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        name = called.id if isinstance(called, ast.Name) else called.attr if isinstance(called, ast.Attribute) else ""
        owner = called.value.id if isinstance(called, ast.Attribute) and isinstance(called.value, ast.Name) else ""
        if (name == "Entry" and (owner.endswith("events") or (not owner and entry_imported))) or (
            name == "record" and owner.endswith("events")
        ):
            lines.append(node.lineno)
    return lines


def test_the_apps_append_only_what_builders_make():
    builders_package = ROOT / "audit" / "events"
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if builders_package not in path.parents and (lines := raw_writes(path.read_text()))
    }

    assert found == {}


def test_the_raw_write_check_finds_them():
    source = "events.record(EventKind.CLAIMED)\naudit_events.Entry(kind)\nEntry('x')\nrecord_many([])\n"

    assert raw_writes(source) == [1, 2]
    assert raw_writes(f"from audit.events import Entry\n{source}") == [2, 3, 4]


@pytest.mark.django_db
def test_every_admin_that_changes_anything_records_its_changes():
    request = RequestFactory().get("/admin/")
    request.user = make_user("root", is_superuser=True, is_staff=True)
    unrecorded = sorted(
        model._meta.label_lower
        for model, model_admin in admin.site._registry.items()
        if not isinstance(model_admin, AuditedAdmin)
        and (
            model_admin.has_add_permission(request)
            or model_admin.has_change_permission(request)
            or model_admin.has_delete_permission(request)
        )
    )

    assert unrecorded == []
