"""Recursion whose depth is known only at run time, built as the two loops it stands for.

A function of the form

    def r(c, t, i):
        if i == len(c) - 1:          # the test that ends it
            return c[i]              # the base value
        return c[i] + t * r(c, t, i + 1)   # one call of itself, its counters stepped

(one test, then one expression calling the function once, every parameter passed on
unchanged except integer counters stepped by a constant) is built, where the test is known
only at run time (`build_calls.Calls.inline`), as

    q = i; depth = 0
    while not (q == len(c) - 1):     # how deep the calls go (Python's RecursionError past
        q = q + 1; depth += 1        # its recursion limit)
    acc = c[q]
    for k in range(depth - 1, -1, -1):   # the calls returning, deepest first
        q = i + k * 1
        acc = c[q] + t * acc

the same values in the same order of operations, so the derivative is the loop's. Where the
test is known while building (a constant depth, a tuple's length) the calls are built in
place as before. Any other recursion whose depth is known only at run time is refused.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import sys


@dataclasses.dataclass
class LinearRecursion:
    test: ast.expr  # the test that ends the recursion
    base: ast.expr  # the value where it holds
    step: ast.expr  # the value where it does not, holding the one call of itself
    call: ast.Call  # that call
    counters: dict  # parameter name -> its step (an int: +1, -1, ...)


def linear_recursion(src) -> LinearRecursion | None:
    """The plan of ``src`` (a `parse.FunctionSource`) if it has the form of the module, else
    None."""
    node, fn = src.node, src.fn
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(
        s.value, ast.Constant) and isinstance(s.value.value, str))]
    if not body or not isinstance(body[0], ast.If):
        return None
    first = body[0]
    rest = first.orelse if first.orelse else body[1:]
    if first.orelse and len(body) != 1:
        return None
    if not (len(first.body) == 1 and isinstance(first.body[0], ast.Return)
            and first.body[0].value is not None and len(rest) == 1
            and isinstance(rest[0], ast.Return) and rest[0].value is not None):
        return None
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
        return None
    params = [p.arg for p in a.args]
    step = rest[0].value
    calls = [c for c in ast.walk(step) if isinstance(c, ast.Call)
             and isinstance(c.func, ast.Name) and c.func.id == fn.__name__]
    if len(calls) != 1 or _unwrapped(fn.__globals__.get(fn.__name__)) is not fn:
        return None
    call = calls[0]
    if call.keywords or len(call.args) != len(params) or any(
            _calls(n, fn.__name__) for n in (first.test, first.body[0].value)):
        return None
    counters = {}
    for p, arg in zip(params, call.args):
        if isinstance(arg, ast.Name) and arg.id == p:
            continue
        if (isinstance(arg, ast.BinOp) and isinstance(arg.op, (ast.Add, ast.Sub))
                and isinstance(arg.left, ast.Name) and arg.left.id == p
                and isinstance(arg.right, ast.Constant) and type(arg.right.value) is int
                and arg.right.value):
            counters[p] = arg.right.value if isinstance(arg.op, ast.Add) else -arg.right.value
            continue
        return None
    if not counters or any(isinstance(n, ast.Name) and n.id in counters and isinstance(
            n.ctx, ast.Store) for n in ast.walk(node)):
        return None
    return LinearRecursion(first.test, first.body[0].value, step, call, counters)


def _unwrapped(value):
    """The Python function behind a global (a Numba dispatcher's, a decorator's)."""
    for attr in ("py_func", "__wrapped__"):
        inner = getattr(value, attr, None)
        if inner is not None and inner is not value:
            return _unwrapped(inner)
    return value


def _calls(node, name) -> bool:
    return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == name
               for c in ast.walk(node))


def loop_form(plan: LinearRecursion, where: ast.AST, tag: str) -> tuple[list, str]:
    """The statements of the two loops (see the module), located at ``where``, and the
    hidden name that holds the result. Hidden names end in ``tag``."""
    depth, acc, k = f"%depth{tag}", f"%acc{tag}", f"%k{tag}"
    q = {p: f"%{p}{tag}" for p in plan.counters}

    def renamed(expr, call_value=None):
        expr = copy.deepcopy(expr)

        class Swap(ast.NodeTransformer):
            def visit_Name(self, n):
                if n.id in q and isinstance(n.ctx, ast.Load):
                    return ast.copy_location(ast.Name(q[n.id], ast.Load()), n)
                return n

            def visit_Call(self, n):
                if call_value is not None and ast.dump(n) == ast.dump(plan.call):
                    return ast.copy_location(ast.Name(call_value, ast.Load()), n)
                self.generic_visit(n)
                return n
        return Swap().visit(expr)

    def name(n, store=False):
        return ast.Name(n, ast.Store() if store else ast.Load())

    def assign(target, value):
        return ast.Assign([name(target, True)], value)

    def plus(a, b):
        return ast.BinOp(a, ast.Add(), b)

    limit = sys.getrecursionlimit()
    stmts = [assign(depth, ast.Constant(0)), *(assign(q[p], name(p)) for p in q),
             ast.While(ast.UnaryOp(ast.Not(), renamed(plan.test)), [
                 *(assign(q[p], plus(name(q[p]), ast.Constant(s)))
                   for p, s in plan.counters.items()),
                 assign(depth, plus(name(depth), ast.Constant(1))),
                 ast.If(ast.Compare(name(depth), [ast.Gt()], [ast.Constant(limit)]), [
                     ast.Raise(ast.Call(name("RecursionError"), [ast.Constant(
                         "maximum recursion depth exceeded")], []), None)], [])], []),
             assign(acc, renamed(plan.base)),
             ast.For(name(k, True), ast.Call(name("range"), [
                 ast.BinOp(name(depth), ast.Sub(), ast.Constant(1)), ast.Constant(-1),
                 ast.Constant(-1)], []), [
                 *(assign(q[p], plus(name(p), ast.BinOp(name(k), ast.Mult(),
                                                        ast.Constant(s))))
                   for p, s in plan.counters.items()),
                 assign(acc, renamed(plan.step, call_value=acc))], [])]
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, (ast.expr, ast.stmt)) and not hasattr(n, "lineno"):
                ast.copy_location(n, where)
        ast.fix_missing_locations(s)
    return stmts, acc
