"""What the builder reads off the user's AST, and the small values its parts share.

Takes `ast` nodes of the function being built. Guarantees: nothing here builds IR; these are
questions about the source (which names a block assigns, whether a statement may jump, which
arguments a body writes into, how the user spelled a library function) and the markers the
builder's environment uses (`Undefined`, `NO_RETURN`, the flag names for break, continue and
return).
"""

from __future__ import annotations

import ast
import operator

import numpy as np

from jitgrad.lang.symbolic import Sym


class Undefined:
    """A name with no value on some path (defined in one branch, or only inside a loop)."""

    def __init__(self, why: str):
        self.why = why


class NoReturn:
    """The value to return before any ``return`` ran: merged with a returned value, it takes
    that value's shape (a placeholder on the side that has not returned, never read)."""


NO_RETURN = NoReturn()


BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.BitAnd: operator.and_,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor}
CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Eq: operator.eq, ast.NotEq: operator.ne}
BREAK, CONTINUE, RETURNED, RETVAL = "%break", "%continue", "%returned", "%retval"
# set once a `raise` ran on this path: the rest of the block is never reached
RAISED = "%raised"


def base(name: str) -> str:
    """The generated-code base name for an environment name (flags get a leading underscore)."""
    return "_" + name[1:].split("@")[0] if name.startswith("%") else name


def is_atom_value(v) -> bool:
    return isinstance(v, (Sym, bool, int, float, np.number, np.bool_))


def assigned_names(stmts) -> set[str]:
    """The names the statements bind or write into (a loop carries them): ``a`` in ``a = ...``,
    ``a, b = ...`` and ``for a in``; ``y`` in ``y[i] = ...`` and ``y[i][j] += ...`` (a new
    version of its array), but not ``i``, which the index only reads."""
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    out |= _bound_by(t)
            if isinstance(node, ast.Return):
                out |= {RETURNED, RETVAL}
    return out


def _bound_by(target) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_bound_by(t) for t in target.elts))
    if isinstance(target, (ast.Starred, ast.Subscript, ast.Attribute)):
        return _bound_by(target.value)  # the array written into
    return set()


def jumps(stmt, loop_level=True) -> bool:
    """Whether a statement may break, continue (at this loop level) or return."""
    for node in walk_same_loop(stmt):
        if isinstance(node, ast.Return):
            return True
        if loop_level and isinstance(node, (ast.Break, ast.Continue)):
            return True
    return False


def walk_same_loop(node):
    """ast.walk, not descending into nested loops (except for their returns)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.For, ast.While)):
            for sub in ast.walk(child):
                if isinstance(sub, ast.Return):
                    yield sub
            continue
        yield from walk_same_loop(child)


def is_prange(fn) -> bool:
    return getattr(fn, "__name__", None) == "prange" and str(
        getattr(fn, "__module__", "")).startswith("numba")


LIBRARIES = {"numpy", "scipy", "math", "builtins", "numba", "jitgrad", "random", "statistics",
              "cmath", "functools", "itertools", "operator"}


def fn_name(fn) -> str:
    """How the user wrote a library function: np.fft.fft, np.sort, math.gamma."""
    mod = str(getattr(fn, "__module__", None) or "")
    name = getattr(fn, "__name__", type(fn).__name__)
    if mod.startswith("numpy") or isinstance(fn, np.ufunc):
        public = [p for p in mod.split(".")[1:] if not p.startswith("_")]
        return ".".join(["np", *public, name])
    if mod == "math":
        return f"math.{name}"
    return name


def int_literal(node) -> int | None:
    """The integer a literal such as ``2`` or ``-1`` spells, else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
        stmt.value.value, str)


def same_constant(a, b) -> bool:
    return (not isinstance(a, Sym) and not isinstance(b, Sym) and type(a) is type(b)
            and is_atom_value(a) and a == b)


def same_structure(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return all(x is y or same_constant(x, y) for x, y in zip(a, b))
    return a is b


def call_arguments(stmts, library) -> set[str]:
    """Names passed as arguments to a call that may write into them: any call but those
    ``library(func_node)`` knows are NumPy's, math's or builtins (which write into nothing)."""
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and not library(node.func):
                for a in list(node.args) + [k.value for k in node.keywords]:
                    while isinstance(a, (ast.Subscript, ast.Attribute)):
                        a = a.value  # a view passed (`kernel(U[i])`): its array may be written
                    if isinstance(a, ast.Name):
                        out.add(a.id)
    return out


def subscript_targets(body) -> set[str]:
    out = set()
    for stmt in body:
        for node in ast.walk(stmt):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    out.add(t.value.id)
                if isinstance(node, ast.AugAssign) and isinstance(t, ast.Name):
                    out.add(t.id)  # `x += 1` writes into x when x is an array
    return out


