"""Counting pushes: how many values one iteration of a loop pushes onto each stack.

Takes a forward loop with its tape pushes (`saving`). `count_pushes` turns the pushes of a
loop that is recomputed or checkpointed into counters (``count_tick``: the forward pass counts
instead of storing). `push_counts` writes statements that count, before a fused loop runs, the
most values one of its iterations pushes on each stack, so that the stacks are allocated once
with room for an iteration and a push is a bare store (`recompute._fuse`).

Guarantees: the counts are never below what an iteration pushes (a count may exceed it: a
loop that counts the same in every iteration is counted once, even when it runs no
iteration); the counting statements read only values known before the loop, and neither
write arrays nor raise. They are kept small, because Numba compiles every line of them: a
loop that only counts becomes its trip count (``for j in range(m): tick`` is ``n += m``), and
a loop whose iterations all count the same runs one iteration's counting (issue #24).
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.ir import (
    Block,
    Eqn,
    For,
    If,
    Var,
    While,
    bounds,
    clone,
    copy_carries,
    defs,
    free_vars,
    replace_vars,
    sub_blocks,
    walk,
)
from jitgrad.core.types import INT


def count_pushes(block: Block, tapes: set[Var], budget: Var | None = None, namer=None) -> None:
    """In the forward pass: count each push instead of making it; no room to reserve. With a
    ``budget`` (`checkpoint`), also add what the push would store to it: one value for a
    scalar, its size for an array."""
    out = []
    for s in block.stmts:
        if isinstance(s, Eqn) and ops.flags(s.prim).grows_stack and s.ins[0] in tapes:
            if s.prim == "push":
                _, count, value = s.ins
                if s.params.get("flat"):  # its values and their count
                    out.append(Eqn("count_tick", [], [count, value], {"flat": True}, s.loc))
                else:
                    out.append(Eqn("count_tick", [], [count], {}, s.loc))
                if budget is not None and value.type.ndim:
                    size = Var(namer.fresh("_ck_size"), INT)
                    out += [Eqn("size", [size], [value], {}, s.loc),
                            Eqn("add", [budget], [budget, size], {}, s.loc)]
                elif budget is not None:
                    out.append(Eqn("count_tick", [], [budget], {}, s.loc))
            continue
        for b in sub_blocks(s):
            count_pushes(b, tapes, budget, namer)
        out.append(s)
    block.stmts[:] = out


def push_counts(loop: For, tapes: set[Var], namer) -> tuple[list, dict] | None:
    """Statements that count, before the loop runs, the most values one iteration pushes on
    each of ``tapes``: a copy of the loop that keeps only what decides how often each push
    runs (loop bounds and branch conditions, and what they are computed from), with fresh
    names. Returns the statements and ``tape -> its most pushes``; None when the pushes
    depend on a value the copy would have to pop."""
    copy = For(loop.index, loop.start, loop.stop, loop.step, clone(loop.body),
               copy_carries(loop.carries), loop.trips, loop.exit_flag, loop.loc)
    count_pushes(copy.body, tapes)
    if not tapes:
        return [], {}
    _count_flat_pushes(copy)
    needed = _what_decides_the_pushes(copy)
    if not _keep_only(copy.body, needed):
        return None
    copy.carries = [c for c in copy.carries if c.var in needed]
    _fresh_names(copy, namer)
    before, most = _count_the_most(copy, namer)
    _close_counting_loops(copy.body, namer)
    return _run_once_if_invariant(before), most


def _ticks(s) -> bool:
    """Whether statement ``s`` counts a push (a ``count_tick`` in it)."""
    return any(isinstance(t, Eqn) and t.prim == "count_tick" for t in walk(Block([s])))


def _count_flat_pushes(copy: For) -> None:
    """A flat push counts its array's size, read off the array's first version when that is
    made before the loop; otherwise its stack is not counted and grows as it needs. Writes
    never change a shape: sizes are read off first versions too."""
    inside = {v for s in walk(copy.body) for v in defs(s)}
    flat = [s for s in walk(copy.body) if isinstance(s, Eqn) and s.prim == "count_tick"
            and s.params.get("flat")]
    uncounted = {s.ins[0] for s in flat if s.ins[1].root in inside}
    for s in flat:
        s.ins[1] = s.ins[1].root
    _drop_ticks(copy.body, uncounted)
    for s in walk(copy.body):
        if isinstance(s, Eqn) and ops.flags(s.prim).reads_size and isinstance(s.ins[0], Var):
            s.ins[0] = s.ins[0].root


def _what_decides_the_pushes(copy: For) -> set[Var]:
    """The variables the bounds and conditions of the statements that push are computed
    from, closed over the equations, carries, merges and while conditions that define them."""
    needed: set[Var] = set()
    for s in [copy] + [s for s in walk(copy.body) if not isinstance(s, Eqn)]:
        if _ticks(s):
            needed |= {a for a in bounds(s) + ([s.cond] if isinstance(s, If) else [])
                       if isinstance(a, Var)}
    changed = True
    while changed:
        changed = False
        for s in [copy] + list(walk(copy.body)):
            reads = []
            if isinstance(s, Eqn):
                if any(o in needed for o in s.outs):
                    reads = s.ins
            else:
                for m in getattr(s, "carries", []) + getattr(s, "merges", []):
                    if m.var in needed:
                        reads = reads + [m.init, m.update] + bounds(s)
                if isinstance(s, While) and s.cond in needed:
                    reads = reads + list(free_vars(s.cond_block))
            for a in reads:
                if isinstance(a, Var) and a not in needed:
                    needed.add(a)
                    changed = True
    return needed


def _keep_only(block: Block, needed: set[Var]) -> bool:
    """Drop from ``block`` what neither counts a push nor defines a value in ``needed``;
    False when a needed value is popped (the copy cannot run before the loop)."""
    out = []
    for s in block.stmts:
        if isinstance(s, Eqn):
            if s.prim == "pop":
                if any(o in needed for o in s.outs):
                    return False
                continue
            if s.prim == "count_tick" or any(o in needed for o in s.outs):
                out.append(s)
            continue
        if not (_ticks(s) or any(v in needed for v in defs(s))):
            continue
        if isinstance(s, If):
            s.merges = [m for m in s.merges if m.var in needed]
        else:
            s.carries = [c for c in s.carries if c.var in needed]
        if not all(_keep_only(b, needed) for b in sub_blocks(s)):
            return False
        out.append(s)
    block.stmts[:] = out
    return True


def _fresh_names(copy: For, namer) -> None:
    """Give the copy's variables names of their own (versions of one array share one)."""
    fresh, names = {}, {}
    for s in [copy] + list(walk(copy.body)):
        for v in defs(s):
            storage = None if v.storage is None else fresh.get(v.storage, v.storage)
            name = names.setdefault(v.name, namer.fresh(v.name))
            fresh[v] = Var(name, v.type, storage=storage, dims=v.dims)
    replace_vars(Block([copy]), fresh)


