"""Which integer variables of a module are never negative, and which of those LLVM sees are,
so that the emitter writes an index item unsigned (``x[np.uint64(i)]``: no wrap-around of
negative indices) only where the compiled code would otherwise keep the check.

Takes the kernels' blocks of IR; guarantees a set of variables each of whose definitions is
provably non-negative (`nonnegative_ints`), and the subset that a function's own code shows
LLVM to be (`evident_nonnegative`). Nothing here writes source.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core import ops
from jitgrad.core.ir import Block, Const, Eqn, For, Repeat, Var, While, walk


def nonnegative_ints(blocks: list[Block]) -> set[Var]:
    """The integer variables that are never negative, over all the kernels of a module (a
    variable the forward kernel defines may be read by the adjoint): sizes, trip counts,
    stack counts, loop counters, ascending loop indices from a non-negative start, a popped
    value whose every push was one, and sums, maxima and copies of such. A variable counts
    when every definition of it does (the greatest such set: a counter ``k = k + 1`` from 0)."""
    producers: dict[Var, list] = {}  # var -> one check per definition

    def define(v, check):
        if isinstance(v, Var) and v.type.kind == "i" and not v.type.ndim:
            producers.setdefault(v, []).append(check)

    pushed: dict[Var, list] = {}
    pops = []
    for block in blocks:
        for s in walk(block):
            if isinstance(s, Eqn):
                if s.prim == "push":
                    pushed.setdefault(s.ins[0], []).append(s.ins[2])
                elif s.prim == "pop":
                    pops.append(s)
                for o in s.outs:
                    define(o, (s.prim, list(s.ins)))
            elif isinstance(s, Repeat):
                if s.counter is not None:
                    define(s.counter, ("always", []))
            else:
                for c in getattr(s, "carries", []) + getattr(s, "merges", []):
                    define(c.var, ("either_all", [c.init, c.update]))
                if isinstance(s, (For, While)):
                    define(s.trips, ("always", []))
                if isinstance(s, For):
                    up = isinstance(s.step, Const) and s.step.value > 0
                    define(s.index, ("from", [s.start]) if up else ("never", []))
    for s in pops:
        producers[s.outs[0]] = [("either_all", pushed.get(s.ins[0], []) or [None])]
    good = set(producers)

    def ok(a) -> bool:
        if isinstance(a, Const):
            return isinstance(a.value, (int, np.integer)) and not isinstance(a.value, bool) \
                and a.value >= 0
        return isinstance(a, Var) and a in good

    def holds(check) -> bool:
        prim, ins = check
        if ops.flags(prim).nonnegative or prim == "always":
            return True
        if prim in ("assign", "from", "either_all", "add", "mul"):
            return all(ok(a) for a in ins)
        if prim == "loop_index":  # start + k * step
            return all(ok(a) for a in ins)
        if ops.flags(prim).extreme == "max":  # the largest of its inputs
            return any(ok(a) for a in ins)
        return False

    return _largest_consistent(good, producers, holds)


def _largest_consistent(good: set, producers: dict, holds) -> set:
    """``good`` less every variable one of whose definitions (``producers``) does not hold
    (``holds`` reads ``good``), until none drops out: the largest set whose every definition
    holds given the others (loops make the definitions depend on each other)."""
    changed = True
    while changed:
        changed = False
        for k in list(good):
            if not all(holds(c) for c in producers[k]):
                good.discard(k)
                changed = True
    return good


def _nonnegative_int(a) -> bool:
    return isinstance(a, Const) and isinstance(a.value, (int, np.integer)) \
        and not isinstance(a.value, bool) and a.value >= 0


def evident_nonnegative(block: Block) -> set[Var]:
    """The integer variables of one compiled function whose every definition in ``block``
    shows LLVM they are never negative: the index of ``for i in range(n)`` or ``range(1,
    n)`` (a constant start, step 1), the counter of a loop run backwards to a constant
    (``while k >= 0``) or forwards from one, and copies, sums, a counter's ``start + k *
    step`` and branch merges of such and non-negative constants. Numba writes an ``int64``
    index's wrap-around (a compare and a select) and LLVM's range analysis removes it for
    these, so they are written as plain indices: each ``np.uint64(i)`` is a call Numba types
    and lowers, 2-3 ms of compile apiece (bench/NOTES.md, issue #46). Not here, so still
    unsigned: a range from a variable start (``range(r + 1, n)``) or with another step, a
    counter carried by hand (``idx += 1``), sizes, values popped off a tape, anything a
    parallel loop or another function (a kernel's parameters) defines; LLVM keeps their
    check, and in an inner loop it cost the loop GMM's gradient 40 %."""
    producers: dict[Var, list] = {}

    def define(v, check):
        if isinstance(v, Var) and v.type.kind == "i" and not v.type.ndim:
            producers.setdefault(v, []).append(check)

    never = ("never", [])
    for s in walk(block):
        if isinstance(s, Eqn):
            for o in s.outs:
                define(o, (s.prim, list(s.ins)))
        elif isinstance(s, Repeat):
            if s.counter is not None:
                ranged = not s.parallel and (s.low is None or _nonnegative_int(s.low))
                define(s.counter, ("always", []) if ranged else never)
        else:
            for c in getattr(s, "carries", []):
                define(c.var, never)
            for c in getattr(s, "merges", []):
                define(c.var, ("either_all", [c.init, c.update]))
            if isinstance(s, (For, While)):
                define(s.trips, never)
            if isinstance(s, For):
                ranged = (not s.parallel and _nonnegative_int(s.start)
                          and isinstance(s.step, Const) and s.step.value == 1)
                define(s.index, ("always", []) if ranged else never)
    good = set(producers)

    def ok(a) -> bool:
        return _nonnegative_int(a) or (isinstance(a, Var) and a in good)

    def holds(check) -> bool:
        prim, ins = check
        if prim == "always":
            return True
        if prim in ("assign", "either_all", "add"):
            return all(ok(a) for a in ins)
        if prim == "loop_index":  # start + k * step
            k, start, step = ins
            return ok(k) and ok(start) and _nonnegative_int(step)
        return False

    return _largest_consistent(good, producers, holds)
