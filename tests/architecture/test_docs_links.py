"""The README and the docs stay true to the checkout: every relative link resolves, and every module the
architecture page names exists."""

import importlib
import re
from collections import Counter
from pathlib import Path

from tests.architecture.source import ARCHITECTURE, ROOT


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
