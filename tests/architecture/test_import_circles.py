"""The imports run one way inside an app and across apps: these tests read the source, so a cycle fails here
before it grows."""

from tests.architecture.source import import_graph, layers


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
