"""Which integer variables of a module are never negative, so that the emitter writes index
items of them unsigned (``x[np.uint64(i)]``: no wraparound check for negative indices).

Takes the kernels' blocks of IR; guarantees a set of variables each of whose definitions is
provably non-negative (see `nonnegative_ints`). Nothing here writes source.
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

    changed = True
    while changed:
        changed = False
        for k in list(good):
            if not all(holds(c) for c in producers[k]):
                good.discard(k)
                changed = True
    return good
