"""Generator expressions and comprehensions reduced by ``sum``, ``max``, ``min``, ``any`` or
``all``, rewritten as the loops they stand for, before the fence reads the function.

Takes a function's AST (`parse._read`, before the fence) and the names that do not mean
Python's builtins there; rewrites it in place. Guarantees:

* ``sum(f(x) for x in xs if c(x))`` (or of a list comprehension ``[...]``, with any number of
  ``for`` and ``if`` clauses) in a statement becomes, just before that statement, the loop it
  stands for, accumulating into a fresh name, and the call becomes that name. ``max``/``min``
  keep the first value and compare the rest with Python's ``max(a, b)`` (an empty sequence
  raises ValueError, as Python does); ``any``/``all`` set a flag.
* The comprehension's own variables get fresh names (Python keeps them local to it): a
  function's ``x`` is never clobbered by ``sum(x for x in xs)``.
* Every new node carries the comprehension's location, so messages and the generated code's
  comments point at the user's line.
* Only where the statement is evaluated once where it stands: an assignment, an augmented
  assignment, a return, an expression statement, or an ``if`` test. Anywhere else (a
  ``while`` test, a nested function), and for a reduction whose name is not Python's builtin
  there, the comprehension is left as it was, for the fence to refuse with its hint. The loop
  runs every iteration (Python's ``any`` stops at the first true item: only a raising item
  after it behaves differently).
* `GeneratorCalls` (used by `desugar_lists`): ``list(...)``/``tuple(...)`` of a generator and
  ``*(... for ...)`` as the list comprehension they amount to.
"""

from __future__ import annotations

import ast
import copy
import itertools

# The builtins that fold a comprehension (`_loop_for`), and how: a running total, the extreme
# so far, or a flag.
REDUCERS = {"sum": "total", "max": "extreme", "min": "extreme", "any": "flag", "all": "flag"}
# Statements whose ``value`` is evaluated once where they stand (a pass may put statements
# before them); an ``if`` has its ``test``.
ROOTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)
# Nodes with names of their own: a pass looking at a statement's expressions stops at them.
SCOPES = (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.FunctionDef)


def desugar(fn_node: ast.FunctionDef, rebound: set[str], fresh: Fresh | None = None) -> None:
    """Rewrite the reductions of comprehensions in ``fn_node``'s body (see the module).
    ``rebound``: names that do not mean the builtins here (assigned in the function, globals,
    closure variables); ``fresh``: the maker of new names (`Fresh.of`), shared by the passes."""
    fresh = fresh or Fresh.of(fn_node)
    fn_node.body = _statements(fn_node.body, rebound, fresh)


class Fresh:
    """New names (``_x_c0``) that no name of the function takes."""

    def __init__(self, taken: set[str]):
        self.taken = taken
        self.count = itertools.count()

    @classmethod
    def of(cls, fn_node: ast.FunctionDef) -> Fresh:
        taken = {n.id for n in ast.walk(fn_node) if isinstance(n, ast.Name)}
        taken |= {a.arg for a in ast.walk(fn_node) if isinstance(a, ast.arg)}
        return cls(taken)

    def __call__(self, stem: str) -> str:
        while True:
            name = f"_{stem}_c{next(self.count)}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def _statements(stmts: list, rebound, fresh) -> list:
    out = []
    for s in stmts:
        rewrite_blocks(s, lambda block: _statements(block, rebound, fresh))
        root = s.test if isinstance(s, ast.If) else s if isinstance(s, ROOTS) else None
        replaced = {}
        for call in ([] if root is None else _outermost_reductions(root, rebound)):
            loop, result = _loop_for(call, fresh)
            out += _statements(loop, rebound, fresh)  # (a reduction inside the item, too)
            replaced[id(call)] = ast.copy_location(ast.Name(result, ast.Load()), call)
        if replaced and isinstance(s, ast.If):
            s.test = Swap(replaced).visit(s.test)
        elif replaced:
            s = Swap(replaced).visit(s)
        out.append(s)
    return out


