"""Recompute instead of tape: a loop whose iterations do not depend on one another is run again,
one iteration at a time, inside its adjoint loop.

Takes the result of the reverse transform and its saving (`reverse._Saver`): a forward body that
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

from .ir import (
    Block,
    Carry,
    Const,
    Eqn,
    For,
    Function,
    If,
    Repeat,
    Storage,
    Var,
    While,
    defs,
    direct_uses,
    sub_blocks,
    walk,
)

# Statements of the saving machinery (not the user's computation).
_TAPE = {"push", "reserve", "stack_alloc", "pop", "trip_count"}
# Equations that read an array only for its shape.
_SHAPE_ONLY = {"shape_dim", "size", "zeros_like", "ones_like", "broadcast_like",
               "sum_to_like", "reshape_like", "spread"}
MIN_PUSHES = 4  # values pushed per iteration, at the loop's own level, that make it worth it
ENABLED = True  # tests compare with recomputation switched off


def planned(fn: Function) -> set[int]:
    """Before saving: the blocks of the top-level loops that will likely be recomputed (their
    iterations are independent and they hold a nested loop). Saving pushes the results of
    costly scalar functions there rather than computing them a third time."""
    storage = Storage(fn)
    out: set[int] = set()
    for k, loop in enumerate(fn.body.stmts if ENABLED else ()):
        if (isinstance(loop, For) and any(not isinstance(s, Eqn) for s in loop.body.stmts)
                and independent(loop, None, storage, fn.body.stmts[k + 1:]) is None):
            out.add(id(loop.body))
            out |= {id(b) for s in walk(loop.body) for b in sub_blocks(s)}
    return out


def recompute_loops(fn: Function, adj_body: Block, repeat_of: dict, counter_of,
                    top_saved: list, stacks: list) -> tuple[list, list]:
    """Turn every qualifying top-level loop of ``fn`` into a recomputed one (see the module
    docstring); return the new ``top_saved`` and ``stacks``."""
    storage = Storage(fn)
    for k, loop in enumerate(fn.body.stmts):
        if not isinstance(loop, For) or id(loop) not in repeat_of:
            continue
        rep = repeat_of[id(loop)]
        why = independent(loop, rep, storage, fn.body.stmts[k + 1:])
        if why is None and not ENABLED:
            why = "recomputation is switched off"
        if why is None and _name_clash(loop, fn, top_saved):
            why = "two versions of an array it reads share a name"
        if why is None and not worth_it(loop) and not loop.parallel:  # prange: no tape
            pushes = any(isinstance(s, Eqn) and s.prim == "push" for s in walk(loop.body))
            why = "its tape is small" if pushes else "it needs no tape"
        if why == "it needs no tape":
            rep.note = loop.note = "jitgrad: no tape: the adjoint rebuilds what it reads"
            continue
        if why is not None:
            rep.note = loop.note = f"jitgrad: taped in reverse ({why})"
            continue
        top_saved, stacks = _recompute(fn, adj_body, loop, rep, counter_of(loop), top_saved,
                                       stacks)
        rep.note = loop.note = ("jitgrad: recomputed in reverse (its iterations are "
                                "independent): no tape across iterations")
    return top_saved, stacks


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
            if not _is_reduction(loop, c):
                return f"`{c.var.name}` is carried from one iteration to the next"
        elif reads_start(loop.body, {id(c.var)}):
            return f"it reads `{c.var.name}` as the previous iteration left it"
    for s in rep.body.stmts if rep else ():  # the adjoint rebuilds a value from the next
        if isinstance(s, Eqn) and s.prim == "assign" and any(  # iteration's: needs the tape
                a is c.var for c in loop.carries for a in s.ins):
            return "its adjoint rebuilds values from the next iteration"
    written_after = {storage.find(id(o)) for s in after for t in walk(Block([s]))
                     if isinstance(t, Eqn) and t.prim == "setitem" for o in t.outs}
    for a in _free_vars(loop.body):
        if a.type.ndim and storage.find(id(a)) in written_after:
            return f"`{a.name}` is written after the loop"
    return None


def worth_it(loop: For) -> bool:
    own = [s for s in loop.body.stmts if isinstance(s, Eqn) and s.prim == "push"]
    nested = any(isinstance(s, Eqn) and s.prim == "push"
                 for t in loop.body.stmts if not isinstance(t, Eqn)
                 for s in walk(Block([t])))
    return nested or len(own) >= MIN_PUSHES


def _is_reduction(loop: For, c: Carry) -> bool:
    """``total += t``, perhaps in nested loops and branches: every value that derives from the
    carried ``total`` is only added to (``add``/``sub``), carried, merged, or the update. No
    derivative reads such a value, and the replay never needs it."""
    acc = {id(c.var)}
    changed = True
    while changed:
        changed = False
        for s in walk(loop.body):
            outs = []
            if isinstance(s, Eqn) and s.prim in ("add", "sub") and any(
                    isinstance(a, Var) and id(a) in acc for a in s.ins[:1 + (s.prim == "add")]):
                outs = s.outs
            for m in getattr(s, "carries", []) + getattr(s, "merges", []):
                if any(isinstance(a, Var) and id(a) in acc for a in (m.init, m.update)):
                    outs = outs + [m.var]
            for o in outs:
                if id(o) not in acc:
                    acc.add(id(o))
                    changed = True
    if id(c.update) not in acc:
        return False
    for s in walk(loop.body):
        plumbing = [a for m in getattr(s, "carries", []) + getattr(s, "merges", [])
                    for a in (m.init, m.update)]
        for a in direct_uses(s):
            if not (isinstance(a, Var) and id(a) in acc):
                continue
            if isinstance(s, Eqn):
                if s.prim not in ("add", "sub") or id(s.outs[0]) not in acc or (
                        s.prim == "sub" and s.ins[1] is a) or sum(
                        isinstance(b, Var) and id(b) in acc for b in s.ins) > 1:
                    return False
            elif not any(a is b for b in plumbing) or a in _bounds(s):
                return False
    return True


def _bounds(s) -> list:
    """A loop's or branch's own reads other than its carried values."""
    out = [s.cond] if isinstance(s, (If, While)) else []
    if isinstance(s, For):
        out += [s.start, s.stop, s.step]
    if getattr(s, "exit_flag", None) is not None:
        out.append(s.exit_flag)
    return [a for a in out if isinstance(a, Var)]


def reads_start(body: Block, stale: set[int]) -> bool:
    """Whether ``body`` reads the contents of an array in ``stale`` (ids of variables whose
    memory still holds what it held when the iteration began) before it is filled again."""
    stale = set(stale)
    for s in body.stmts:
        if isinstance(s, Eqn):
            if s.prim in _SHAPE_ONLY or s.prim in ("reserve", "stack_alloc", "trip_count"):
                continue
            if s.prim == "setitem":
                if any(isinstance(a, Var) and id(a) in stale for a in s.ins[1:]):
                    return True
                if id(s.ins[0]) in stale and not all(x == ":" for x in
                                                       s.params["index_spec"]):
                    stale.add(id(s.outs[0]))  # partly written: the rest is still old
                continue
            if any(isinstance(a, Var) and id(a) in stale for a in s.ins):
                return True
        elif isinstance(s, If):
            if isinstance(s.cond, Var) and id(s.cond) in stale:
                return True
            for b in (s.then, s.orelse):
                if reads_start(b, stale):
                    return True
            for m in s.merges:  # conservative: stale if it may be stale on either side
                if any(isinstance(a, Var) and id(a) in stale | _stale_after(b, stale)
                       for a, b in ((m.init, s.then), (m.update, s.orelse))):
                    stale.add(id(m.var))
        else:  # a nested loop
            inner = stale | {id(c.var) for c in s.carries if isinstance(c.init, Var)
                             and id(c.init) in stale}
            blocks = [s.body] + ([s.cond_block] if isinstance(s, While) else [])
            if any(reads_start(b, inner) for b in blocks):
                return True
            if isinstance(s, While) and isinstance(s.cond, Var) and id(s.cond) in inner:
                return True
            for c in s.carries:
                if id(c.var) in inner and not _fills(s, c):
                    stale.add(id(c.var))
    return False


def _stale_after(block: Block, stale: set[int]) -> set[int]:
    """The stale set at the end of ``block`` (partial writes of stale arrays stay stale)."""
    out = set(stale)
    for s in walk(block):
        if isinstance(s, Eqn) and s.prim == "setitem" and id(s.ins[0]) in out:
            out.add(id(s.outs[0]))
        for c in getattr(s, "carries", []) + getattr(s, "merges", []):
            if any(isinstance(a, Var) and id(a) in out for a in (c.init, c.update)):
                out.add(id(c.var))
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


def _free_vars(block: Block) -> list[Var]:
    """Variables ``block`` reads that it does not define (in first-use order)."""
    defined = set()
    for s in walk(block):
        for v in defs(s):
            defined.add(id(v))
        if isinstance(s, For):
            defined.add(id(s.index))
    out, seen = [], set()
    for s in walk(block):
        for a in direct_uses(s):
            if isinstance(a, Var) and id(a) not in defined and id(a) not in seen:
                seen.add(id(a))
                out.append(a)
    return out


# ----------------------------------------------------------------------------- rewriting


def _recompute(fn, adj_body, loop: For, rep: Repeat, counter: Var, top_saved, stacks):
    tapes = {id(s.ins[0]) for s in walk(loop.body) if isinstance(s, Eqn) and s.prim == "push"}
    replay = _clone(loop.body)  # with its pushes
    _drop_reserves(replay, tapes)
    # (a reduction's value is never read: the replay adds to a stand-in, see below)
    # 1. the forward pass keeps no tape for the loop; it counts the pushes of the iteration
    #    that pushes most, so that the adjoint's stacks need no check for room
    allocs = [s for s in fn.body.stmts if isinstance(s, Eqn) and s.prim == "stack_alloc"
              and id(s.outs[0]) in tapes]
    most = {}  # id(tape) -> the most pushes in one iteration
    at = next(i for i, s in enumerate(fn.body.stmts) if s is loop)
    for a in allocs:
        tape, count = a.outs
        most[id(tape)] = Var(count.name + "_most", count.type)
        fn.body.stmts[at:at] = [Eqn("count_reset", [most[id(tape)]], [], {}, None)]
        loop.body.stmts[:0] = [Eqn("count_reset", [count], [], {}, None)]
        loop.body.stmts.append(Eqn("count_max", [most[id(tape)]], [most[id(tape)], count],
                                   {}, None))
        top_saved = top_saved + [(most[id(tape)], most[id(tape)])]
    fn.body.stmts[:] = [s for s in fn.body.stmts if not any(s is a for a in allocs)]
    _count_pushes(loop.body, tapes)
    moved = {id(v) for a in allocs for v in a.outs}
    stacks = [v for v in stacks if id(v) not in moved]
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
        before.append(Eqn("stack_alloc", list(a.outs), [most[id(a.outs[0])]], dict(a.params),
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
    bound = {id(v) for _, v in top_saved} | {id(p) for p in fn.params}
    for v in _free_vars(Block(before + [index] + replay.stmts)):
        if id(v) not in bound and v is not counter and not any(v is c.var
                                                              for c in loop.carries):
            top_saved = top_saved + [(v, v)]
            bound.add(id(v))
    return top_saved, stacks


def _name_clash(loop: For, fn: Function, top_saved: list) -> bool:
    """Whether the replay would read, under its forward name, a variable whose name another
    variable the adjoint already takes (or another read) has: versions of one array share
    their name in the forward code."""
    names: dict[str, int] = {v.name: id(v) for _, v in top_saved}
    names.update({p.name: id(p) for p in fn.params})
    reads = _free_vars(loop.body) + [c.init for c in loop.carries if isinstance(c.init, Var)]
    carried = {id(c.var) for c in loop.carries}
    for v in reads:
        if id(v) in carried:
            continue
        if names.setdefault(v.name, id(v)) != id(v):
            return True
    return False


def _count_pushes(block: Block, tapes: set[int]) -> None:
    """In the forward pass: count each push instead of making it; no room to reserve."""
    out = []
    for s in block.stmts:
        if isinstance(s, Eqn) and s.prim in ("push", "reserve") and id(s.ins[0]) in tapes:
            if s.prim == "push":
                out.append(Eqn("count_tick", [], [s.ins[1]], {}, None))
            continue
        for b in sub_blocks(s):
            _count_pushes(b, tapes)
        out.append(s)
    block.stmts[:] = out


def _drop_reserves(block: Block, tapes: set[int]) -> None:
    """In the replay: the stacks have room for the largest iteration; every push is a store."""
    block.stmts[:] = [s for s in block.stmts if not (
        isinstance(s, Eqn) and s.prim == "reserve" and id(s.ins[0]) in tapes)]
    for s in block.stmts:
        if isinstance(s, Eqn) and s.prim == "push" and id(s.ins[0]) in tapes:
            s.params["exact"] = True
        for b in sub_blocks(s):
            _drop_reserves(b, tapes)


def _clone(block: Block) -> Block:
    """The same statements, new objects (the variables are shared)."""
    out = []
    for s in block.stmts:
        if isinstance(s, Eqn):
            out.append(Eqn(s.prim, list(s.outs), list(s.ins), dict(s.params), s.loc))
        elif isinstance(s, For):
            out.append(For(s.index, s.start, s.stop, s.step, _clone(s.body), _carries(s.carries),
                           s.trips, s.exit_flag, s.loc))
        elif isinstance(s, While):
            out.append(While(_clone(s.cond_block), s.cond, _clone(s.body), _carries(s.carries),
                             s.trips, s.loc, s.exit_flag))
        elif isinstance(s, If):
            out.append(If(s.cond, _clone(s.then), _clone(s.orelse), _carries(s.merges), s.loc))
        else:
            raise TypeError(f"cannot replay {type(s).__name__}")
    return Block(out)


def _carries(carries) -> list[Carry]:
    return [Carry(c.var, c.init, c.update) for c in carries]


__all__ = ["planned", "recompute_loops"]
