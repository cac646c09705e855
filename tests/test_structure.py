"""The package's structure, read from its source: the layer contract, and flags, not name lists.

jitgrad is layered (docs/how-it-works.md, "The layers"). A module imports only from its own layer or the
layers below it; `transforms` and `backend` sit side by side and never import each other; the
Numba backend sees only `core` and `prims`; the tape (an independent oracle: every module of
the `jitgrad.tape` package, in the api layer) sees only `core`, `prims`, `lang` and its own
modules. No import cycle, and no private name (``_x``) taken from another module.
Function-level imports count: they hide a dependency, they do not remove it.

What a pass needs to know about an operation is a flag on the operation's row (`core.ops`),
declared where the operation is: no module outside `jitgrad.prims` and `jitgrad.core.ops` keeps
a literal list of operation names (`SPELLING_TABLES` excepted). Nothing is imported but the
table of operations, for their names.
"""

from __future__ import annotations

import ast
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "jitgrad")

# Lowest first. A module's layer is its subpackage; the public modules at the root are `api`,
# ``python -m jitgrad`` (`__main__`) is a tool.
LAYERS = ["core", "prims", "lang", "frontend", "transforms|backend", "pipeline", "api", "tools"]
ONLY = {  # a layer, or a package (each of its modules), that may import less than everything below
    "backend": {"core", "prims", "backend"},
    "jitgrad.tape": {"core", "prims", "lang", "jitgrad.tape"},  # the tape's modules: each other
}


def inside(module: str, package: str) -> bool:
    """Whether ``module`` is ``package`` or one of its modules."""
    return module == package or module.startswith(package + ".")


def allowed_for(module: str, layer: str) -> set[str] | None:
    """What `ONLY` lets ``module`` import (layer names and dotted packages), by the package it
    is in or else by its layer; None: every layer below and its own."""
    for key, allowed in ONLY.items():
        if "." in key and inside(module, key):
            return allowed
    return ONLY.get(layer)


def modules() -> dict[str, ast.Module]:
    """Every module of the package by dotted name (``jitgrad.core.ir``), parsed."""
    out = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(folder, os.path.dirname(PACKAGE)).replace(os.sep, ".")
        for name in sorted(files):
            if name.endswith(".py"):
                dotted = rel if name == "__init__.py" else f"{rel}.{name[:-3]}"
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    out[dotted] = ast.parse(f.read(), name)
    return out


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, tree: ast.Module, names: set[str], is_package: bool = False):
    """(module imported, the names taken from it) for each import of a jitgrad module."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(module, node, is_package)
            if target in names:
                taken = []
                for a in node.names:
                    if f"{target}.{a.name}" in names:  # from jitgrad.core import ir
                        aliases[a.asname or a.name] = f"{target}.{a.name}"
                        yield f"{target}.{a.name}", []
                    else:
                        taken.append(a.name)
                if taken:
                    yield target, taken
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in names:
                    if a.asname:
                        aliases[a.asname] = a.name
                    yield a.name, []
    for node in ast.walk(tree):  # `x._name` through a module alias
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            yield aliases[node.value.id], [node.attr]


def graph():
    """The import edges between jitgrad's modules, and the private names taken across them."""
    mods = modules()
    names = set(mods)
    packages = {m for m in names if any(o.startswith(m + ".") for o in names)}
    edges = {m: set() for m in mods}
    private = set()
    for m, tree in mods.items():
        for target, taken in imports(m, tree, names, m in packages):
            if target != m and target != "jitgrad" and not m.startswith(target + "."):
                edges[m].add(target)
            private |= {(m.rsplit(".", 1)[-1], f"{target.rsplit('.', 1)[-1]}.{n}")
                        for n in taken if n.startswith("_") and not n.startswith("__")
                        and target != m}
    return edges, private


