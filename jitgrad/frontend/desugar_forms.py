"""Local lambdas, the walrus operator and ``functools.reduce``, rewritten as the plain Python
they stand for, before the fence reads the function (after `parse._read` has parsed it, before
`desugar.desugar`).

Takes a function's AST and the function (its globals say what ``reduce`` is); rewrites the AST
in place. Guarantees:

* ``f = lambda t: t * t`` becomes ``def f(t): return t * t`` (a local function: built inline
  where it is called, reading the enclosing names when called, as the lambda does). A lambda
  elsewhere in a statement (``reduce(lambda a, b: a * b, xs)``) becomes a ``def`` of a fresh
  name just before the statement, and the lambda that name.
* ``(n := e)`` in a statement evaluated once where it stands (an assignment, a return, an
  expression statement, an ``if`` test) becomes ``n = e`` just before it, and the expression
  ``n``: only where ``e`` is evaluated whenever the statement is (not in the second operand of
  ``and``/``or``, a branch of ``a if c else b``, a comprehension or a lambda) and ``n`` is not
  read before it in the statement. Elsewhere (a ``while`` test) the fence refuses it.
* ``for``/``while`` ... ``else``: a flag set by the loop's own ``break``s, and the ``else``
  under ``if not`` it after the loop (`_loop_else`).
* ``functools.reduce(f, seq[, init])``: of a tuple or list written out, the nested calls
  ``f(f(init, a), b)``; of a generator expression or a list comprehension, or any other
  sequence, the loop that folds it, just before the statement (its variables renamed, as
  `desugar` does); of nothing without ``init``, TypeError as Python's.
* New nodes carry the location of what they replace.
"""

from __future__ import annotations

import ast
import copy
import functools
import types as pytypes

import numpy as np

from jitgrad.frontend.desugar import (
    ROOTS,
    SCOPES,
    Fresh,
    Rename,
    Swap,
    locate,
    outermost,
    renamable,
    rewrite_blocks,
    targets,
)


def desugar_forms(fn_node: ast.FunctionDef, fn, fresh: Fresh) -> None:
    """Rewrite ``fn_node``'s lambdas, walruses and reduces (see the module)."""
    forms = _Forms(fn, fn_node, fresh)
    _keep_loop_targets(fn_node, fresh)
    fn_node.body = _inline_named_generators(fn_node.body, fn_node, forms)
    fn_node.body = [_MapFilter(forms).visit(s) for s in fn_node.body]
    fn_node.body = _statements(fn_node.body, forms)


class _Forms:
    def __init__(self, fn, fn_node, fresh):
        self.fresh = fresh
        g = getattr(fn, "__globals__", {})
        bound = {n.id for n in ast.walk(fn_node) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Store)} | set(getattr(fn.__code__, "co_freevars", ()))
        self.reduce_names = {k for k, v in g.items() if v is functools.reduce} - bound
        self.builtin_names = {"map", "filter"} - bound - set(g)  # Python's own here
        # numba.typed.List / Dict / Set by their names here: made empty, they are [], {}, set()
        self.typed_names = {k: kind for k, v in g.items()
                            if (kind := _typed_kind(v)) is not None and k not in bound}
        self.set_is_builtin = "set" not in bound and "set" not in g
        self.tuple_is_builtin = "tuple" not in bound and "tuple" not in g
        self.numpy_names = {k for k, v in g.items() if v is np} - bound
        self.fromiter_names = {k for k, v in g.items() if v is np.fromiter} - bound
        self.functools_names = {k for k, v in g.items() if v is functools
                                or (isinstance(v, pytypes.ModuleType)
                                    and v.__name__ == "functools")} - bound

    def is_generator(self, node) -> bool:
        """A generator expression, or ``map(...)`` / ``filter(...)`` (Python's own)."""
        return isinstance(node, ast.GeneratorExp) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in self.builtin_names)

    def is_fromiter(self, node) -> bool:
        f = node.func
        return (isinstance(f, ast.Name) and f.id in self.fromiter_names) or (
            isinstance(f, ast.Attribute) and f.attr == "fromiter"
            and isinstance(f.value, ast.Name) and f.value.id in self.numpy_names)

    def is_reduce(self, node) -> bool:
        if not (isinstance(node, ast.Call) and not node.keywords and 2 <= len(node.args) <= 3
                and not any(isinstance(a, ast.Starred) for a in node.args)):
            return False
        f = node.func
        return (isinstance(f, ast.Name) and f.id in self.reduce_names) or (
            isinstance(f, ast.Attribute) and f.attr == "reduce"
            and isinstance(f.value, ast.Name) and f.value.id in self.functools_names)


