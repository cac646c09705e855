"""Generators: a function that yields, rewritten as one that returns the array of what it
yields, before the fence reads the function (after `parse._read` has parsed it).

    def powers(x, n):                    def powers(x, n):
        p = 1.0                              _items_c0 = []
        for i in range(n):       ──▶         p = 1.0
            yield p                          for i in range(n):
            p = p * x                            _items_c0.append(p)
                                                 p = p * x
                                             return %items(_items_c0)

The list appended in a loop becomes an array filled in that loop (`desugar_lists`), so the
generator's items are an array; without a loop (``yield a; yield b``) they are the tuple of
the values yielded. The
builder wraps a generator's result in an `build_ast.Iterator`: ``for v in powers(x, 4)`` runs
over it, ``next(g)`` takes its items in order, ``sum(g)`` adds them.

A generator is run to its end where it is called, before its consumer reads an item: the
same values as Python's lazy run whenever the generator only reads its arguments. So it is
refused (at its line, saying what to write) when it writes into an array or an attribute,
when a yield's value is used (``v = yield``, ``send``), for ``yield from``, and for a yield in
a ``while`` loop (its number of items must be known when its loop starts); the builder
refuses a generator called on an array its caller writes into.
"""

from __future__ import annotations

import ast

from jitgrad.core.errors import UnsupportedError

ITEMS = "%items"  # the intrinsic that makes the array of the items (`desugar_lists.INTRINSICS`)
_INSTEAD = "write a function that returns the array of the items, or a loop"


def desugar_generators(fn_node: ast.FunctionDef, fresh, loc) -> None:
    """Rewrite ``fn_node`` and the functions defined in it that yield (see the module); mark
    each with ``jitgrad_generator``."""
    for node in [fn_node, *(n for n in ast.walk(fn_node) if isinstance(n, ast.FunctionDef)
                            and n is not fn_node)]:
        own = list(own_nodes(node))
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own):
            _rewrite(node, own, fresh, loc)


def own_nodes(fn: ast.FunctionDef, stmts=None):
    """The nodes of ``fn``'s body (or of ``stmts`` in it), not entering the functions, lambdas
    and classes defined there (their ``def`` statements are yielded)."""
    stack = list(reversed(fn.body if stmts is None else stmts))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _refuse(what, node, loc):
    raise UnsupportedError(f"{what} in a generator: jitgrad runs a generator to its end where "
                           f"it is called, as the array of its items; {_INSTEAD}", loc(node))


def _rewrite(fn: ast.FunctionDef, own, fresh, loc) -> None:
    yields = set()
    for n in own:
        if isinstance(n, ast.YieldFrom):
            _refuse("yield from", n, loc)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Yield):
            yields.add(id(n.value))
        if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store):
            _refuse("a write into an array or an attribute", n, loc)
        if isinstance(n, (ast.Nonlocal, ast.Global)):
            _refuse("nonlocal or global", n, loc)
        if isinstance(n, ast.While) and any(isinstance(m, ast.Yield)
                                            for m in own_nodes(fn, n.body)):
            _refuse("a yield in a while loop (the number of items must be known when its "
                    "loop starts)", n, loc)
    for n in own:
        if isinstance(n, ast.Yield) and id(n) not in yields:
            _refuse("a yield whose value is used (send)", n, loc)
    in_loops = {id(m) for n in own if isinstance(n, (ast.For, ast.While))
                for m in own_nodes(fn, n.body) if isinstance(m, ast.Yield)}
    if in_loops and len(in_loops) != len(yields):
        _refuse("yields both inside and outside a loop", fn, loc)
    items = fresh("items")
    as_tuple = not in_loops  # a few yields, written out: the tuple of their values

    def items_array(where):
        value = ast.Name(items, ast.Load())
        if not as_tuple:
            value = ast.Call(ast.Name(ITEMS, ast.Load()), [value], [])
        return ast.copy_location(ast.Return(value), where)

    class _Rewrite(ast.NodeTransformer):
        def visit_FunctionDef(self, node):
            return node  # (its own yields are its own)

        def visit_Expr(self, node):
            if isinstance(node.value, ast.Yield):
                value = node.value.value or ast.Constant(None)
                if as_tuple:  # _items = _items + (value,)
                    grown = ast.BinOp(ast.Name(items, ast.Load()), ast.Add(),
                                      ast.Tuple([value], ast.Load()))
                    return ast.copy_location(ast.Assign([ast.Name(items, ast.Store())], grown),
                                             node)
                append = ast.Call(ast.Attribute(ast.Name(items, ast.Load()), "append",
                                                ast.Load()), [value], [])
                return ast.copy_location(ast.Expr(append), node)
            return node

        def visit_Return(self, node):  # (a generator's return value is StopIteration's)
            return items_array(node)

    fn.body = [_Rewrite().visit(s) for s in fn.body]
    empty = ast.Tuple([], ast.Load()) if as_tuple else ast.List([], ast.Load())
    start = ast.copy_location(ast.Assign([ast.Name(items, ast.Store())], empty), fn.body[0])
    fn.body = [start, *fn.body, items_array(fn.body[-1])]
    for n in ast.walk(fn):
        if not hasattr(n, "lineno") and isinstance(n, (ast.expr, ast.stmt)):
            n.lineno, n.col_offset = fn.lineno, fn.col_offset
    ast.fix_missing_locations(fn)
    fn.jitgrad_generator = True
