"""The imports run one way: these tests read the source, so a cycle fails here before it grows."""

import ast
import functools
import importlib
import io
import os
import re
import tokenize
from collections import Counter
from pathlib import Path

from django.conf import settings

from holds.deciding import delivery
from notifications import sending
from reviewqueue.celery import app as celery_app

ROOT = Path(__file__).resolve().parent.parent


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


def test_the_architecture_page_places_every_app_in_one_layer():
    """A new app must be given its place in the order before it can import anything."""
    placed = [app for layer in layers() for app in layer]
    apps = {path.parent.name for path in ROOT.glob("*/apps.py")} - {"simulator"}

    assert sorted(placed) == sorted(apps | {"reviewqueue"})


def test_apps_import_only_lower_apps_beyond_their_models():
    """Between two apps, imports beyond models run one way: a lower app tells a higher one by a signal or a callback.

    ``get_model`` lookups count as imports; ``reviewqueue``, the lowest, imports no app at all, models neither.
    """
    order = layers()
    found = {}
    for height, layer in enumerate(order):
        above = {app for higher in order[height:] for app in higher}
        for app in layer:
            for path in modules_in(app):
                names = imported_modules(path) | models_looked_up(path)
                forbidden = {
                    name
                    for name in names
                    if name.split(".")[0] in above - {app}
                    and (app == "reviewqueue" or name.split(".")[1:2] != ["models"])
                }
                if forbidden:
                    found[str(path.relative_to(ROOT))] = sorted(forbidden)

    assert found == {}


def test_the_simulator_and_the_apps_import_nothing_of_each_other():
    """The simulator stands for the platform: a program apart, speaking to the app only over HTTP."""
    apps = {app for layer in layers() for app in layer}
    found = {
        str(path.relative_to(ROOT)): sorted(names)
        for package, others in [("simulator", apps), *((app, {"simulator"}) for app in apps)]
        for path in modules_in(package)
        if (names := {name for name in imported_modules(path) | models_looked_up(path) if name.split(".")[0] in others})
    }

    assert found == {}


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


def test_hand_written_sql_runs_only_in_the_sql_modules():
    """A cursor, ``raw`` or ``RawSQL`` anywhere but ``reviewqueue/sql/`` would be SQL with no contract beside it."""
    sql_modules = ROOT / "reviewqueue" / "sql"
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if sql_modules not in path.parents
        and (lines := sorted(node.lineno for node in nodes_of(path) if _runs_sql(node)))
    }

    assert found == {}


def _runs_sql(node: ast.AST) -> bool:
    """A database cursor opened (``.cursor()``, no arguments: ``readers.cursor`` reads page cursors), ``.raw(…)``
    or ``.execute(…)`` called, or ``RawSQL`` used."""
    if isinstance(node, ast.Name) and node.id == "RawSQL":
        return True
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    return node.func.attr in {"raw", "execute", "executemany"} or (node.func.attr == "cursor" and not node.args)


# A statement's or a clause's shape, in capitals as the project writes SQL: prose rarely says "SELECT … FROM".
SQL_TEXT = re.compile(
    r"\bSELECT\b.*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\S+\s+SET\b|\bDELETE\s+FROM\b|\bWITH\s+\w+\s+AS\s*\("
    r"|\bCOPY\s+\S+\s*(?:\(|FROM\b|TO\b)|\b(?:CREATE|ALTER|DROP)\s+(?:TABLE|INDEX|TRIGGER|FUNCTION|DATABASE)\b"
    r"|\bTRUNCATE\s+\w|\bEXISTS\s*\(\s*SELECT\b",
    re.DOTALL,
)


def test_sql_is_written_only_in_the_sql_modules():
    """SQL as text (a string that reads as a statement or a clause, ``RowSQL`` built, or the ORM's compiler asked for
    a query's SQL to rewrite it) anywhere but ``reviewqueue/sql/`` would be SQL with no contract beside it.
    Migrations may write SQL (``RunSQL``): they are left out."""
    sql_modules = ROOT / "reviewqueue" / "sql"
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if sql_modules not in path.parents and (lines := sql_written(path.read_text()))
    }

    assert found == {}


