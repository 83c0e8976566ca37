"""Every file a comment, a docstring or another text file of the checkout names from the project's root exists:
moved or renamed, a file takes its mentions along."""

import ast
import io
import os
import re
import tokenize
from pathlib import Path

from tests.architecture.source import ROOT, nodes_of

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