def layer_of(module: str) -> tuple[int, str]:
    """(layer index, layer name) of a dotted module name."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "api"
    if top == "tape" or (len(parts) == 2 and top not in (
            "core", "prims", "lang", "frontend", "transforms", "backend", "tools")):
        top = {"pipeline": "pipeline", "__main__": "tools"}.get(top, "api")  # the tape: api
    for k, layer in enumerate(LAYERS):
        if top in layer.split("|"):
            return k, top
    raise AssertionError(f"{module} is in no layer; add its folder to LAYERS")


def against_layers(edges) -> set[tuple[str, str]]:
    bad = set()
    for m, targets in edges.items():
        k, name = layer_of(m)
        allowed = allowed_for(m, name)
        for t in targets:
            j, tname = layer_of(t)
            permitted = allowed is None or tname in allowed or any(
                inside(t, a) for a in allowed if "." in a)
            if j > k or (j == k and tname != name) or not permitted:
                bad.add((m, t))
    return bad


def cycles(edges) -> set[frozenset]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), set()

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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


def test_no_import_cycle():
    found = cycles(graph()[0])
    assert not found, f"import cycles: {[sorted(c) for c in found]}"


def test_imports_follow_the_layers():
    found = against_layers(graph()[0])
    assert not found, (
        f"imports against the layer order {LAYERS} (a lower layer never imports a higher one; "
        f"transforms and backend never import each other; {ONLY}): {sorted(found)}")


def test_no_private_import_across_modules():
    found = graph()[1]
    assert not found, (f"private names imported across modules (make them public or keep them "
                       f"in their module): {sorted(found)}")


def test_every_module_is_in_a_layer():
    for m in modules():
        layer_of(m)


# Modules that may hold a literal list of operation names, and why: a table of how user code
# spells operations, not a property of them that a pass keeps.
SPELLING_TABLES = {
    "jitgrad.lang.numpy_api": "the NumPy functions (np.exp, np.log, ...) handled as the unary "
                              "primitive of the same name",
}


def declares_operations(module: str) -> bool:
    """Where operations and their flags are declared: the primitives' rows, `core.ops`."""
    return inside(module, "jitgrad.prims") or module == "jitgrad.core.ops"


def operation_names() -> set[str]:
    """Every primitive's and internal operation's name (importing `prims.primitives` declares
    them all)."""
    import jitgrad.prims.primitives  # noqa: F401  (fills the tables)
    from jitgrad.core.ops import FLAGS
    from jitgrad.prims.primitive import PRIMITIVES
    return set(PRIMITIVES) | set(FLAGS)


def name_lists(tree: ast.Module, names: set[str]) -> list[int]:
    """The lines of the tuple, list and set literals in ``tree`` of two or more strings, all of
    them in ``names``."""
    return sorted(node.lineno for node in ast.walk(tree)
                  if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2
                  and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                          and e.value in names for e in node.elts))


def test_passes_ask_flags_not_name_lists():
    """A property of operations is a flag declared on their rows, which every pass asks
    (``ops.flags(name)``): a pass's own list of names would be a second place for it, which a
    new operation, or a change of the row, would miss."""
    names = operation_names()
    found = [f"{m}:{line}" for m, tree in modules().items()
             if not declares_operations(m) and m not in SPELLING_TABLES
             for line in name_lists(tree, names)]
    assert not found, (f"literal lists of operation names outside jitgrad.prims and "
                       f"jitgrad.core.ops (declare a flag on the rows, `core.ops.Flags`, and "
                       f"ask it): {found}")