def _statements(stmts: list, forms: _Forms) -> list:
    out = []
    for s in stmts:
        rewrite_blocks(s, lambda block: _statements(block, forms))
        if isinstance(s, (ast.For, ast.While)) and s.orelse:
            out += _loop_else(s, forms.fresh)
            continue
        if (isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Lambda)):
            out.append(_lambda_def(s.targets[0].id, s.value, forms))  # f = lambda t: ...
            continue
        before = []
        root = "test" if isinstance(s, ast.If) else "value" if isinstance(s, ROOTS) else None
        if root is not None and getattr(s, root, None) is not None:
            expr = getattr(s, root)
            expr, hoisted = _hoist_lambdas(expr, forms.fresh)
            for d in hoisted:  # (a lambda in the lambda: `lambda x: vmap(lambda y: ...)`)
                d.body = _statements(d.body, forms)
            before += hoisted
            expr, hoisted = _hoist_walruses(expr)
            before += hoisted
            expr, hoisted = _reduces(expr, forms)
            before += hoisted
            setattr(s, root, expr)
        for b in before:
            locate(b, s)
        out += _statements(before, forms)  # (a reduce inside a folded item, too)
        out.append(s)
    return out


def _inline_named_generators(stmts: list, fn_node, forms: _Forms) -> list:
    """``it = map(f, xs)`` (or a generator expression), read once, in the next statement
    (``return np.fromiter(it, dtype=float)``), and nowhere else: the generator written where
    it is read, which runs it there as Python does (its iterable, read by the assignment, is
    a name or an expression of names the next statement cannot have changed yet)."""
    out = []
    for k, s in enumerate(stmts):
        rewrite_blocks(s, lambda block: _inline_named_generators(block, fn_node, forms))
        nxt = stmts[k + 1] if k + 1 < len(stmts) else None
        if (nxt is not None and isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and forms.is_generator(s.value)):
            name = s.targets[0].id
            uses = [n for n in ast.walk(fn_node) if isinstance(n, ast.Name) and n.id == name]
            reads = [n for n in ast.walk(nxt) if isinstance(n, ast.Name) and n.id == name
                     and isinstance(n.ctx, ast.Load)]
            if len(uses) == 2 and len(reads) == 1:  # (the assignment, and this read)
                value = s.value
                Swap({id(reads[0]): value}).visit(nxt)
                continue
        out.append(s)
    return out


def _keep_loop_targets(fn_node, fresh) -> None:
    """``for i in range(n): ...`` whose ``i`` is read after the loop (Python leaves it at the
    last item): the loop runs over a fresh name and its body starts with ``i = <that name>``,
    so that the builder carries ``i`` out of the loop as it carries any name assigned in it
    (`build_loops.Loops.seed_names`). Loops whose target is not read elsewhere are left as they
    are."""
    loops = [n for n in ast.walk(fn_node) if isinstance(n, ast.For)
             and isinstance(n.target, ast.Name)]
    for loop in loops:
        name = loop.target.id
        if not _read_outside(fn_node, loop, name):
            continue
        item = fresh(name)
        loop.target = ast.copy_location(ast.Name(item, ast.Store()), loop.target)
        keep = ast.Assign([ast.Name(name, ast.Store())], ast.Name(item, ast.Load()))
        locate(keep, loop)
        loop.body.insert(0, keep)


def _read_outside(fn_node, loop, name) -> bool:
    """Whether ``name`` is read outside ``loop``, other than inside another loop over
    ``name`` or a scope of its own."""
    skipped = {id(n) for n in ast.walk(loop)}
    for node in ast.walk(fn_node):
        if node is not loop and node is not fn_node and (isinstance(node, SCOPES) or (
                isinstance(node, ast.For) and isinstance(node.target, ast.Name)
                and node.target.id == name)):
            skipped |= {id(n) for n in ast.walk(node)}
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               and id(n) not in skipped for n in ast.walk(fn_node))


