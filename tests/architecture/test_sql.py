"""Hand-written SQL, run or written as text, lives only in ``reviewqueue/sql/``, where each function's contract is
beside it."""

import ast
import re

from tests.architecture.source import ROOT, app_modules, nodes_of


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