def sql_written(source: str) -> list[int]:
    """The lines where ``source`` writes SQL: a string (an f-string's text around its values) that reads as SQL,
    docstrings left out; ``RowSQL(…)`` called; or ``get_compiler`` called, to handle a query's SQL as text."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and ast.get_docstring(node, clean=False) is not None
    }
    inside_f_strings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = "" if id(node) in docstrings | inside_f_strings else node.value
        elif isinstance(node, ast.Call):
            called = getattr(node.func, "attr", getattr(node.func, "id", None))
            text = "" if called not in {"RowSQL", "get_compiler"} else "SELECT FROM"
        else:
            continue
        if SQL_TEXT.search(text):
            lines.add(node.lineno)
    return sorted(lines)


def test_the_sql_check_finds_sql_in_strings_but_not_in_prose():
    source = '''
def read(row):
    """SELECT … FROM in a docstring is prose."""
    rows = f"SELECT id FROM {table} WHERE x = %s"
    flag = RowSQL(f"{{row}}.status = 'open'")
    sql, params = query.get_compiler(connection=connection).compile(expression)
    said = "Select the holds from the list"
    more = ("INSERT INTO holds_hold (id) "
            "VALUES (1)")
'''

    assert sql_written(source) == [4, 5, 6, 8]


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


def test_the_edit_rules_do_not_import_the_editing_fields():
    """Editing reads the fields and asks the rules about plain JSON values; the rules know nothing of fields."""
    assert imports_of(ROOT / "holds" / "deciding" / "rules.py", "holds.deciding.editing") == set()


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


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or round a circle, with one circle shown through its
    first module."""
    return sorted(circle_through(group, graph) for group in circled_groups(graph))


