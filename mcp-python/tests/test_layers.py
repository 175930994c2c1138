"""The modules of ``mcp_sansio`` import each other one way: no circle.

Every import counts, at the top of a module or inside a function (a deferred import hides a
circle, it does not remove it), including ``if TYPE_CHECKING:`` ones.
"""

import ast
import pathlib

import mcp_sansio

PACKAGE = pathlib.Path(mcp_sansio.__file__).parent


def import_graph(package: pathlib.Path) -> dict:
    """Module -> the package's modules it imports."""
    modules = {p.stem for p in package.glob("*.py")}
    graph = {}
    for module in sorted(modules):
        tree = ast.parse((package / f"{module}.py").read_text())
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mcp_sansio."):
                deps.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[1] for a in node.names if a.name.startswith("mcp_sansio."))
        graph[module] = deps & modules - {module}
    return graph


def circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_among_the_modules():
    graph = import_graph(PACKAGE)
    assert {"aio", "_http_client", "_connection", "_dispatch"} <= set(graph), sorted(graph)
    assert graph["_connection"] == set(), graph["_connection"]
    assert circles(graph) == [], graph
