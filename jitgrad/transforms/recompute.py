"""Recompute instead of tape: a loop whose iterations do not depend on one another is run again,
one iteration at a time, inside its adjoint loop.

Takes the result of the reverse transform and its saving (`saving.Saver`): a forward body that
pushes what the adjoint reads onto stacks, an adjoint body that pops it. For a top-level ``for``
loop whose iterations are independent, the pushes leave the forward pass (which then runs at the
primal's speed and keeps no tape for the loop) and each reverse iteration begins by running the
forward body of that iteration again, pushing onto stacks the adjoint allocates once; the
iteration's adjoint pops them straight back. The tape holds one iteration, not ``n``: memory is
O(body), not O(n * body), and what the adjoint reads is still in cache. Tapenade and Enzyme treat
such loops the same way.

A loop qualifies (`independent`) when it has no early exit and each of its carried values is:

* **unused** by the body (it is assigned before it is read, or never read);
* a **reduction**: read only by the one ``add``/``sub`` that makes its update (``total += t``),
  whose derivative does not read it; or
* a **work array** that every iteration fills before it reads it (`reads_start`): an element
  written by a ``for j in range(n)`` loop that writes ``a[j]`` for every ``j`` of an array of
  size ``n``, or a whole-array write, counts as filled.

and the values it reads from before the loop are not written after it. Guarantees: the replayed
iteration computes exactly what the forward iteration computed (it reads the same inputs, and
the work arrays' old contents are never read); the forward pass computes the same value.

The cost model (`worth_it`): a loop qualifies for recomputing when its tape grows inside a
nested loop, or by at least `MIN_PUSHES` values per iteration; a thin loop keeps its tape (a
second pass over the body costs more than a few stores). ``.source()`` says which strategy
each top-level loop got.
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.ir import (
    Block,
    Carry,
    Const,
    Eqn,
    For,
    Function,
    If,
    LoopPlan,
    Repeat,
    Storage,
    Var,
    While,
    bounds,
    clone,
    defs,
    direct_uses,
    free_vars,
    plan_loop,
    replace_vars,
    sub_blocks,
    walk,
)
from jitgrad.transforms.passes import GradientWork, Pass
from jitgrad.transforms.push_counts import count_pushes, push_counts
from jitgrad.transforms.reverse_context import ReverseContext

MIN_PUSHES = 4  # values pushed per iteration, at the loop's own level, that make it worth it


def planned(fn: Function) -> set[Block]:
    """Before saving: the blocks of the top-level loops that will likely be recomputed (their
    iterations are independent and they hold a nested loop). Saving pushes the results of
    costly scalar functions there rather than computing them a third time."""
    storage = Storage(fn)
    out: set[Block] = set()
    for k, loop in enumerate(fn.body.stmts):
        if (isinstance(loop, For) and any(not isinstance(s, Eqn) for s in loop.body.stmts)
                and independent(loop, None, storage, fn.body.stmts[k + 1:]) is None):
            out.add(loop.body)
            out |= {b for s in walk(loop.body) for b in sub_blocks(s)}
    return out


def recompute_loops(work: GradientWork) -> None:
    """Turn every qualifying top-level loop of the function into a fused or a recomputed one
    (see the module docstring), updating ``work.saved`` and ``work.stacks``. The loops'
    adjoints and their adjoint variables come from ``work.context``. Under ``parallel=True``,
    `transforms.parallel` then runs a fused loop in chunks as it does a recomputed one."""
    ctx, settings, adj_body = work.context, work.settings, work.adjoint
    fn, namer, top_saved, stacks = ctx.fn, ctx.namer, work.saved, work.stacks
    storage = Storage(fn)
    for loop in list(fn.body.stmts):  # (fusing inserts statements before the loop)
        if not isinstance(loop, For) or loop not in ctx.repeat_of:
            continue
        rep = ctx.repeat_of[loop]
        k = next(i for i, s in enumerate(fn.body.stmts) if s is loop)
        why = independent(loop, rep, storage, fn.body.stmts[k + 1:])
        if why is None and not settings.recompute:
            why = "recomputation is switched off"
        if why is None and name_clash(loop, fn, top_saved):
            why = "two versions of an array it reads share a name"
        if why is None and settings.parallel and any(
                isinstance(s, Eqn) and ops.flags(s.prim).raises for s in walk(loop.body)):
            why = "it may raise, so it runs serially (not in parallel chunks)"
        seed = one_seed(loop, ctx) if why is None and settings.fuse else None
        fused = None if seed is None else _fuse(fn, adj_body, loop, rep, seed, ctx, top_saved,
                                                stacks, namer)
        if fused is not None:
            top_saved, stacks = fused
            plan_loop(loop, rep, LoopPlan.FUSED,
                      "jitgrad: fused (its iterations are independent and it feeds one sum): "
                      "each iteration's adjoint runs right after it, in the forward pass")
            continue
        if why is None and not worth_it(loop) and not loop.parallel:  # prange: no tape
            pushes = any(isinstance(s, Eqn) and s.prim == "push" for s in walk(loop.body))
            why = "its tape is small" if pushes else "it needs no tape"
        if why == "it needs no tape":
            plan_loop(loop, rep, LoopPlan.NO_TAPE,
                      "jitgrad: no tape: the adjoint rebuilds what it reads")
            continue
        if why is not None:
            plan_loop(loop, rep, LoopPlan.TAPED, f"jitgrad: taped in reverse ({why})", why)
            continue
        top_saved, stacks = _recompute(fn, adj_body, loop, rep, ctx.counter_of(loop),
                                       top_saved, stacks)
        plan_loop(loop, rep, LoopPlan.RECOMPUTED, "jitgrad: recomputed in reverse (its "
                  "iterations are independent): no tape across iterations")
    work.saved, work.stacks = top_saved, stacks


# ----------------------------------------------------------------------------- analysis


def independent(loop: For, rep: Repeat | None, storage: Storage, after: list) -> str | None:
    """None if ``loop``'s iterations are independent (module docstring); otherwise why not.
    ``rep``: the loop's adjoint, once saving has written it (None before)."""
    if loop.exit_flag is not None:
        return "it can exit early"
    for c in loop.carries:
        if not isinstance(c.var, Var):
            continue
        uses = [s for s in walk(loop.body) if any(a is c.var for a in direct_uses(s))]
        if not uses:
            continue
        if c.var.type.ndim == 0:
            if not is_reduction(loop, c):
                return f"`{c.var.name}` is carried from one iteration to the next"
        elif reads_start(loop.body, {c.var}):
            return f"it reads `{c.var.name}` as the previous iteration left it"
    for s in rep.body.stmts if rep else ():  # the adjoint rebuilds a value from the next
        if isinstance(s, Eqn) and s.prim == "assign" and any(  # iteration's: needs the tape
                a is c.var for c in loop.carries for a in s.ins):
            return "its adjoint rebuilds values from the next iteration"
    return written_after(loop, storage, after)


