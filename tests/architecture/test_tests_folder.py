"""How the tests are laid out: every folder a package, and no module under ``tests/`` importing a conftest or a
test module."""

from tests.architecture.source import ROOT, imported_modules


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