def test_the_reader_sees_cycles_layers_and_private_imports():
    """The reader itself: a planted cycle, a planted import against the layers and a planted
    private import are found."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == {frozenset("abc")}
    names = {"jitgrad", "jitgrad.lang.symbolic", "jitgrad.api", "jitgrad.core", "jitgrad.core.ir"}
    tree = ast.parse("from jitgrad.lang.symbolic import _apply, Sym\nfrom jitgrad import api\n"
                     "from ..core import ir\napi._converter(1)")
    got = list(imports("jitgrad.frontend.build", tree, names))
    assert ("jitgrad.lang.symbolic", ["_apply", "Sym"]) in got
    assert ("jitgrad.api", []) in got and ("jitgrad", []) not in got and ("jitgrad.api", ["_converter"]) in got
    assert ("jitgrad.core.ir", []) in got
    assert against_layers({"jitgrad.core.ir": {"jitgrad.lang.symbolic"},
                           "jitgrad.backend.numba.emit": {"jitgrad.transforms.reverse"},
                           "jitgrad.backend.numba.lower": {"jitgrad.lang.symbolic"},
                           "jitgrad.tape": {"jitgrad.frontend.parse"},
                           "jitgrad.tape.tensor": {"jitgrad.tape.graph", "jitgrad.lang.symbolic",
                                                   "jitgrad.transforms.reverse", "jitgrad.api"},
                           "jitgrad.api": {"jitgrad.core.ir", "jitgrad.tape"}}) == {
        ("jitgrad.core.ir", "jitgrad.lang.symbolic"),
        ("jitgrad.backend.numba.emit", "jitgrad.transforms.reverse"),
        ("jitgrad.backend.numba.lower", "jitgrad.lang.symbolic"),
        ("jitgrad.tape", "jitgrad.frontend.parse"),
        ("jitgrad.tape.tensor", "jitgrad.transforms.reverse"),
        ("jitgrad.tape.tensor", "jitgrad.api")}
    assert layer_of("jitgrad.tape.tensor") == layer_of("jitgrad.tape") == layer_of("jitgrad.api")


# ----------------------------------------------------------------------------- the contract
# (issue #44): what a pass may read of the reverse transform, one settings value, passes
# declared in their own modules and run from one list.


def test_passes_read_the_reverse_transform_through_its_context():
    """Only the pipeline (which lists its passes) imports `transforms.reverse`: every other
    pass reads the transform's result through `reverse_context.ReverseContext`, a frozen
    dataclass, and never its private state."""
    edges = graph()[0]
    importers = sorted(m for m, targets in edges.items() if "jitgrad.transforms.reverse" in targets)
    assert importers == ["jitgrad.pipeline"], importers
    tree = modules()["jitgrad.transforms.reverse_context"]
    context = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ReverseContext")
    frozen = [k for d in context.decorator_list if isinstance(d, ast.Call)
              for k in d.keywords if k.arg == "frozen" and getattr(k.value, "value", False)]
    assert frozen, "ReverseContext must be a frozen dataclass"


def test_one_settings_value():
    """One class holds how a function is compiled (`core.settings.Settings`): no other class
    is called *Settings or Options, and no other class declares two of its fields (a copy made
    field by field)."""
    fields = {"memory_cap", "recompute", "fuse", "ascending", "chunks"}
    found = []
    for m, tree in modules().items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            declared = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)
                        and isinstance(s.target, ast.Name)}
            if (node.name.endswith("Settings") or node.name == "Options"
                    or len(declared & fields) >= 2):
                found.append(f"{m}.{node.name}")
    assert found == ["jitgrad.core.settings.Settings"], found


def test_gradient_passes_are_declared_in_their_modules():
    """`pipeline.GRADIENT_PASSES` lists `Pass` objects by module (``saving.SAVING``), each
    defined in that module as ``NAME = Pass(...)``: a new pass is one module and one line."""
    mods = modules()
    listed = next(n.value for n in mods["jitgrad.pipeline"].body if isinstance(n, ast.Assign)
                  and any(getattr(t, "id", "") == "GRADIENT_PASSES" for t in n.targets))
    assert isinstance(listed, ast.Tuple) and len(listed.elts) >= 8
    for e in listed.elts:
        assert isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name), ast.dump(e)
        tree = mods[f"jitgrad.transforms.{e.value.id}"]
        assert any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == e.attr for t in n.targets)
                   and isinstance(n.value, ast.Call) and getattr(n.value.func, "id", "") == "Pass"
                   for n in tree.body), f"{e.value.id}.{e.attr} is not declared as a Pass there"


FACADE_LINES = 250  # issue #44: the public class is a thin facade over modules of their own


def test_grad_function_is_a_thin_facade():
    """`api.GradFunction` holds no responsibility of its own beyond the public API: the calling
    conventions (`calling`), the compiled code and the calls into it (`specialisations`) and
    the explanation of a failed call (`explain`) are modules of their own."""
    tree = modules()["jitgrad.api"]
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "GradFunction")
    lines = cls.end_lineno - cls.lineno + 1
    assert lines <= FACADE_LINES, (
        f"GradFunction in jitgrad/api.py is {lines} lines (at most {FACADE_LINES}): move what "
        "it does into the module that holds that responsibility")


# ----------------------------------------------------------------------------- the runtime
# Generated code calls ``_rt.<name>`` (`backend.numba.runtime`, which re-exports the helpers of
# the ``runtime_*`` modules). Each name there is bound explicitly: no module-level
# ``__getattr__`` answers for missing names, and the helpers never reach back into the emitter
# or its tables. The chunk cost model's constants live in one module, with the unit they are in.

RUNTIME = "jitgrad.backend.numba.runtime"
COST_MODEL = "jitgrad.core.chunking"  # the chunk costs and the unit of the work estimate
# What the runtime modules may import from the backend: the compiler's `jit` and each other.
RUNTIME_MAY_IMPORT = {"jitgrad.backend.numba.compile"}


def module_getattrs(tree: ast.Module) -> list[int]:
    """The lines of a module-level ``def __getattr__`` (PEP 562)."""
    return [n.lineno for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__getattr__"]


def _numeric(node) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand)
    if isinstance(node, ast.BinOp):
        return _numeric(node.left) and _numeric(node.right)
    return False


def cost_constants(tree: ast.Module) -> list[str]:
    """The names with a word ``COST`` (``CHUNK_COST``, ``WAKE_COST``) a module binds to a
    number, anywhere in it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if _numeric(value):
            found += [t.id for t in targets
                      if isinstance(t, ast.Name) and "COST" in t.id.upper().split("_")]
    return found