def mark_ascending(work: GradientWork) -> None:
    """Run forwards every loop adjoint whose iterations commute (`commutes`): Numba compiles an
    ascending loop tighter, and the pops then read ``stack[base + k]``. The result changes by
    rounding at most (gradients that several iterations add into one slot add in another
    order). With ``settings.ascending`` off, every loop adjoint runs backwards."""
    fn, repeat_of, seeded = work.context.fn, work.context.repeat_of, work.context.seeded
    enabled = work.settings.ascending
    for s in walk(fn.body):
        if isinstance(s, For) and s in repeat_of and not any(
                isinstance(t, Repeat) for t in walk(s.body)):  # (fused: its adjoint is inside)
            rep = repeat_of[s]
            rep.ascending = enabled and commutes(s, rep, seeded.get(s, []))


def commutes(loop: For, rep: Repeat, seeded: list) -> bool:
    """Whether the iterations of ``rep`` (the adjoint of ``loop``) may run in any order: the
    loop is independent but for integer counters (``idx += 1``); the code after it sends an
    adjoint back only into sums (``seeded``: a value the last iteration leaves, such as an
    array it writes, goes to the last iteration's adjoint alone); its adjoint reads nothing
    from the next iteration; and every pop is at the top of the adjoint's body, of a scalar
    (one per iteration: iteration k's value sits at ``base + k``)."""
    if rep.counter is None or rep.parallel or loop.exit_flag is not None:
        return False
    if any(c.var.type.ndim or not is_reduction(loop, c) for c in seeded):
        return False
    for c in loop.carries:
        if not isinstance(c.var, Var) or not any(
                a is c.var for s in walk(loop.body) for a in direct_uses(s)):
            continue
        if c.var.type.ndim:
            if reads_start(loop.body, {c.var}):
                return False
        elif not (is_reduction(loop, c) or _is_counter(loop, c)):
            return False
    for s in rep.body.stmts:
        if isinstance(s, Eqn) and s.prim == "assign" and any(
                a is c.var for c in loop.carries for a in s.ins):
            return False
        if isinstance(s, Eqn) and s.prim == "pop" and s.params["ndim"]:
            return False
        if any(isinstance(t, Eqn) and t.prim == "pop" for b in sub_blocks(s)
               for t in walk(b)):
            return False
    return True