class _MapFilter(ast.NodeTransformer):
    """``map(f, xs, ys)`` as the generator expression ``(f(a, b) for a, b in zip(xs, ys))``,
    and ``filter(f, xs)`` as ``(a for a in xs if f(a))`` (``filter(None, xs)``: ``if a``), so
    that what takes a comprehension (``sum``, ``list``, ``np.array(list(...))``, a ``for``)
    takes them too."""

    def __init__(self, forms: _Forms):
        self.forms = forms

    def visit_Call(self, node):
        node = self.generic_visit(node)
        f = node.func
        if self.forms.is_fromiter(node) and node.args and isinstance(
                node.args[0], ast.GeneratorExp) and len(node.args) <= 2 and all(
                k.arg == "dtype" for k in node.keywords) and self.forms.numpy_names:
            # np.fromiter(gen, dtype): the array of its items, np.array([...], dtype)
            gen = node.args[0]
            comp = ast.ListComp(gen.elt, gen.generators)
            numpy = f.value if isinstance(f, ast.Attribute) else ast.Name(
                min(self.forms.numpy_names), ast.Load())
            made = ast.Call(ast.Attribute(numpy, "array", ast.Load()), [comp, *node.args[1:]],
                            node.keywords)
            locate(made, node)
            return made
        typed = self.typed_container(node)
        if typed is not None:
            return typed
        if not (isinstance(f, ast.Name) and f.id in self.forms.builtin_names
                and not node.keywords and len(node.args) >= 2
                and not any(isinstance(a, ast.Starred) for a in node.args)):
            return node
        fn, seqs = node.args[0], node.args[1:]
        if f.id == "filter" and len(seqs) != 1:
            return node
        names = [self.forms.fresh("item") for _ in seqs]

        def load(n):
            return ast.Name(id=n, ctx=ast.Load())
        target = ast.Name(id=names[0], ctx=ast.Store()) if len(names) == 1 else ast.Tuple(
            [ast.Name(id=n, ctx=ast.Store()) for n in names], ast.Store())
        it = seqs[0] if len(seqs) == 1 else ast.Call(ast.Name("zip", ast.Load()), seqs, [])
        if f.id == "map":
            elt, ifs = ast.Call(fn, [load(n) for n in names], []), []
        else:
            test = load(names[0]) if isinstance(fn, ast.Constant) and fn.value is None \
                else ast.Call(fn, [load(names[0])], [])
            elt, ifs = load(names[0]), [test]
        gen = ast.GeneratorExp(elt, [ast.comprehension(target, it, ifs, is_async=0)])
        gen.jitgrad_map_filter = True  # (its names are fresh)
        locate(gen, node)
        return gen

    def visit_Assign(self, node):
        """``a, b = map(f, (x, y))``: unpacking runs the generator to its end, so the value is
        ``tuple([f(v) for v in (x, y)])``, unrolled while building over a sequence whose
        length is known then (as ``zip`` and ``enumerate`` are)."""
        call = node.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id in ("list", "tuple") and len(call.args) == 1
                and not call.keywords and len(node.targets) == 1
                and isinstance(node.targets[0], (ast.Tuple, ast.List))
                and getattr(self.visit(call.args[0]), "jitgrad_map_filter", False)):
            # a, b = list(map(f, (a, b))): unpacked, the list is its items, as the map is
            call = call.args[0]
            node.value = call
        node = self.generic_visit(node)
        gen = node.value
        if not (getattr(gen, "jitgrad_map_filter", False) and len(node.targets) == 1
                and isinstance(node.targets[0], (ast.Tuple, ast.List))):
            return node
        unrolled = _map_of_displays(call)
        if unrolled is not None:  # map(f, (x, y)): (f(x), f(y)), items of any rank
            node.value = unrolled
        elif self.forms.tuple_is_builtin:
            comp = ast.ListComp(gen.elt, gen.generators)
            node.value = ast.Call(ast.Name("tuple", ast.Load()), [comp], [])
            for made in (comp, node.value):
                locate(made, gen)
        return node

    def visit_For(self, node):
        """``for v in map(f, xs)``: ``for a in xs: v = f(a)``; ``for v in filter(f, xs)``:
        ``for a in xs: if f(a): v = a`` and the body under that ``if``."""
        node = self.generic_visit(node)
        gen = node.iter
        if not getattr(gen, "jitgrad_map_filter", False) or node.orelse:
            return node
        (comp,) = gen.generators
        assign = ast.Assign([node.target], gen.elt)
        locate(assign, node)
        body = [assign, *node.body]
        if comp.ifs:
            test = comp.ifs[0] if len(comp.ifs) == 1 else ast.BoolOp(ast.And(), comp.ifs)
            body = [ast.If(test, body, [])]
        loop = ast.For(comp.target, comp.iter, body, [], None)
        locate(loop, node)
        return loop

    def typed_container(self, node):
        """``List()``, ``Dict.empty(...)``, ``List.empty_list(...)``, ``Set()`` of
        numba.typed (made empty, no arguments needed): ``[]``, ``{}``, ``set()``."""
        f, names = node.func, self.forms.typed_names
        kind = None
        if isinstance(f, ast.Name) and f.id in names and not node.args and not node.keywords:
            kind = names[f.id]
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id in names and f.attr in ("empty", "empty_list"):
            kind = names[f.value.id]
        if kind == "list":
            made = ast.List([], ast.Load())
        elif kind == "dict":
            made = ast.Dict([], [])
        elif kind == "set" and self.forms.set_is_builtin:
            made = ast.Call(ast.Name("set", ast.Load()), [], [])
        else:
            return None
        locate(made, node)
        return made

    def visit_Lambda(self, node):
        return self.generic_visit(node)