def _count_the_most(copy: For, namer) -> tuple[list, dict]:
    """Each counter reset per iteration, and its most over the iterations kept: (the
    statements to run before the loop, counter -> its most)."""
    most = {}
    before = []
    for s in walk(copy.body):
        if isinstance(s, Eqn) and s.prim == "count_tick":
            count = s.ins[0]
            if count not in most:
                most[count] = Var(namer.fresh(count.name + "_most"), count.type)
                before.append(Eqn("count_reset", [most[count]], [], {}, None))
                copy.body.stmts[:0] = [Eqn("count_reset", [count], [], {}, None)]
                copy.body.stmts.append(Eqn("count_max", [most[count]],
                                           [most[count], count], {}, None))
    return before + [copy], most


def _drop_ticks(block: Block, counts: set[Var]) -> None:
    block.stmts[:] = [s for s in block.stmts if not (
        isinstance(s, Eqn) and s.prim == "count_tick" and s.ins[0] in counts)]
    for s in block.stmts:
        for b in sub_blocks(s):
            _drop_ticks(b, counts)


# ----------------------------------------------------------------------------- closed forms


def _safe(prim: str) -> bool:
    """What the counting statements may compute (integer arithmetic on sizes, the counters,
    copies): none of it raises, so a loop's counting can run once even when the loop runs no
    iteration."""
    flags = ops.flags(prim)
    return flags.counting or flags.reads_size or prim == "assign"


def _close_counting_loops(block: Block, namer) -> None:
    """Replace each loop in ``block`` that only counts (``count_tick``, and loops that only
    count, with bounds set before it) by what it adds to each counter: the product of the
    trip counts times the ticks. Loops that do more are kept, their insides closed."""
    out = []
    for s in block.stmts:
        terms = _counting_terms(s) if isinstance(s, For) else None
        if terms is None:
            for b in sub_blocks(s):
                _close_counting_loops(b, namer)
            out.append(s)
            continue
        for count, loops in terms:
            out += _add_product(count, loops, s.loc, namer)
    block.stmts[:] = out


def _counting_terms(loop: For) -> list | None:
    """What ``loop`` adds to each counter as ``(count, [loop, ...])`` terms (one tick per
    iteration of each loop listed, outermost first), when all it does is count: None
    otherwise (a carried value, an early exit, another statement, or an inner loop whose
    bounds the loop computes)."""
    if loop.carries or loop.exit_flag is not None:
        return None
    terms = []
    for s in loop.body.stmts:
        if isinstance(s, Eqn) and s.prim == "count_tick" and not s.params.get("flat"):
            terms.append((s.ins[0], [loop]))
        elif isinstance(s, For):
            inner = _counting_terms(s)
            if inner is None or any(a is loop.index for _, loops in inner for f in loops
                                    for a in (f.start, f.stop, f.step)):
                return None
            terms += [(count, [loop] + loops) for count, loops in inner]
        else:
            return None
    return terms


def _add_product(count: Var, loops: list, loc, namer) -> list:
    """``count += trips(loops[0]) * trips(loops[1]) * ...``."""
    out, product = [], None
    for f in loops:
        trips = Var(namer.fresh("_trip_count"), INT)
        out.append(Eqn("trip_count", [trips], [f.start, f.stop, f.step], {}, loc))
        if product is None:
            product = trips
        else:
            total = Var(namer.fresh("_pushes"), INT)
            out.append(Eqn("mul", [total], [product, trips], {}, loc))
            product = total
    out.append(Eqn("add", [count], [count, product], {}, loc))
    return out


def _run_once_if_invariant(stmts: list) -> list:
    """The counting loop (the last statement) as one iteration's counting, when every
    iteration counts the same: nothing in it reads the loop's index or a carried value, and
    nothing in it can raise. Its most is then that one iteration's count."""
    copy = stmts[-1]
    if copy.carries or copy.exit_flag is not None or copy.index in free_vars(copy.body):
        return stmts
    if any(isinstance(s, While) or isinstance(s, Eqn) and not _safe(s.prim)
           for s in walk(copy.body)):
        return stmts
    return stmts[:-1] + copy.body.stmts