def _is_counter(loop: For, c: Carry) -> bool:
    """``i = i + 1`` (an integer constant step) at the top of the body: ``i`` is its initial
    value plus the iteration number times the step, in any order."""
    return c.var.type.kind == "i" and any(
        isinstance(s, Eqn) and s.prim == "add" and s.outs[0] is c.update and s.ins[0] is c.var
        and isinstance(s.ins[1], Const) and isinstance(s.ins[1].value, int)
        for s in loop.body.stmts)


def written_after(loop, storage: Storage, after: list) -> str | None:
    """Why a replay of ``loop``'s body in the adjoint would read other values than the forward
    pass did (an array it reads is written in place by a statement in ``after``), or None."""
    written = {storage.find(o) for s in after for t in walk(Block([s]))
               if isinstance(t, Eqn) and t.prim == "setitem" for o in t.outs}
    for a in free_vars(loop.body):
        if a.type.ndim and storage.find(a) in written:
            return f"`{a.name}` is written after the loop"
    return None


def worth_it(loop: For) -> bool:
    own = [s for s in loop.body.stmts if isinstance(s, Eqn) and s.prim == "push"]
    nested = any(isinstance(s, Eqn) and s.prim == "push"
                 for t in loop.body.stmts if not isinstance(t, Eqn)
                 for s in walk(Block([t])))
    return nested or len(own) >= MIN_PUSHES


def is_reduction(loop: For, c: Carry) -> bool:
    """``total += t``, perhaps in nested loops and branches: every value that derives from the
    carried ``total`` is only added to (``add``/``sub``), carried, merged, or the update. No
    derivative reads such a value, and the replay never needs it."""
    acc = {c.var}
    changed = True
    while changed:
        changed = False
        for s in walk(loop.body):
            outs = []
            if isinstance(s, Eqn) and ops.flags(s.prim).additive and any(
                    isinstance(a, Var) and a in acc for a in s.ins[:1 + (s.prim == "add")]):
                outs = s.outs
            for m in getattr(s, "carries", []) + getattr(s, "merges", []):
                if any(isinstance(a, Var) and a in acc for a in (m.init, m.update)):
                    outs = outs + [m.var]
            for o in outs:
                if o not in acc:
                    acc.add(o)
                    changed = True
    if c.update not in acc:
        return False
    for s in walk(loop.body):  # a branch that sets `total` afresh (`total = v`, as a fold's
        for m in getattr(s, "merges", []):  # first item does) restarts the sum: not one
            if (isinstance(m.init, Var) and m.init in acc) != (
                    isinstance(m.update, Var) and m.update in acc):
                return False
    for s in walk(loop.body):
        plumbing = [a for m in getattr(s, "carries", []) + getattr(s, "merges", [])
                    for a in (m.init, m.update)]
        for a in direct_uses(s):
            if not (isinstance(a, Var) and a in acc):
                continue
            if isinstance(s, Eqn):
                if not ops.flags(s.prim).additive or s.outs[0] not in acc or (
                        s.prim == "sub" and s.ins[1] is a) or sum(
                        isinstance(b, Var) and b in acc for b in s.ins) > 1:
                    return False
            elif not any(a is b for b in plumbing) or a in bounds(s):
                return False
    return True