class Swap(ast.NodeTransformer):
    """Each node of ``replaced`` (keyed by identity: ``id(node)``) becomes its value: a
    reduction call the name its loop computed, a lambda the name of its ``def``."""

    def __init__(self, replaced: dict):
        self.replaced = replaced

    def visit(self, node):
        if id(node) in self.replaced:
            return self.replaced[id(node)]
        return super().visit(node)


def rewrite_blocks(s, rewrite) -> None:
    """Replace every statement list nested directly in the statement ``s`` (its body, ``else``,
    ``finally`` and handlers; not a nested ``def``'s body) by ``rewrite(that list)``."""
    if isinstance(s, ast.FunctionDef):
        return
    for field in ("body", "orelse", "finalbody"):
        if isinstance(getattr(s, field, None), list):
            setattr(s, field, rewrite(getattr(s, field)))
    for h in getattr(s, "handlers", []):
        h.body = rewrite(h.body)


def outermost(root, match) -> list:
    """The nodes under ``root`` (itself included) that ``match``, not inside another that
    does, nor inside a lambda, a comprehension or a def (`SCOPES`)."""
    found = []

    def visit(node):
        if match(node):
            found.append(node)
            return
        if isinstance(node, SCOPES):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(root)
    return found


def _outermost_reductions(root, rebound) -> list:
    """The reduction calls in ``root`` not inside another comprehension or a lambda."""
    return outermost(root, lambda node: _is_reduction(node, rebound))


def _is_reduction(node, rebound) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in REDUCERS and node.func.id not in rebound
            and len(node.args) == 1 and not node.keywords
            and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))
            and renamable(node.args[0]))


def targets(target) -> list[str] | None:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    return None


def renamable(comp) -> bool:
    """Plain name targets, no async clause, and no comprehension inside that binds one of
    its names again (renaming both to one name would change what they mean)."""
    names = []
    for g in comp.generators:
        t = targets(g.target)
        if t is None or g.is_async:
            return False
        names += t
    for sub in ast.walk(comp):
        if sub is not comp and isinstance(sub, (ast.GeneratorExp, ast.ListComp, ast.SetComp,
                                                ast.DictComp)):
            inner = [n for g in sub.generators for n in (targets(g.target) or [])]
            if set(inner) & set(names):
                return False
    return True


