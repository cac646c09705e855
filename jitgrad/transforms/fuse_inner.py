"""Inner loops fused where an iteration holds its own adjoint.

Takes a block that runs one iteration's forward body and then that iteration's adjoint (the
body of a loop `recompute` fused: its iteration, then the iteration's adjoint; or a
recomputed loop's adjoint: the replay, then the adjoint), and the `ReverseContext`. Inside
such a block an inner loop and its adjoint ``Repeat`` sit side by side, the statements between
them (``mid``) computing the inner loop's seed: ``for j ...: loss += r * r`` inside a fused
``for i``, whose adjoint starts from ``_b_loss = _unit``.

An inner loop is fused, each of its iterations' adjoint running right after the iteration,
with the real seed, adding straight into the gradients the block adds into, when:

* its iterations are independent (`recompute.independent`) and the code after it sends an
  adjoint into one float sum only (`recompute.one_seed`), the only active value it carries;
  its other carried values are inactive scalars;
* ``mid`` can run before the loop: plain equations without effects, none reading or writing a
  name the loop defines or reads (so the seed is known before the loop: a seed that reads the
  loop's result, ``out = total * total``, keeps the loop as it is);
* the loop's tape, once the values pushed and popped straight back are gone
  (`recompute.round_trips`), is empty: the iteration's adjoint reads what the iteration holds.

Guarantees: the adjoint of each iteration gets the seed it got before (a sum passes its
adjoint to every term unchanged) and the iteration's values; iterations add into the
gradients in ascending order rather than descending (the result changes by rounding at most,
as `recompute.mark_ascending`'s do); the inner loop keeps no tape and its adjoint's loop nest
is gone. Applied again inside each loop it fuses (a nest of sums fuses level by level, as long
as each level's seed is known before it).
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.ir import (
    Block,
    Eqn,
    For,
    LoopPlan,
    Storage,
    Var,
    defs,
    direct_uses,
    plan_loop,
    replace_vars,
    walk,
)
from jitgrad.transforms import recompute
from jitgrad.transforms.passes import GradientWork, Pass

NOTE = ("jitgrad: fused (its iterations are independent and it feeds one sum whose adjoint "
        "is known before it): each iteration's adjoint runs right after it")


def fuse_inner_loops(block: Block, work: GradientWork) -> None:
    """Fuse every inner loop of ``block`` that qualifies (module docstring), then the loops
    inside each one fused, in place; updates ``work.stacks`` for the tapes that go."""
    k = 0
    while k < len(block.stmts):
        loop = block.stmts[k]
        if isinstance(loop, For) and loop in work.context.repeat_of and _fuse(block, k, work):
            fuse_inner_loops(loop.body, work)
            k = next(i for i, s in enumerate(block.stmts) if s is loop)
        k += 1


def _names(stmts) -> tuple[set[str], set[str]]:
    """The names ``stmts`` define (an array written in place counts as defined) and read."""
    written, read = set(), set()
    for s in walk(Block(list(stmts))):
        written |= {v.name for v in defs(s)}
        if isinstance(s, Eqn) and (ops.flags(s.prim).effects or ops.flags(s.prim).adds_into
                                   or ops.flags(s.prim).writes_into_first):
            written |= {a.name for a in s.ins[:1] if isinstance(a, Var)}
        read |= {a.name for a in direct_uses(s) if isinstance(a, Var)}
    return written, read


def _round_trips(fn, adjoint: Block, loop: For, rep) -> tuple | None:
    """What goes when every value ``loop`` pushes is popped straight back at the top of its
    adjoint (`recompute.round_trips`' conditions, the stack counted anywhere): the ids of the
    statements that go (the push, the pop, the stack, its room, and the counting of its
    size), ``(pop, the value pushed)`` for each pop, and the stacks.
    None when a pushed value is not such a round trip."""
    pushes = [s for s in walk(loop.body) if isinstance(s, Eqn) and s.prim == "push"]
    tapes = {s.ins[0] for s in pushes}
    if not tapes:
        return set(), [], set()
    uses: dict[str, list] = {}  # by name: a count's versions share it
    for b in (fn.body, adjoint):
        for s in walk(b):
            if isinstance(s, Eqn):
                for a in {a.name for a in s.ins + s.outs if isinstance(a, Var)}:
                    uses.setdefault(a, []).append(s)
    gone, pops = set(), []
    for tape in tapes:
        push = [s for s in loop.body.stmts if isinstance(s, Eqn) and s.prim == "push"
                and s.ins[0] is tape]
        pop = [s for s in rep.body.stmts if isinstance(s, Eqn) and s.prim == "pop"
               and s.ins[0] is tape]
        if len(push) != 1 or len(pop) != 1:
            return None
        push, pop = push[0], pop[0]
        value = push.ins[2]
        if push.params.get("flat") or push.params.get("copy") or not isinstance(value, Var) \
                or pop.outs[0].name != value.name:
            return None
        after_push = loop.body.stmts[loop.body.stmts.index(push) + 1:]
        before_pop = rep.body.stmts[:rep.body.stmts.index(pop)]
        if any(v.name == value.name for s in after_push + before_pop
               for t in walk(Block([s])) for v in defs(t)):
            return None
        # the stack, its count and the count's bookkeeping: nothing else reads them
        counts = {push.ins[1].name}
        allocs = [s for s in uses.get(tape.name, ()) if s.prim == "stack_alloc"]
        counts |= {a.name for s in allocs for a in s.ins + s.outs if isinstance(a, Var)}
        counts -= {tape.name}
        stmts = {id(s): s for v in counts | {tape.name} for s in uses.get(v, ())}
        for s in stmts.values():
            if (s.prim == push.prim and s is not push) or (s.prim == pop.prim and s is not pop):
                return None  # (another push or pop of the stack)
            if not (ops.flags(s.prim).tape or ops.flags(s.prim).counting):
                return None
            if ops.flags(s.prim).counting and not all(o.name in counts for o in s.outs):
                return None
        gone |= set(stmts)
        pops.append((pop, value))
    return gone, pops, tapes


def _is_trips_of(loop: For, s: Eqn) -> bool:
    return s.prim == "trip_count" and s.ins == [loop.start, loop.stop, loop.step]


def _fuse(block: Block, k: int, work: GradientWork) -> bool:
    ctx, fn = work.context, work.context.fn
    loop = block.stmts[k]
    rep = ctx.repeat_of[loop]
    r = next((i for i, s in enumerate(block.stmts) if s is rep), None)
    if r is None or r < k or rep.counter is None or loop.exit_flag is not None:
        return False
    if recompute.independent(loop, rep, Storage(fn), block.stmts[k + 1:]) is not None:
        return False
    seed = recompute.one_seed(loop, ctx)
    if seed is None or any(c is not seed and (c.var.type.ndim or ctx.is_active(c.var))
                           for c in loop.carries):
        return False
    # the iteration's index: the adjoint's counter runs over the same values as the loop's
    index = [s for s in rep.body.stmts if isinstance(s, Eqn) and s.prim == "loop_index"
             and s.ins and s.ins[0] is rep.counter]
    if len(index) != 1 or index[0].outs[0] is not loop.index or any(
            a is rep.counter for s in walk(rep.body) if s is not index[0]
            for a in direct_uses(s)):
        return False
    # mid can run before the loop
    mid = block.stmts[k + 1:r]
    if any(not isinstance(s, Eqn) or ops.flags(s.prim).effects for s in mid):
        return False
    loop_written, loop_read = _names([loop])
    mid_written, mid_read = _names(mid)
    if all(_is_trips_of(loop, s) for s in mid if loop.trips.name in {v.name for v in s.outs}):
        loop_written.discard(loop.trips.name)  # (the loop's trip count, counted again)
    if mid_read & loop_written or mid_written & (loop_written | loop_read):
        return False
    # the tape: only values pushed and popped straight back
    going = _round_trips(fn, work.adjoint, loop, rep)
    if going is None:
        return False
    gone_stmts, pops, tapes = going
    for b in (fn.body, work.adjoint):
        recompute.remove_stmts(b, gone_stmts)
    for pop, value in pops:
        replace_vars(rep.body, {pop.outs[0]: value})
    work.stacks = [v for v in work.stacks if v not in tapes]
    body = [s for s in rep.body.stmts if s is not index[0]]
    block.stmts[k:r + 1] = mid + [loop]
    loop.body.stmts += recompute.without_recomputing(body, loop.body)
    plan_loop(loop, rep, LoopPlan.FUSED, NOTE)
    return True


def fuse_inner(work: GradientWork) -> None:
    """The pass: inside every top-level loop `recompute` fused (its body) or recomputed (its
    adjoint's body: the replay, then the adjoint), fuse the inner loops that qualify."""
    fn = work.context.fn
    for loop in fn.body.stmts:
        if not isinstance(loop, For) or not work.settings.fuse:
            continue
        if loop.plan is LoopPlan.FUSED:
            fuse_inner_loops(loop.body, work)
        elif loop.plan is LoopPlan.RECOMPUTED:
            rep = work.context.repeat_of[loop]
            if any(s is rep for s in work.adjoint.stmts):
                fuse_inner_loops(rep.body, work)


FUSE_INNER = Pass("fuse_inner", fuse_inner, reads=("context", "adjoint", "stacks"),
                  writes=("stacks",), needs=("recompute",))

__all__ = ["FUSE_INNER", "fuse_inner", "fuse_inner_loops"]