def reads_start(body: Block, stale: set[Var]) -> bool:
    """Whether ``body`` reads the contents of an array in ``stale`` (variables whose
    memory still holds what it held when the iteration began) before it is filled again."""
    stale = set(stale)
    for s in body.stmts:
        if isinstance(s, Eqn):
            shape_only = ops.flags(s.prim).shape_only  # (read for their shape: not contents)
            if s.prim == "setitem":
                if any(isinstance(a, Var) and a in stale for a in s.ins[1:]):
                    return True
                if s.ins[0] in stale and not all(x == ":" for x in
                                                       s.params["index_spec"]):
                    stale.add(s.outs[0])  # partly written: the rest is still old
                continue
            if any(isinstance(a, Var) and a in stale and k not in shape_only
                   for k, a in enumerate(s.ins)):
                return True
        elif isinstance(s, If):
            if isinstance(s.cond, Var) and s.cond in stale:
                return True
            for b in (s.then, s.orelse):
                if reads_start(b, stale):
                    return True
            for m in s.merges:  # conservative: stale if it may be stale on either side
                if any(isinstance(a, Var) and a in stale | _stale_after(b, stale)
                       for a, b in ((m.init, s.then), (m.update, s.orelse))):
                    stale.add(m.var)
        else:  # a nested loop (or, in a fused loop, an inner loop's adjoint: no carries)
            carries = getattr(s, "carries", [])
            inner = stale | {c.var for c in carries if isinstance(c.init, Var)
                             and c.init in stale}
            blocks = [s.body] + ([s.cond_block] if isinstance(s, While) else [])
            if any(reads_start(b, inner) for b in blocks):
                return True
            if isinstance(s, While) and isinstance(s.cond, Var) and s.cond in inner:
                return True
            for c in carries:
                if c.var in inner and not _fills(s, c):
                    stale.add(c.var)
    return False


def _stale_after(block: Block, stale: set[Var]) -> set[Var]:
    """The stale set at the end of ``block`` (partial writes of stale arrays stay stale)."""
    out = set(stale)
    for s in walk(block):
        if isinstance(s, Eqn) and s.prim == "setitem" and s.ins[0] in out:
            out.add(s.outs[0])
        for c in getattr(s, "carries", []) + getattr(s, "merges", []):
            if any(isinstance(a, Var) and a in out for a in (c.init, c.update)):
                out.add(c.var)
    return out


def _fills(loop, c: Carry) -> bool:
    """``for j in range(n): a[j] = ...`` with ``n`` the size of ``a``'s first axis: every
    element of ``a`` is written (the loop cannot exit early)."""
    if not (isinstance(loop, For) and loop.exit_flag is None and c.var.type.ndim
            and isinstance(loop.start, Const) and loop.start.value == 0
            and isinstance(loop.step, Const) and loop.step.value == 1):
        return False
    root = c.var.root  # the allocation, when the loop only writes into it in place
    size = root.dims[0] if root.dims else None
    stop = loop.stop.value if isinstance(loop.stop, Const) else (
        loop.stop.dims[0] if loop.stop.dims else None)
    if size is None or stop is None or size != stop:
        return False
    version = c.var
    for s in loop.body.stmts:
        if isinstance(s, Eqn) and s.prim == "setitem" and s.ins[0] is version:
            spec = s.params["index_spec"]
            if spec[0] == "i" and all(x == ":" for x in spec[1:]) and s.ins[2] is loop.index:
                return True
            version = s.outs[0]
    return False


# ----------------------------------------------------------------------------- rewriting


