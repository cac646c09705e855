"""``raise E`` inside a ``try`` whose handler for ``E`` ends in ``return``: the handler's body
written in the raise's place (the JAX Cookbook's ``try: if x < 3: return 2 * x ** 3 else:
raise ValueError`` / ``except ValueError: return jnp.pi * x``).

Takes a function's source (its globals resolve the names) and one of its ``try`` statements,
before the fence reads it (`parse._fence_try`), and rewrites it in place. Python runs the
statements before the raise, then the first handler whose class catches ``E``, then leaves
the function (that body's last statement is a ``return``); so does the handler's body
written where the raise was, with nothing in between. Rewritten: a raise of a class known
while reading (a builtin exception or a global, bare or called with constants) in the try's
own body (its ``if``/``for``/``while``/``with`` blocks; not in a nested function, class or
try), where every handler before the one that catches it names classes known while reading,
no handler binds the exception (``as e``) and the try has no ``finally``. Any other raise
stays, for the fence to take or refuse as before.
"""

from __future__ import annotations

import ast
import builtins
import copy

_BLOCKS = (ast.If, ast.For, ast.While, ast.With)


def _known(src, expr):
    """The exception class ``expr`` names (``ValueError``, ``mod.Error``, ``ValueError("x")``),
    or None."""
    if isinstance(expr, ast.Call) and not expr.keywords and all(
            isinstance(a, ast.Constant) for a in expr.args):
        expr = expr.func
    obj = named_global(src, expr)
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


def named_global(src, expr):
    """What the name or attribute chain ``expr`` (``ValueError``, ``mod.Error``) is in the
    function's globals (or builtins), or None: the classes handlers and raises name."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    obj = src.fn.__globals__.get(expr.id, getattr(builtins, expr.id, None))
    for attr in reversed(parts):
        obj = getattr(obj, attr, None)
    return obj


def _handler_for(src, node: ast.Try, error: type):
    """The handler Python runs for ``error``, where every handler up to it is known."""
    for h in node.handlers:
        if h.type is None:
            return h
        kinds = [_known(src, k) for k in (h.type.elts if isinstance(h.type, ast.Tuple)
                                          else [h.type])]
        if any(k is None for k in kinds):
            return None  # a class not known while reading: Python decides at run time
        if any(issubclass(error, k) for k in kinds):
            return h
    return None


def inline_handlers(src, node: ast.Try) -> None:
    """Rewrite, in ``node``'s body, each raise a returning handler catches (see above)."""
    if node.finalbody or any(h.name is not None for h in node.handlers):
        return

    def rewrite(stmts: list) -> list:
        out = []
        for s in stmts:
            error = _known(src, s.exc) if isinstance(s, ast.Raise) and s.exc is not None \
                and s.cause is None else None
            h = _handler_for(src, node, error) if error is not None else None
            if h is not None and h.body and isinstance(h.body[-1], ast.Return):
                out += [copy.deepcopy(b) for b in h.body]
                continue
            if isinstance(s, _BLOCKS):
                s.body = rewrite(s.body)
                if not isinstance(s, ast.With):
                    s.orelse = rewrite(s.orelse)
            out.append(s)
        return out

    node.body = rewrite(node.body)
