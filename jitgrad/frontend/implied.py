"""A recursion's test decided by the test its caller took: ``normcdf(x)`` of a negative ``x``
returning ``1.0 - normcdf(-x)``.

A recursive function whose test depends on a run-time value would be built in place without
end (`build_calls.Calls.refuse_depth`). Where the call of itself sits on one side of a run-time
``if`` of its caller, that side's condition is known there: ``not (x >= 0.0)`` in the ``else``
of ``if x >= 0.0``. The callee's own test, on its arguments, is then often decided by it:
``-x >= 0.0`` holds wherever ``x < 0.0`` does. Such a test is built as the constant it is, so
the recursion ends while building, and the compiled code computes the same values in the same
order as Python (the reflection ``f(x) = 1 - f(-x)``, ``gamma(x) = pi / (sin(pi x) gamma(1 -
x))``).

Only comparisons of one scalar with constants are reasoned about, through the affine steps
``-v``, ``v + c``, ``v - c``, ``c - v`` and ``not``: each condition is the interval of ``v``
where it holds, and a test holds (fails) where the known interval lies inside it (outside it).
A NaN satisfies no comparison, so a NaN argument, for which Python's recursion would not end
(RecursionError), takes the branch the interval decides.
"""

from __future__ import annotations

import math

from jitgrad.core.ir import Const, Var
from jitgrad.core.ops import flags

_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq"}
_NOT = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}


def _number(a):
    if isinstance(a, Const) and isinstance(a.value, (int, float)) and not isinstance(
            a.value, bool) and math.isfinite(a.value):
        return float(a.value)
    return None


def _comparison(defs: dict, atom, truth: bool):
    """``atom`` (a comparison holding ``truth``) as (v, op, c): ``v op c`` of one variable
    ``v`` and a constant, or None."""
    d = defs.get(atom) if isinstance(atom, Var) else None
    while d is not None and d[0] == "logical_not":
        atom, truth = d[1][0], not truth
        d = defs.get(atom) if isinstance(atom, Var) else None
    if d is None or d[0] not in _FLIP and d[0] != "ne":
        return None
    op, (a, b) = d
    if op == "ne":
        op, truth = "eq", not truth
    if _number(b) is None:
        if _number(a) is None:
            return None
        a, b, op = b, a, _FLIP[op]
    c = _number(b)
    if not truth:
        if op == "eq":
            return None
        op = _NOT[op]
    while isinstance(a, Var) and a in defs:  # undo the affine steps onto the variable
        prim, ins = defs[a]
        if prim == "neg":
            a, op, c = ins[0], _FLIP[op], -c
        elif flags(prim).additive and _number(ins[1]) is not None:  # v + k, v - k
            k = _number(ins[1])
            a, c = ins[0], c - k if prim == "add" else c + k
        elif prim == "add" and _number(ins[0]) is not None:
            a, c = ins[1], c - _number(ins[0])
        elif prim == "sub" and _number(ins[0]) is not None:  # k - v op c: v flip(op) k - c
            a, op, c = ins[1], _FLIP[op], _number(ins[0]) - c
        else:
            break
    return (a, op, c) if isinstance(a, Var) else None


def _interval(op, c):
    """(lo, lo_closed, hi, hi_closed) where ``v op c`` holds."""
    inf = math.inf
    return {"lt": (-inf, False, c, False), "le": (-inf, False, c, True),
            "gt": (c, False, inf, False), "ge": (c, True, inf, False),
            "eq": (c, True, c, True)}[op]


def _inside(a, b) -> bool:
    """Interval ``a`` within interval ``b``."""
    lo_ok = a[0] > b[0] or (a[0] == b[0] and (b[1] or not a[1]))
    hi_ok = a[2] < b[2] or (a[2] == b[2] and (b[3] or not a[3]))
    return lo_ok and hi_ok


def _disjoint(a, b) -> bool:
    lo, hi = max(a, b, key=lambda i: (i[0], not i[1])), min(a, b, key=lambda i: (i[2], i[3]))
    if lo[0] > hi[2]:
        return True
    return lo[0] == hi[2] and not (lo[1] and hi[3])


def decide(defs: dict, test, facts) -> bool | None:
    """``test`` (a boolean scalar variable) decided by ``facts`` ((atom, truth) pairs known to
    hold where it is built): True, False, or None where they do not decide it."""
    want = _comparison(defs, test, True)
    if want is None:
        return None
    for atom, truth in facts:
        known = _comparison(defs, atom, truth)
        if known is None or known[0] is not want[0]:
            continue
        k, w = _interval(*known[1:]), _interval(*want[1:])
        if _inside(k, w):
            return True
        if _disjoint(k, w):
            return False
    return None