def _recompute(fn, adj_body, loop: For, rep: Repeat, counter: Var, top_saved, stacks):
    tapes = {s.ins[0] for s in walk(loop.body) if isinstance(s, Eqn) and s.prim == "push"}
    dropped = drop_round_trips(fn, rep, adj_body, round_trips(fn, loop, rep, adj_body, tapes))
    tapes -= dropped
    stacks = [v for v in stacks if v not in dropped]
    replay = clone(loop.body)  # with its pushes
    drop_reserves(replay, tapes)
    # (a reduction's value is never read: the replay adds to a stand-in, see below)
    # 1. the forward pass keeps no tape for the loop; it counts the pushes of the iteration
    #    that pushes most, so that the adjoint's stacks need no check for room
    allocs = [s for s in fn.body.stmts if isinstance(s, Eqn) and s.prim == "stack_alloc"
              and s.outs[0] in tapes]
    most = {}  # tape -> the most pushes in one iteration
    at = next(i for i, s in enumerate(fn.body.stmts) if s is loop)
    for a in allocs:
        tape, count = a.outs
        most[tape] = Var(count.name + "_most", count.type)
        fn.body.stmts[at:at] = [Eqn("count_reset", [most[tape]], [], {}, None)]
        loop.body.stmts[:0] = [Eqn("count_reset", [count], [], {}, None)]
        loop.body.stmts.append(Eqn("count_max", [most[tape]], [most[tape], count],
                                   {}, None))
        top_saved = top_saved + [(most[tape], most[tape])]
    fn.body.stmts[:] = [s for s in fn.body.stmts if not any(s is a for a in allocs)]
    count_pushes(loop.body, tapes)
    moved = {v for a in allocs for v in a.outs}
    stacks = [v for v in stacks if v not in moved]
    # 2. the adjoint replays the iteration: its index, then the forward body (with its pushes)
    index = next((s for s in rep.body.stmts if isinstance(s, Eqn) and s.prim == "loop_index"
                  and s.outs[0] is loop.index), None)
    if index is not None:
        rep.body.stmts.remove(index)
    else:
        index = Eqn("loop_index", [loop.index], [counter, loop.start, loop.step], {}, loop.loc)
    rep.body.stmts[:0] = [index] + replay.stmts
    # 3. before the adjoint loop: the stacks (one iteration deep) and the work arrays
    before = []
    for a in allocs:
        before.append(Eqn("stack_alloc", list(a.outs), [most[a.outs[0]]], dict(a.params),
                          a.loc))
    for c in loop.carries:  # work arrays (filled before read) and reductions (never read)
        if c.var.type.ndim:
            before.append(Eqn("zeros_like", [c.var], [c.init], {}, loop.loc))
        else:
            zero = {"f": 0.0, "i": 0, "b": False}[c.var.type.kind]
            before.append(Eqn("assign", [c.var], [Const(zero)], {}, loop.loc))
    k = next(i for i, s in enumerate(adj_body.stmts) if s is rep)
    adj_body.stmts[k:k] = before
    # 4. what the replay reads from before the loop travels from the forward pass
    bound = {v for _, v in top_saved} | {p for p in fn.params}
    for v in free_vars(Block(before + [index] + replay.stmts)):
        if v not in bound and v is not counter and not any(v is c.var
                                                              for c in loop.carries):
            top_saved = top_saved + [(v, v)]
            bound.add(v)
    return top_saved, stacks