def test_no_module_getattr_in_the_backend():
    """Every ``_rt.<name>`` of generated code is bound by name (or, for a ufunc made on first
    use, by `runtime.bind_ufuncs` before the module compiles), not made up by ``__getattr__``."""
    found = {m: lines for m, tree in modules().items()
             if m.startswith("jitgrad.backend") and (lines := module_getattrs(tree))}
    assert not found, f"module-level __getattr__ in the backend: {found}"


def test_the_runtime_never_imports_the_emitter():
    """The runtime modules import core, prims, `compile` and each other: not `lowering`, the
    emitters or anything else of the backend. And each says what it holds (a docstring)."""
    mods = modules()
    edges = graph()[0]
    runtime = [m for m in mods if m == RUNTIME or m.startswith(RUNTIME + "_")]
    assert len(runtime) > 1, runtime
    bad = {(m, t) for m in runtime for t in edges[m]
           if inside(t, "jitgrad.backend") and t not in RUNTIME_MAY_IMPORT and t not in runtime}
    assert not bad, f"runtime modules importing the rest of the backend: {sorted(bad)}"
    assert all(ast.get_docstring(mods[m]) for m in runtime), [
        m for m in runtime if not ast.get_docstring(mods[m])]


def test_cost_constants_live_with_the_cost_model():
    """The chunk costs are in the unit of the transforms' work estimate: one module
    (`COST_MODEL`) holds both, and no other module has numbers of its own named as costs."""
    mods = modules()
    assert cost_constants(mods[COST_MODEL]), f"{COST_MODEL} has no costs: update COST_MODEL"
    found = {m: names for m, tree in mods.items()
             if m != COST_MODEL and (names := cost_constants(tree))}
    assert not found, f"cost constants outside {COST_MODEL}: {found}"


def test_the_reader_sees_getattr_and_cost_constants():
    tree = ast.parse("X_COST = 4_000\nWAKE_COST: int = -2 * 10\nCOSTLY = 1\nCOST = 'a'\n"
                     "def f():\n    per_cost = 3.5\n"
                     "class C:\n    def __getattr__(self, n): pass\n"
                     "def __getattr__(name):\n    raise AttributeError(name)\n")
    assert cost_constants(tree) == ["X_COST", "WAKE_COST", "per_cost"]
    assert module_getattrs(tree) == [9]


def test_the_reader_sees_name_lists():
    """Tuples, lists and sets of two or more names are found; a single name, a dict, or a list
    with another string in it are not."""
    planted = ast.parse("if p in ('add', 'sub'):\n    x = ['add', 'x']\n    y = {'sub'}\n"
                        "    z = {'add': 1, 'sub': 2}\n    w = ('sub', 'add')")
    assert name_lists(planted, {"add", "sub"}) == [1, 5]
    assert declares_operations("jitgrad.prims.alloc") and declares_operations("jitgrad.core.ops")
    assert not declares_operations("jitgrad.core.ir")
