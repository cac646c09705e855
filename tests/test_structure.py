"""The package's import structure, read from its source (nothing is imported): a ratchet.

Issue #22 moves jitgrad to layers that import one way, with no private name imported across
modules. Until that lands, this test freezes what main had (a16069f): the two import cycles and
the 35 private names borrowed across modules. A new cycle, a cycle that grows, or a new borrowed
private name fails; one that goes away must be struck from the lists below, so they only
shrink. When both are empty, the layer contract replaces this file.
"""

from __future__ import annotations

import ast
import os

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jitgrad")

KNOWN_CYCLES = {
    frozenset({"numpy_api", "numpy_shape", "symbolic"}),
    frozenset({"build", "build_exprs", "build_loops", "build_stmts", "custom"}),
}

KNOWN_PRIVATE = {  # (importing module, module.name)
    ("build", "symbolic._CURRENT"), ("build", "symbolic._apply"),
    ("build_exprs", "parse._unwrap"), ("build_exprs", "primitives._index_value"),
    ("build_exprs", "symbolic._apply"), ("build_exprs", "symbolic._python_scalar"),
    ("build_loops", "symbolic._apply"), ("build_stmts", "symbolic._apply"),
    ("custom", "parse._unwrap"), ("custom", "symbolic._CURRENT"),
    ("dask", "api._converter"), ("dask", "api._sizes_hold"), ("jvp", "api._sizes_hold"),
    ("numpy_api", "symbolic._CURRENT"), ("numpy_api", "symbolic._apply"),
    ("numpy_api", "symbolic._builder_of"), ("numpy_api", "symbolic._dims"),
    ("numpy_api", "symbolic._loc"), ("numpy_shape", "numpy_api._apply_alloc"),
    ("numpy_shape", "numpy_api._matmul"), ("numpy_shape", "numpy_api._norm_axis"),
    ("numpy_shape", "numpy_api._split"), ("numpy_shape", "symbolic._apply"),
    ("numpy_shape", "symbolic._loc"), ("parallel", "recompute._is_reduction"),
    ("rules", "primitives._index_value"), ("scipy_api", "symbolic._apply"),
    ("scipy_api", "symbolic._loc"), ("symbolic", "numpy_api._matmul"),
    ("symbolic", "numpy_api._norm_axis"), ("tape", "primitives._index_value"),
    ("tape", "symbolic._matmul"), ("tape", "symbolic._norm_axis"),
    ("vjp", "api._converter"), ("vjp", "api._sizes_hold"),
}


def modules() -> dict[str, ast.Module]:
    out = {}
    for name in sorted(os.listdir(PACKAGE)):
        if name.endswith(".py"):
            with open(os.path.join(PACKAGE, name), encoding="utf-8") as f:
                out[name[:-3]] = ast.parse(f.read(), name)
    return out


def imports(tree: ast.Module, names: set[str]):
    """(module imported, the names taken from it) for each import of a sibling module,
    function-level imports included: they hide a cycle, they do not remove it."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:  # from . import x
                for a in node.names:
                    if a.name in names:
                        aliases[a.asname or a.name] = a.name
                        yield a.name, []
            elif node.module in names:
                yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("jitgrad."):
            mod = node.module.split(".", 1)[1]
            if mod in names:
                yield mod, [a.name for a in node.names]
    for node in ast.walk(tree):  # `x._name` through a module alias
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            yield aliases[node.value.id], [node.attr]


def graph():
    mods = modules()
    names = set(mods)
    edges = {m: set() for m in mods}
    private = set()
    for m, tree in mods.items():
        for target, taken in imports(tree, names):
            if target != m:
                edges[m].add(target)
            private |= {(m, f"{target}.{n}") for n in taken
                        if n.startswith("_") and not n.startswith("__") and target != m}
    return edges, private


def cycles(edges) -> set[frozenset]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), set()

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                out.add(frozenset(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_new_import_cycle():
    found = cycles(graph()[0])
    grown = [sorted(c) for c in found if not any(c <= k for k in KNOWN_CYCLES)]
    assert not grown, f"new or larger import cycles: {grown}"
    gone = [sorted(k) for k in KNOWN_CYCLES if not any(k <= c for c in found)]
    assert not gone, f"these cycles are gone or smaller; strike them from KNOWN_CYCLES: {gone}"


def test_no_new_private_import_across_modules():
    found = graph()[1]
    assert not found - KNOWN_PRIVATE, (
        f"private names imported across modules (make them public or keep them in their "
        f"module): {sorted(found - KNOWN_PRIVATE)}")
    assert not KNOWN_PRIVATE - found, (
        f"no longer imported; strike them from KNOWN_PRIVATE: {sorted(KNOWN_PRIVATE - found)}")


def test_the_reader_sees_a_cycle_and_a_private_import():
    """The reader itself: a planted cycle and a planted private import are found."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == {frozenset("abc")}
    tree = ast.parse("from .symbolic import _apply, Sym\nfrom . import api\napi._converter(1)")
    got = list(imports(tree, {"symbolic", "api"}))
    assert ("symbolic", ["_apply", "Sym"]) in got and ("api", ["_converter"]) in got