def round_trips(fn: Function, loop: For, rep: Repeat, adj_body: Block,
                tapes: set[Var]) -> list[tuple[Var, list[Eqn], Eqn]]:
    """The stacks that become pointless once an iteration's adjoint runs in the same iteration
    as its forward body (fused, or replayed): the iteration pushes one value at the top of its
    body, the adjoint pops it at the top of its own into the same name, nothing rebinds that
    name in between and nothing else uses the stack. The pop would give back the value still
    in the variable. Arrays only when pushed without a copy (the same object comes back).
    Returns ``(stack, the statements that go, the pop)`` for each; changes nothing."""
    uses: dict[Var, list] = {}
    for block in (fn.body, adj_body):
        for s in walk(block):
            if isinstance(s, Eqn):
                for a in s.ins + s.outs:
                    uses.setdefault(a, []).append(s)
    found = []
    for tape in sorted(tapes, key=lambda v: v.name):
        pushes = [s for s in loop.body.stmts if isinstance(s, Eqn) and s.prim == "push"
                  and s.ins[0] is tape]
        pops = [s for s in rep.body.stmts if isinstance(s, Eqn) and s.prim == "pop"
                and s.ins[0] is tape]
        if len(pushes) != 1 or len(pops) != 1:
            continue
        push, pop = pushes[0], pops[0]
        count, value = push.ins[1], push.ins[2]
        alloc = [s for s in uses.get(tape, ()) if s.prim == "stack_alloc"]
        reserves = [s for s in uses.get(tape, ()) if s.prim == "reserve"]
        if len(alloc) != 1 or not any(s is alloc[0] for s in fn.body.stmts):
            continue
        going = [push, pop] + alloc + reserves
        if {id(s) for s in uses.get(tape, []) + uses.get(count, [])} != {id(s) for s in going}:
            continue
        if push.params.get("flat") or (value.type.ndim and push.params.get("copy")) \
                or not isinstance(value, Var) or pop.outs[0].name != value.name:
            continue
        after_push = loop.body.stmts[next(k for k, t in enumerate(loop.body.stmts)
                                          if t is push) + 1:]
        before_pop = rep.body.stmts[:next(k for k, t in enumerate(rep.body.stmts) if t is pop)]
        if any(v.name == value.name for s in after_push + before_pop
               for t in walk(Block([s])) for v in defs(t)):
            continue
        found.append((tape, going, pop))
    return found


def drop_round_trips(fn: Function, rep: Repeat, adj_body: Block, found: list) -> set[Var]:
    """Remove the `round_trips` ``found``: the push, the pop (its value read from the pushed
    variable), the stack and its room; returns the stacks dropped."""
    for _, going, pop in found:
        gone = {id(s) for s in going}
        for block in (fn.body, adj_body):
            remove_stmts(block, gone)
        replace_vars(rep.body, {pop.outs[0]: going[0].ins[2]})
    return {tape for tape, _, _ in found}


def remove_stmts(block: Block, gone: set[int]) -> None:
    block.stmts[:] = [s for s in block.stmts if id(s) not in gone]
    for s in block.stmts:
        for b in sub_blocks(s):
            remove_stmts(b, gone)


def one_seed(loop: For, ctx: ReverseContext) -> Carry | None:
    """The loop's one carried value that the code after it sends an adjoint back into, if
    there is exactly one and it is a float sum (``total += t``); otherwise None."""
    seeded = ctx.seeded.get(loop, [])
    if len(seeded) != 1:
        return None
    c = seeded[0]
    if c.var.type.ndim or c.var.type.kind != "f" or not is_reduction(loop, c):
        return None
    return c