def _map_of_displays(call):
    """``map(f, (x, y), (a, b))`` with the sequences written out, of one length, and ``f`` a
    name or an attribute of one (read again without effect): ``(f(x, a), f(y, b))``; else
    None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "map"):
        return None
    fn, seqs = call.args[0], call.args[1:]
    head = fn
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name) or not all(
            isinstance(q, (ast.Tuple, ast.List)) and not any(
                isinstance(e, ast.Starred) for e in q.elts) for q in seqs):
        return None
    if len({len(q.elts) for q in seqs}) != 1:
        return None  # (zip stops at the shortest: the generator says so)
    items = [ast.Call(copy.deepcopy(fn), list(row), []) for row in zip(*(q.elts for q in seqs))]
    made = ast.Tuple(items, ast.Load())
    locate(made, call)
    return made


def _typed_kind(v):
    """"list", "dict" or "set" for numba.typed's List, Dict and Set (by their module: only
    the backend imports numba)."""
    module = str(getattr(v, "__module__", "") or "")
    if isinstance(v, type) and module.startswith("numba.typed."):
        return {"List": "list", "Dict": "dict", "Set": "set"}.get(v.__name__)
    return None


def _loop_else(loop, fresh) -> list:
    """``for``/``while`` ... ``else: E`` as ``broke = False``, the loop with each of its own
    ``break``s setting ``broke = True`` first, then ``if not broke: E``."""
    broke = fresh("broke")

    def name(ctx):
        return ast.Name(id=broke, ctx=ctx)

    def marked(stmts):
        out = []
        for st in stmts:
            if isinstance(st, ast.Break):
                flag = ast.Assign(targets=[name(ast.Store())], value=ast.Constant(True))
                out.append(ast.fix_missing_locations(ast.copy_location(flag, st)))
            elif not isinstance(st, (ast.For, ast.While, ast.FunctionDef)):
                rewrite_blocks(st, marked)  # a break in a nested loop is that loop's
            out.append(st)
        return out

    orelse, loop.orelse = loop.orelse, []
    loop.body = marked(loop.body)
    start = ast.Assign(targets=[name(ast.Store())], value=ast.Constant(False))
    after = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=name(ast.Load())), body=orelse,
                   orelse=[])
    for node in (start, after):
        locate(node, loop)
    return [start, loop, after]


def _as_def(name: str, lam: ast.Lambda) -> ast.FunctionDef:
    node = ast.FunctionDef(name=name, args=lam.args, body=[ast.Return(lam.body)],
                           decorator_list=[], returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:
        node.type_params = []
    ast.copy_location(node, lam)
    locate(node, lam)
    return node


def _lambda_def(name: str, lam: ast.Lambda, forms) -> ast.FunctionDef:
    """``name = lambda ...`` as a ``def``, the lambdas in its body hoisted in turn."""
    node = _as_def(name, lam)
    node.body = _statements(node.body, forms)
    return node


def _hoist_lambdas(expr, fresh):
    lambdas = [expr] if isinstance(expr, ast.Lambda) else outermost(
        expr, lambda n: isinstance(n, ast.Lambda))  # (`return lambda x: ...` too)
    if not lambdas:
        return expr, []
    defs, replaced = [], {}
    for lam in lambdas:
        name = fresh("lambda")
        defs.append(_as_def(name, lam))
        replaced[id(lam)] = ast.copy_location(ast.Name(name, ast.Load()), lam)
    return Swap(replaced).visit(expr), defs


def _walruses(root) -> list:
    """The walruses of ``root`` evaluated whenever ``root`` is, innermost first."""
    found = []

    def visit(node, always=True):
        if isinstance(node, SCOPES):
            return
        if isinstance(node, ast.BoolOp):
            visit(node.values[0], always)
            for v in node.values[1:]:
                visit(v, False)
            return
        if isinstance(node, ast.IfExp):
            visit(node.test, always)
            visit(node.body, False)
            visit(node.orelse, False)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, always)
        if isinstance(node, ast.NamedExpr) and always:
            found.append(node)

    visit(root)
    return found


def _hoist_walruses(expr):
    hoisted, replaced = [], {}
    for w in _walruses(expr):
        name = w.target.id
        end = (w.end_lineno, w.end_col_offset)
        read_before = any(isinstance(n, ast.Name) and n.id == name and n is not w.target
                          and (n.lineno, n.col_offset) < end for n in ast.walk(expr))
        if read_before:
            continue  # its old value is read first: the fence refuses it
        value = Swap(replaced).visit(w.value)
        hoisted.append(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), w))
        replaced[id(w)] = ast.copy_location(ast.Name(name, ast.Load()), w)
    if not replaced:
        return expr, []
    return Swap(replaced).visit(expr), hoisted


def _reduces(expr, forms):
    calls = outermost(expr, forms.is_reduce)
    if not calls:
        return expr, []
    before, replaced = [], {}
    for call in calls:
        value, loop = _reduce(call, forms)
        before += loop
        replaced[id(call)] = ast.copy_location(value, call) if not loop else value
    return Swap(replaced).visit(expr), before


def _call(f, a, b):
    return ast.Call(copy.deepcopy(f), [a, b], [])


def _reduce(call: ast.Call, forms: _Forms):
    """(the expression that stands for ``call``, the statements computing it first)."""
    f, seq = call.args[0], call.args[1]
    init = call.args[2] if len(call.args) == 3 else None
    if isinstance(seq, (ast.Tuple, ast.List)) and not any(
            isinstance(e, ast.Starred) for e in seq.elts) and (seq.elts or init is not None):
        items = list(seq.elts)
        acc = init if init is not None else items.pop(0)
        for e in items:
            acc = ast.copy_location(_call(f, acc, e), e)
        return acc, []
    fresh = forms.fresh
    result = fresh("reduce")
    count = fresh("reduce_n") if init is None else None

    def name(n, store=False):
        return ast.Name(n, ast.Store() if store else ast.Load())

    if isinstance(seq, (ast.GeneratorExp, ast.ListComp)) and renamable(seq):
        mapping = {n: fresh(n.lstrip("_") or "v") for g in seq.generators
                   for n in targets(g.target)}
        rename = Rename(mapping)
        elt = rename.visit(seq.elt)
        loops = [(rename.visit(g.target), rename.visit(g.iter), [rename.visit(c) for c in g.ifs])
                 for g in seq.generators]
    else:
        item = fresh("item")
        elt = name(item)
        loops = [(name(item, True), seq, [])]
    if init is None:
        inner = [ast.If(ast.Compare(name(count), [ast.Eq()], [ast.Constant(0)]),
                        [ast.Assign([name(result, True)], elt)],
                        [ast.Assign([name(result, True)],
                                    _call(f, name(result), copy.deepcopy(elt)))]),
                 ast.AugAssign(name(count, True), ast.Add(), ast.Constant(1))]
        first = [ast.Assign([name(result, True)], ast.Constant(0.0)),
                 ast.Assign([name(count, True)], ast.Constant(0))]
    else:
        inner = [ast.Assign([name(result, True)], _call(f, name(result), elt))]
        first = [ast.Assign([name(result, True)], init)]
    body = inner
    for target, it, ifs in reversed(loops):
        for cond in reversed(ifs):
            body = [ast.If(cond, body, [])]
        body = [ast.For(target, it, body, [])]
    after = []
    if count is not None:  # Python: reduce() of nothing without an initial value raises
        after = [ast.If(ast.Compare(name(count), [ast.Eq()], [ast.Constant(0)]),
                        [ast.Raise(ast.Call(ast.Name("TypeError", ast.Load()), [ast.Constant(
                            "reduce() of empty iterable with no initial value")], []), None)],
                        [])]
    statements = first + body + after
    for s in statements:
        locate(s, call)
    return ast.copy_location(name(result), call), statements
