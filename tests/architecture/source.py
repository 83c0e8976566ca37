"""How the architecture tests read the checkout: its modules, each one's syntax tree and imports (read and parsed
once for the run), the import graph, and the order of the apps the architecture page gives."""

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def modules_in(package: str) -> list[Path]:
    """Every Python module of a package, its subpackages included, migrations left out (Django writes those)."""
    return sorted(path for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts)


def app_modules() -> list[Path]:
    """Every module of every app the architecture page places in a layer (``reviewqueue`` included)."""
    return [path for layer in layers() for app in layer for path in modules_in(app)]


@functools.cache
def nodes_of(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a module's syntax tree, read and parsed once for the whole module of checks: each check walks
    most modules of the checkout, and only reads the nodes."""
    return tuple(ast.walk(ast.parse(path.read_text(), filename=str(path))))


@functools.cache
def imported_modules(path: Path) -> frozenset[str]:
    """The dotted names a module imports anywhere in it, inside functions too; ``from a import b`` counts as ``a.b``."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names = set()
    for node in nodes_of(path):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = ".".join(part for part in (parent, base) if part)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(names)


def imports_of(path: Path, package: str) -> set[str]:
    """What ``path`` imports from ``package``, as dotted names."""
    return {name for name in imported_modules(path) if name == package or name.startswith(f"{package}.")}


@functools.cache
def models_looked_up(path: Path) -> frozenset[str]:
    """The apps whose models a module reaches by label, ``apps.get_model("teams", …)`` or ``("teams.TeamScope")``,
    as ``teams.models``: an import the import statements do not show."""
    return frozenset(
        f"{node.args[0].value.split('.')[0]}.models"
        for node in nodes_of(path)
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "get_model"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def layers() -> list[set[str]]:
    """The architecture page's order of the apps, lowest first, written once there: each step a set of peers."""
    order = re.search(r"The apps are layers, lowest first: (.+?)\.\s", ARCHITECTURE.read_text(), re.DOTALL)
    assert order, "docs/architecture.md no longer orders the apps"
    return [set(re.findall(r"`(\w+)`", step)) for step in order.group(1).split("→")]


def module_name(path: Path) -> str:
    """``holds/deciding/decisions.py`` as ``holds.deciding.decisions``; a package's ``__init__.py`` as the package."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(*packages: str) -> dict[str, set[str]]:
    """Which modules of ``packages`` each of their modules imports, anywhere in it, ``get_model`` lookups included:
    ``from a.b import c`` is an import of the module ``a.b.c`` when there is one, else of ``a.b`` (a package is its
    ``__init__.py``, which importing a module below it does not count as importing)."""
    modules = {module_name(path): path for package in packages for path in modules_in(package)}
    graph = {}
    for name, path in modules.items():
        found = set()
        for imported in imported_modules(path) | models_looked_up(path):
            parts = imported.split(".")
            target = next(
                (".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in modules), None
            )
            if target is not None and target != name:
                found.add(target)
        graph[name] = found
    return graph