def _fuse(fn, adj_body, loop: For, rep: Repeat, seed: Carry, ctx: ReverseContext, top_saved,
          stacks, namer):
    """Run each iteration's adjoint right after the iteration, in the forward pass.

    The loop's iterations are independent and the code after it sends an adjoint into one
    sum only (``seed``): the adjoint of iteration ``i`` is then that adjoint times what the
    iteration's adjoint gives for a seed of 1. The forward pass runs the iteration, then its
    adjoint with a seed of 1, adding into its own gradient arrays (``_g_means``: one per
    adjoint the loop adds into); the adjoint pass adds the real seed times each of them. The
    tape holds one iteration, and the body runs once instead of twice (forward, then replay).
    """
    counter = rep.counter
    body = [s for s in rep.body.stmts if not (
        isinstance(s, Eqn) and s.prim == "loop_index" and s.ins and s.ins[0] is counter)]
    if counter is not None and any(a is counter for s in body for t in walk(Block([s]))
                                   for a in direct_uses(t)):
        return None
    tapes = {s.ins[0] for s in walk(loop.body) if isinstance(s, Eqn) and s.prim == "push"}
    trips = round_trips(fn, loop, rep, adj_body, tapes)
    tapes -= {tape for tape, _, _ in trips}
    counting = push_counts(loop, tapes, namer)
    if counting is None:
        return None
    drop_round_trips(fn, rep, adj_body, trips)
    stacks = [v for v in stacks if v not in {tape for tape, _, _ in trips}]
    body = [s for s in body if any(s is t for t in rep.body.stmts)]  # (its pops are gone)
    seed_adj = ctx.adjoint_of(seed.var)
    carried = {ctx.adjoint_of(c.var) for c in loop.carries if ctx.is_active(c.var)}
    forward_of = {ctx.adjoint_of(k): k for k in ctx.outer_targets(loop)}
    outer = [ctx.adjoint_of(k) for k in ctx.outer_targets(loop)
             if ctx.adjoint_of(k) not in carried]
    # what the adjoint receives under another name is read under its forward name here
    rename = {v: a for a, v in top_saved if isinstance(a, Var) and a is not v}
    unit = Var(namer.fresh("_unit"), seed_adj.type)
    rename[seed_adj] = unit
    grads = {}
    for v in outer:
        grads[v] = rename[v] = Var(namer.fresh("_g_" + v.name[3:]), v.type,
                                           dims=v.dims)
    replace_vars(Block(body), rename)
    # 1. the forward pass counts the most pushes of one iteration and allocates the stacks
    #    for that (a push is then a bare store); the gradients start at zero, the seed at one;
    #    each iteration runs its adjoint after its body (the pops take back what it pushed)
    count_stmts, most = counting
    allocs = [s for s in fn.body.stmts if isinstance(s, Eqn) and s.prim == "stack_alloc"
              and s.outs[0] in tapes]
    fn.body.stmts[:] = [s for s in fn.body.stmts if not any(s is a for a in allocs)]
    init = count_stmts + [Eqn("stack_alloc", list(a.outs), [most.get(a.outs[1], Const(16))],
                              dict(a.params), a.loc) for a in allocs]
    init.append(Eqn("assign", [unit], [Const(1.0)], {}, loop.loc))
    for v in outer:
        init.append(_zero(grads[v], forward_of[v], loop.loc))
    for c in loop.carries:
        if ctx.is_active(c.var) and c is not seed:
            adj = ctx.adjoint_of(c.var)
            if adj is not seed_adj and not any(isinstance(s, Eqn) and s.outs and s.outs[0] is adj
                                               for s in init):
                init.append(_zero(rename.get(adj, adj), ctx.adjoint_key(c.var), loop.loc))
    at = next(i for i, s in enumerate(fn.body.stmts) if s is loop)
    fn.body.stmts[at:at] = init
    drop_reserves(loop.body, tapes, growing={a.outs[0] for a in allocs
                                             if a.outs[1] not in most})
    loop.body.stmts += without_recomputing(body, loop.body)
    # 2. the adjoint pass: the seed times each gradient, added where the loop's adjoint was;
    #    an adjoint still at its zero start takes the product (the gradient itself for a seed
    #    of one) instead of a zero array and an addition
    k = next(i for i, s in enumerate(adj_body.stmts) if s is rep)
    before = adj_body.stmts[:k]
    unit_seed = _is_one_here(seed_adj, before)
    scaled, zero_starts = [], []
    for v in outer:
        start = _zero_start(v, before)
        if start is not None:
            zero_starts.append(start)
            scaled.append(Eqn("assign", [v], [grads[v]], {}, loop.loc) if unit_seed
                          else Eqn("mul", [v], [seed_adj, grads[v]], {}, loop.loc))
            continue
        t = Var(namer.fresh("_t"), v.type, dims=v.dims)
        scaled.append(Eqn("mul", [t], [seed_adj, grads[v]], {}, loop.loc))
        scaled.append(Eqn("iadd", [], [v, t], {}, loop.loc) if v.type.ndim
                      else Eqn("add", [v], [v, t], {}, loop.loc))
    adj_body.stmts[k:k + 1] = scaled
    adj_body.stmts[:] = [s for s in adj_body.stmts if not any(s is z for z in zero_starts)]
    # 3. the loop's stacks stay in the forward pass; its gradients travel to the adjoint
    moved = {v for a in allocs for v in a.outs}
    stacks = [v for v in stacks if v not in moved]
    top_saved = top_saved + [(grads[v], grads[v]) for v in outer]
    return top_saved, stacks