def circled_groups(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or round a circle (the strongly connected components
    of more than one module, by Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(groups)


def circle_through(group: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A path of imports within ``group`` from its first module back to it: ``[a, b, c, a]``."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        module = queue.pop(0)
        for imported in sorted(graph[module] & members):
            if imported == start:
                return paths[module] + [start]
            if imported not in paths:
                paths[imported] = paths[module] + [imported]
                queue.append(imported)
    return group  # unreachable: a strongly connected group always leads back


def test_the_modules_of_each_app_import_one_way():
    """Inside an app too, imports run one way: a circle (``a`` imports ``b`` imports ``a``, or round five modules)
    means a piece sits above what it needs. Move the piece to the module below both, as
    ``holds/deciding/decidable.py`` was for the hold's one question of whether it can still be decided."""
    apps = sorted({app for layer in layers() for app in layer} | {"simulator"})

    assert {app: circles for app in apps if (circles := import_circles(import_graph(app)))} == {}


def test_no_circle_of_imports_runs_across_apps_models_included():
    """Across apps too, imports run one way: a lower app may import a higher app's models, so the layers alone do not
    keep models, and what they import, from circling back (``holds.models`` once read the remembered approvals'
    words from ``approvals.wording``, whose ``approvals.models`` imports ``holds.models``). ``get_model`` lookups count
    as imports."""
    apps = sorted({app for layer in layers() for app in layer} | {"simulator"})
    graph = import_graph(*apps)

    assert [" → ".join(circle_through(group, graph)) for group in circled_groups(graph)] == []


def test_a_circle_of_imports_is_found_however_long():
    """The check itself: a direct circle, one round three modules, and none in a chain."""
    assert import_circles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b", "a"]]
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c", "a"]]
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


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


def test_no_module_of_the_apps_is_over_450_lines():
    """A module past 450 lines holds more than one concern: cut it along them, as ``holds/mirror/`` and
    ``holds/models/`` were. The apps' modules and the management commands count; migrations (Django writes them),
    the simulator (a program apart) and the benches do not."""
    found = {
        str(path.relative_to(ROOT)): lines
        for path in app_modules()
        if (lines := len(path.read_text().splitlines())) > MODULE_MOST_LINES
    }

    assert found == {}


def test_the_views_modules_are_found():
    """The check itself: it sees the hold pages, the one-tap link's page and the apps' ``views.py``."""
    views = {
        str(path.relative_to(ROOT)) for app in ("holds", "audit") for path in modules_in(app) if is_views_module(path)
    }

    assert {"holds/pages/queue.py", "holds/pages/hold_page.py", "holds/links/link_views.py", "audit/views.py"} <= views
    assert "holds/deciding/decisions.py" not in views


def docs_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def without_code(markdown: str) -> str:
    """The text outside fenced blocks and inline code, where a link is a link."""
    markdown = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", markdown, flags=re.DOTALL | re.MULTILINE)
    return re.sub(r"`[^`\n]*`", "", markdown)


def anchors(markdown: str) -> set[str]:
    """The ``#anchors`` a page's headings get on GitHub: lower case, punctuation dropped, spaces as hyphens, a
    repeated heading numbered ``-1``, ``-2``…; and any ``id`` or ``name`` given in HTML."""
    found, seen = set(), Counter()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", without_code(markdown), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return found | set(re.findall(r"""<[^>]+\b(?:id|name)=["']([^"']+)["']""", markdown))


def relative_links(markdown: str) -> list[str]:
    """The targets of a page's links and images, inline (``[text](target)``), by reference (``[ref]: target``) or in
    HTML (``href``, ``src``), leaving out those with a scheme (``https:``, ``mailto:``)."""
    text = without_code(markdown)
    targets = re.findall(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text)
    targets += re.findall(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", text, flags=re.MULTILINE)
    targets += re.findall(r"""\b(?:href|src)=["']([^"']+)["']""", text)
    return [target for target in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.IGNORECASE)]


def resolves(linked: Path, anchor: str) -> bool:
    """Whether a link's file exists inside the project and, for a page, has the heading its ``#anchor`` names."""
    if not linked.exists() or ROOT not in (linked, *linked.parents):
        return False
    return not (anchor and linked.suffix == ".md") or anchor in anchors(linked.read_text())


def test_every_relative_link_of_the_readme_and_the_docs_resolves():
    """A link to a file names one that exists, and a ``#anchor`` one of the headings of the page it points to."""
    broken = {}
    for page in docs_pages():
        for target in relative_links(page.read_text()):
            path, _, anchor = target.partition("#")
            linked = (page.parent / path.split("?")[0]).resolve() if path else page
            if not resolves(linked, anchor):
                broken.setdefault(str(page.relative_to(ROOT)), []).append(target)

    assert broken == {}


def test_the_link_check_reads_links_and_anchors_as_github_does():
    page = "# Review Queue\n\n## Handing holds over: assignments and notes\n\n## Setup\n\n## Setup\n"

    assert anchors(page) == {"review-queue", "handing-holds-over-assignments-and-notes", "setup", "setup-1"}
    assert relative_links('[a](docs/x.md#y) ![b](img.png "t") [c](https://x.org) `[d](no.md)`\n[e]: e.md\n') == [
        "docs/x.md#y",
        "img.png",
        "e.md",
    ]


def named_modules(markdown: str) -> set[str]:
    """What a page names in backticks as a piece of the code: a path under one of the project's folders
    (``holds/mirror/platform.py``, ``reviewqueue/sql/``) or a dotted name under one of its packages
    (``holds.mirror.sync``, ``decisions.submit`` is not one: it starts with no package)."""
    folders = {path.name for path in ROOT.iterdir() if path.is_dir() and not path.name.startswith(".")}
    packages = {name for name in folders if (ROOT / name / "__init__.py").exists()}
    named = set()
    for code in re.findall(r"`([^`\n]+)`", markdown):
        is_path = re.fullmatch(r"[\w.-]+(/[\w.-]+)*/?", code) and "/" in code and code.split("/")[0] in folders
        is_dotted = re.fullmatch(r"[a-z_]\w*(\.[A-Za-z_]\w*)+", code) and code.split(".")[0] in packages
        if is_path or is_dotted:
            named.add(code)
    return named


def missing(name: str) -> bool:
    """Whether a named path is absent, or a dotted name names no module (or nothing in the module it starts with)."""
    if "/" in name:
        return not (ROOT / name).exists()
    parts = name.split(".")
    for length in range(len(parts), 0, -1):
        path = ROOT.joinpath(*parts[:length])
        if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
            found = importlib.import_module(".".join(parts[:length]))
            for attribute in parts[length:]:
                if not hasattr(found, attribute):
                    return True
                found = getattr(found, attribute)
            return False
    return True


# Where a comment may name a file: the project's folders, and the suffixes of files other than Python's whose whole
# text is read (a path there is compared only when it names a module, a page or a script, so that neither a URL nor
# a static file's name as a template gives it, neither of them a path from the root, is one).
OTHER_FILES = {".sh", ".yml", ".yaml", ".toml", ".js", ".css", ".html", ".md", ""}
NAMED_FILE = re.compile(r"\.(?:py|md|sh|yml|yaml|toml)$")
TEMPLATE_FOLDERS = [ROOT / "templates", *ROOT.glob("*/templates")]


def project_folders() -> set[str]:
    found = {path.name for path in ROOT.iterdir() if path.is_dir() and not path.name.startswith(".")}
    return found - {"staticfiles", "var"}  # collectstatic's output and the quickstart's files, neither of them ours


PATH_FROM_ROOT = re.compile(rf"(?<![\w/.:-])((?:{'|'.join(sorted(project_folders()))})/[\w./-]*[\w/])")


def paths_named(text: str) -> set[str]:
    """What ``text`` names as a path from the project's root, ``holds/mirror/sync.py`` or ``tests/speed/``: one of
    the project's folders, then ``/`` and more; a pattern (``tests/**/test_*.py``, ``holds/<app>.py``) is none."""
    return {name.rstrip(".") for name in PATH_FROM_ROOT.findall(text)}


def names_nothing(name: str) -> bool:
    """Whether a named path is no file or folder: neither as it is, nor as a module without its ``.py``, a migration
    by its number (``holds/migrations/0003``) or a template's name (``holds/act.html``, under a ``templates``
    folder)."""
    path = ROOT / name
    if path.exists() or path.with_name(f"{path.name}.py").exists():
        return False
    if path.parent.name == "migrations" and any(path.parent.glob(f"{path.name}*.py")):
        return False
    return not any((folder / name).exists() for folder in TEMPLATE_FOLDERS)


def commented_text(path: Path) -> list[tuple[int, str]]:
    """A Python module's comments and docstrings, with their lines; another file's whole text, line by line."""
    source = path.read_text()
    if path.suffix != ".py":
        return list(enumerate(source.splitlines(), start=1))
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    found += [
        (node.body[0].lineno, docstring)
        for node in nodes_of(path)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (docstring := ast.get_docstring(node, clean=False)) is not None
    ]
    return found


def test_every_file_a_comment_names_exists():
    """A comment or a docstring that sends the reader to a file (``tests/speed/test_prepared.py``, ``docs/…``) names
    one that is there: moved or renamed, the file takes its mentions along."""
    stale = set()
    for folder in sorted(project_folders()):
        for directory, subfolders, files in os.walk(ROOT / folder):
            subfolders[:] = [name for name in subfolders if name not in {"node_modules", "__pycache__"}]
            for path in (Path(directory) / name for name in files):
                if path.suffix != ".py" and path.suffix not in OTHER_FILES:
                    continue
                for _, text in commented_text(path):
                    for name in paths_named(text):
                        if (path.suffix == ".py" or NAMED_FILE.search(name)) and names_nothing(name):
                            stale.add((str(path.relative_to(ROOT)), name))

    assert sorted(stale) == []


def test_the_paths_a_comment_names_are_read_and_checked():
    text = "see holds/mirror/sync.py, tests/speed/ and holds/gone.py; not /holds/bulk/review nor tests/**/test_*.py."

    assert paths_named(text) == {"holds/mirror/sync.py", "tests/speed/", "holds/gone.py"}
    assert [name for name in sorted(paths_named(text)) if names_nothing(name)] == ["holds/gone.py"]
    assert not names_nothing("holds/migrations/0003") and not names_nothing("holds/act.html")


def test_every_module_the_architecture_page_names_exists():
    """The code map names modules without linking them; renamed or moved, they must be renamed here too."""
    named = named_modules(ARCHITECTURE.read_text())

    assert "holds/mirror/platform.py" in named
    assert sorted(name for name in named if missing(name)) == []


def test_the_names_of_modules_are_read_from_backticks_and_checked():
    page = "`holds/mirror/platform.py`, `holds.mirror.sync.sync_all`, `request.viewer`, `holds/gone.py`, `holds.gone`"

    assert named_modules(page) == {
        "holds/mirror/platform.py",
        "holds.mirror.sync.sync_all",
        "holds/gone.py",
        "holds.gone",
    }
    assert [name for name in sorted(named_modules(page)) if missing(name)] == ["holds.gone", "holds/gone.py"]
    assert missing("holds.mirror.sync.no_such_function")


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
