"""``nonlocal``: a nested function that assigns its enclosing function's names, rewritten so
that the names travel in and out of it as values, before the fence reads the function.

A nested function is built inline where it is called (`build_calls.Calls.inline`), so
the names it declares ``nonlocal`` are the enclosing function's locals at the call. Here

    def add(v):                          def add(v, *, total):
        nonlocal total          ──▶          total = total + v
        total = total + v                    return (None, total)
    add(x[i])                            _ret_c0, total = add(x[i], total=total)

and ``y = add(v)`` becomes ``_ret_c0, total = add(v, total=total); y = _ret_c0`` (a
``return add(v)`` likewise). The enclosing function then assigns its names where the call
stands, so a loop around the call carries them as any other assignment.

Guarantees: only calls written as statements (``f(x)``, ``y = f(x)``, ``return f(x)``) in the
function that defines it are rewritten; any other use of such a function (passed as a value,
called inside an expression or from another function), and a ``nonlocal`` name its
enclosing function does not assign, is refused at its line, saying what to write.
"""

from __future__ import annotations

import ast

from jitgrad.core.errors import UnsupportedError
from jitgrad.frontend.desugar_generators import own_nodes

_WHAT_TO_WRITE = ("call it as a statement in the function that defines it (`f(x)`, `y = f(x)` "
                  "or `return f(x)`), or pass the value in and return it (`total = add(total, "
                  "v)`)")


def desugar_nonlocal(fn_node: ast.FunctionDef, fresh, loc) -> None:
    """Rewrite the nested functions of ``fn_node`` (at any depth) that declare ``nonlocal``
    names, and their calls (see the module). ``loc(node)`` gives a node's location."""
    for scope in [fn_node, *(n for n in ast.walk(fn_node) if isinstance(n, ast.FunctionDef)
                             and n is not fn_node)]:
        for inner in _defs_in(scope):
            names = _nonlocal_names(inner)
            if names:
                _rewrite(scope, inner, names, fresh, loc)


def _defs_in(scope):
    return [n for n in own_nodes(scope) if isinstance(n, ast.FunctionDef)]


def _nonlocal_names(fn: ast.FunctionDef) -> list[str]:
    names = []
    for n in own_nodes(fn):
        if isinstance(n, ast.Nonlocal):
            names += [m for m in n.names if m not in names]
    return names


def _bound_in(scope: ast.FunctionDef) -> set[str]:
    a = scope.args
    bound = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    bound |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    for n in own_nodes(scope):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            bound.add(n.id)
    return bound


def _rewrite(scope, inner, names, fresh, loc) -> None:
    missing = [m for m in names if m not in _bound_in(scope)]
    if missing:
        raise UnsupportedError(f"nonlocal {missing[0]}: {scope.name} does not assign "
                               f"{missing[0]} itself (jitgrad takes nonlocal names of the "
                               "function just around)", loc(inner))
    # the function: the names as keyword-only parameters, returned beside its value
    for n in own_nodes(inner):
        if isinstance(n, ast.Return):
            n.value = _with_names(n.value or ast.Constant(None), names, n)
    inner.body = [s for s in inner.body if not isinstance(s, ast.Nonlocal)] or [ast.Pass()]
    for n in own_nodes(inner):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and any(isinstance(s, ast.Nonlocal) for s in block):
                setattr(n, field, [s for s in block if not isinstance(s, ast.Nonlocal)]
                        or [ast.Pass()])
    if not isinstance(inner.body[-1], ast.Return):
        end = ast.Return(_with_names(ast.Constant(None), names, inner.body[-1]))
        inner.body.append(ast.copy_location(end, inner.body[-1]))
    inner.args.kwonlyargs += [ast.arg(m) for m in names]
    inner.args.kw_defaults += [None] * len(names)
    # the calls, where they stand as statements of ``scope``
    calls = set()
    for stmt in own_nodes(scope):
        call = _statement_call(stmt, inner.name)
        if call is not None:
            calls.add(id(call))
    called = {id(c.func) for c in own_nodes(scope) if id(c) in calls}
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and n.id == inner.name and isinstance(n.ctx, ast.Load) \
                and id(n) not in called:
            raise UnsupportedError(f"{inner.name} assigns nonlocal names, and is used "
                                   f"here other than called as a statement: "
                                   f"{_WHAT_TO_WRITE}", loc(n))
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and n.id == inner.name and isinstance(n.ctx, ast.Store) \
                or isinstance(n, ast.FunctionDef) and n is not inner and n.name == inner.name:
            raise UnsupportedError(f"{inner.name} assigns nonlocal names and its name is "
                                   f"bound again: {_WHAT_TO_WRITE}", loc(n))
    for n in list(own_nodes(scope)):
        if isinstance(n, ast.FunctionDef):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(n, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(n, field, _calls_rewritten(block, inner.name, names, fresh))
    scope.body = _calls_rewritten(scope.body, inner.name, names, fresh)


def _with_names(value, names, where):
    out = ast.Tuple([value, *(ast.Name(m, ast.Load()) for m in names)], ast.Load())
    for n in ast.walk(out):
        ast.copy_location(n, where)
    return out


def _statement_call(stmt, name):
    """The call of ``name`` that ``stmt`` is (``f(x)``, ``y = f(x)``, ``return f(x)``)."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Return)) else (
        stmt.value if isinstance(stmt, ast.Assign) else None)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and value.func.id == name:
        return value
    return None


def _calls_rewritten(block, name, names, fresh) -> list:
    out = []
    for stmt in block:
        call = _statement_call(stmt, name)
        if call is None:
            out.append(stmt)
            continue
        result = fresh("ret")
        call.keywords += [ast.keyword(m, ast.Name(m, ast.Load())) for m in names]
        unpack = ast.Assign([ast.Tuple([ast.Name(result, ast.Store()),
                                        *(ast.Name(m, ast.Store()) for m in names)],
                                       ast.Store())], call)
        new = [unpack]
        if isinstance(stmt, ast.Assign):
            new.append(ast.Assign(stmt.targets, ast.Name(result, ast.Load())))
        elif isinstance(stmt, ast.Return):
            new.append(ast.Return(ast.Name(result, ast.Load())))
        for s in new:
            for n in ast.walk(s):
                if not hasattr(n, "lineno") or n is s:
                    ast.copy_location(n, stmt)
        out += new
    return out