def _is_one_here(var: Var, stmts: list) -> bool:
    """Whether ``var`` is 1.0 after ``stmts``: they define it once, at their top level, as the
    constant 1.0 (the seed of a gradient), and nothing else there defines a variable of its
    name."""
    found = [s for s in stmts for t in walk(Block([s])) if any(v.name == var.name for v in defs(t))]
    return (len(found) == 1 and isinstance(found[0], Eqn) and found[0].prim == "assign"
            and found[0].outs == [var] and isinstance(found[0].ins[0], Const)
            and found[0].ins[0].value == 1.0)


def _zero_start(var: Var, stmts: list) -> Eqn | None:
    """The equation of ``stmts``' top level that starts adjoint ``var`` at zero, if nothing else
    in ``stmts`` reads or writes a variable of its name: the first contribution may then be
    assigned to it (the fused gradient ``_g_x`` it takes is a fresh array of the same type,
    read nowhere after)."""
    start = None
    for s in stmts:
        if (isinstance(s, Eqn) and s.outs == [var] and start is None and (
                s.prim == "zeros_like" if var.type.ndim else
                s.prim == "assign" and isinstance(s.ins[0], Const) and s.ins[0].value == 0.0)):
            start = s
            continue
        for t in walk(Block([s])):
            if any(isinstance(a, Var) and a.name == var.name
                   for a in [*defs(t), *direct_uses(t)]):
                return None
    return start


def without_recomputing(adjoint: list, iteration: Block) -> list:
    """The iteration's adjoint without the equations that compute again, at its top level,
    a value the iteration computed at its own top level (`saving` recomputes a scalar instead
    of taping it; fused, the adjoint runs right after the iteration, which still holds it).
    The values are the same: a recomputed value reads nothing written after it is computed
    (`saving.Saver.recomputable`), and the iteration defines each of its values once."""
    held = {v for s in iteration.stmts if isinstance(s, Eqn) for v in s.outs}
    return [s for s in adjoint if not (
        isinstance(s, Eqn) and s.outs and all(v in held for v in s.outs)
        and not ops.flags(s.prim).effects)]


def _zero(var: Var, like: Var, loc) -> Eqn:
    if var.type.ndim:
        return Eqn("zeros_like", [var], [like], {}, loc)
    return Eqn("assign", [var], [Const(0.0)], {}, loc)


def name_clash(loop: For, fn: Function, top_saved: list) -> bool:
    """Whether the replay would read, under its forward name, a variable whose name another
    variable the adjoint already takes (or another read) has: versions of one array share
    their name in the forward code."""
    names: dict[str, Var] = {v.name: v for _, v in top_saved}
    names.update({p.name: p for p in fn.params})
    reads = free_vars(loop.body) + [c.init for c in loop.carries if isinstance(c.init, Var)]
    carried = {c.var for c in loop.carries}
    for v in reads:
        if v in carried:
            continue
        if names.setdefault(v.name, v) is not v:
            return True
    return False


def drop_reserves(block: Block, tapes: set[Var], growing=frozenset()) -> None:
    """In the replay: the stacks have room for the largest iteration; every push is a store
    (but onto the ``growing`` stacks, which check for room: flat stacks `push_counts` could
    not count)."""
    block.stmts[:] = [s for s in block.stmts if not (
        isinstance(s, Eqn) and s.prim == "reserve" and s.ins[0] in tapes)]
    for s in block.stmts:
        if isinstance(s, Eqn) and s.prim == "push" and s.ins[0] in tapes:
            s.params["exact"] = s.ins[0] not in growing
        for b in sub_blocks(s):
            drop_reserves(b, tapes, growing)


RECOMPUTE = Pass("recompute", recompute_loops, reads=("context", "adjoint", "saved", "stacks"),
                 writes=("saved", "stacks"), needs=("saving",))
ASCENDING = Pass("ascending", mark_ascending, reads=("context",), writes=(),
                 needs=("recompute",))

__all__ = ["ASCENDING", "RECOMPUTE", "mark_ascending", "planned", "recompute_loops"]