class Rename(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if node.id in self.mapping:
            return ast.copy_location(ast.Name(self.mapping[node.id], node.ctx), node)
        return node


def _loop_for(call: ast.Call, fresh) -> tuple[list, str]:
    """The statements computing ``call`` (a reduction of a comprehension) into a fresh name,
    and that name."""
    which, comp = call.func.id, call.args[0]
    kind = REDUCERS[which]
    mapping = {}
    for g in comp.generators:
        for name in targets(g.target):
            mapping[name] = fresh(name.lstrip("_") or "v")
    rename = Rename(mapping)
    result = fresh(which)
    count = fresh(which + "_n") if kind == "extreme" else None

    def name(n, store=False):
        return ast.Name(n, ast.Store() if store else ast.Load())

    elt = rename.visit(comp.elt)
    if kind == "total":
        inner = [ast.AugAssign(name(result, True), ast.Add(), elt)]
        first = [ast.Assign([name(result, True)], ast.Constant(0))]
    elif kind == "extreme":
        pick = ast.Call(ast.Name(which, ast.Load()), [name(result), copy.deepcopy(elt)], [])
        inner = [ast.If(ast.Compare(name(count), [ast.Eq()], [ast.Constant(0)]),
                        [ast.Assign([name(result, True)], elt)],
                        [ast.Assign([name(result, True)], pick)]),
                 ast.AugAssign(name(count, True), ast.Add(), ast.Constant(1))]
        first = [ast.Assign([name(result, True)], ast.Constant(0.0)),
                 ast.Assign([name(count, True)], ast.Constant(0))]
    else:  # a flag: any, all
        test = elt if which == "any" else ast.UnaryOp(ast.Not(), elt)
        inner = [ast.If(test, [ast.Assign([name(result, True)],
                                          ast.Constant(which == "any"))], [])]
        first = [ast.Assign([name(result, True)], ast.Constant(which == "all"))]
    body = inner
    for g in reversed(comp.generators):
        for cond in reversed(g.ifs):
            body = [ast.If(rename.visit(cond), body, [])]
        target = rename.visit(g.target)
        body = [ast.For(target, rename.visit(g.iter), body, [])]
    after = []
    if count is not None:  # Python: max() of nothing raises
        after = [ast.If(ast.Compare(name(count), [ast.Eq()], [ast.Constant(0)]),
                        [ast.Raise(ast.Call(ast.Name("ValueError", ast.Load()),
                                            [ast.Constant(f"{which}() arg is an empty "
                                                          "sequence")], []), None)], [])]
    statements = first + body + after
    for s in statements:
        locate(s, comp)
    return statements, result


def locate(node, like) -> None:
    """Give ``node`` and the nodes under it that have no location ``like``'s."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.expr, ast.stmt)) and not hasattr(sub, "lineno"):
            ast.copy_location(sub, like)


def int_literal(node) -> int | None:
    """The integer a literal such as ``2`` or ``-1`` spells, else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def hashable(value) -> bool:
    """Whether ``value`` can be a key of a dict or set (a table lookup, a constant's key)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def replace_statement(root, old, new: list) -> None:
    """Put the statements ``new`` where the statement ``old`` is, under ``root``."""
    for node in ast.walk(root):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is old for s in block):
                k = next(i for i, s in enumerate(block) if s is old)
                block[k:k + 1] = new
                return
        for h in getattr(node, "handlers", []):
            if any(s is old for s in h.body):
                k = next(i for i, s in enumerate(h.body) if s is old)
                h.body[k:k + 1] = new
                return
    raise AssertionError("the append is not in the loop")


class GeneratorCalls(ast.NodeTransformer):
    """``list(v * 2 for v in x)``: the list comprehension ``[v * 2 for v in x]``;
    ``tuple(v * 2 for v in x)``: ``tuple([v * 2 for v in x])`` (the tuple of its items where
    their number is known while building, as over a tuple's items); ``f(*(g(v) for v in x))``
    and ``(*(g(v) for v in x),)``: ``*tuple([g(v) for v in x])`` (unpacking runs a generator
    to its end, so it is the tuple of its items); ``dict((k, v) for k in keys)``: the dict
    comprehension ``{k: v for k in keys}``."""

    def __init__(self, shadowed):
        self.shadowed = shadowed  # name -> whether the function binds it or reads a global of it

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if (isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple")
                and not self.shadowed(node.func.id)
                and len(node.args) == 1 and not node.keywords
                and isinstance(node.args[0], ast.GeneratorExp)):
            gen = node.args[0]
            comp = ast.copy_location(ast.ListComp(gen.elt, gen.generators), gen)
            if node.func.id == "tuple":
                node.args = [comp]
                return node
            return ast.copy_location(comp, node)
        if (isinstance(node.func, ast.Name) and node.func.id == "dict"
                and not self.shadowed("dict") and len(node.args) == 1 and not node.keywords
                and isinstance(node.args[0], ast.GeneratorExp)
                and isinstance(node.args[0].elt, ast.Tuple) and len(node.args[0].elt.elts) == 2):
            gen = node.args[0]  # dict((k, v) for k in keys): {k: v for k in keys}
            key, value = gen.elt.elts
            return ast.copy_location(ast.DictComp(key, value, gen.generators), node)
        return node

    def visit_Starred(self, node):
        node = self.generic_visit(node)
        if isinstance(node.value, ast.GeneratorExp) and not self.shadowed("tuple"):
            gen = node.value
            comp = ast.copy_location(ast.ListComp(gen.elt, gen.generators), gen)
            tuple_of = ast.Call(ast.Name("tuple", ast.Load()), [comp], [])
            node.value = ast.copy_location(tuple_of, gen)
        return node

    def visit_Lambda(self, node):
        return node
