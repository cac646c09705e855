"""Checkpointing: a taped loop whose tape would pass a memory cap is run again in segments.

Takes the reverse transform after saving and recomputing (the passes before `CHECKPOINT`), and
the cap in bytes the user set (``grad(f, memory_cap=...)``; the pass runs only under a cap). A top-level
``for`` loop that kept its tape (its iterations depend on one another: a recurrence, an ODE
step) is checkpointed instead, when it can be:

* **Forward.** The loop runs without its tape. It counts what it would push, and each time the
  count reaches the segment budget (half the cap, in 8-byte values) it starts a new segment:
  it pushes the iteration number and the values it carries (the state) onto checkpoint stacks.
  It also records the most values one segment pushes on each stack.
* **Adjoint.** For each segment, last first: pop its state, run its iterations forward again
  with their pushes (onto stacks sized for the largest segment, so a push is a bare store), then
  run those iterations' adjoint, last first, as before.

Memory: one segment's tape (at most half the cap, unless one iteration alone pushes more) plus
the states at segment starts (one state per segment; the number of segments is the whole tape
over half the cap). Time: the loop's forward body runs twice instead of once, and the first run
keeps no tape. A loop qualifies when it cannot exit early and carries no array it writes in
place (restoring such a state would need a copy per segment); otherwise it keeps its tape, and
``.source()`` says why. Arrays count by their size.

Guarantees: the replayed segment computes exactly what the forward computed (same inputs, same
state); the adjoint is the taped one, iteration for iteration.
"""

from __future__ import annotations

import dataclasses

from jitgrad.core.ir import (
    Block,
    Carry,
    Const,
    Eqn,
    For,
    If,
    LoopPlan,
    Repeat,
    Storage,
    Var,
    clone,
    defs,
    free_vars,
    plan_loop,
    walk,
)
from jitgrad.core.types import INT, Type
from jitgrad.transforms.passes import GradientWork, Pass
from jitgrad.transforms.push_counts import count_pushes
from jitgrad.transforms.recompute import drop_reserves, name_clash, written_after

VALUE_BYTES = 8  # a pushed scalar


def checkpoint_loops(work: GradientWork) -> None:
    """Checkpoint every taped top-level loop that qualifies (module docstring) under
    ``work.settings.memory_cap``, updating ``work.saved`` and ``work.stacks``."""
    ctx, cap, adj_body = work.context, work.settings.memory_cap, work.adjoint
    fn, namer, top_saved, stacks = ctx.fn, ctx.namer, work.saved, work.stacks
    storage = Storage(fn)
    for loop in list(fn.body.stmts):
        if not isinstance(loop, For) or loop not in ctx.repeat_of:
            continue
        rep = ctx.repeat_of[loop]
        if rep.plan is not LoopPlan.TAPED:
            continue  # fused, recomputed, or no tape: nothing grows
        k = next(i for i, s in enumerate(fn.body.stmts) if s is loop)
        why = _cannot(loop, storage) or written_after(loop, storage, fn.body.stmts[k + 1:])
        if why is None and name_clash(loop, fn, top_saved):
            why = "two versions of an array it reads share a name"
        if why is None:  # a state saved by reference must still hold it when restored
            why = _state_written_after(loop, storage, fn.body.stmts[k + 1:])
        if why is not None:
            rep.note = loop.note = f"{rep.note}; not checkpointed: {why}"
            continue
        plan_loop(loop, rep, LoopPlan.CHECKPOINTED,
                  f"jitgrad: checkpointed (memory cap {cap} bytes): the forward pass saves the "
                  "state at each segment's start; the adjoint runs each segment again, then its "
                  "adjoint", rep.plan_reason)
        top_saved, stacks = _checkpoint(fn, adj_body, loop, rep, top_saved, stacks, namer, cap)
    work.saved, work.stacks = top_saved, stacks


def _cannot(loop: For, storage: Storage) -> str | None:
    if loop.exit_flag is not None:
        return "it can exit early"
    if loop.parallel:
        return "it is a parallel loop"
    pushes = [s for s in walk(loop.body) if isinstance(s, Eqn) and s.prim == "push"]
    if not pushes:
        return "it pushes nothing"
    for c in loop.carries:
        if isinstance(c.var, Var) and c.var.type.ndim and storage.written(c.var):
            return f"it writes `{c.var.name}` in place"
    return None


def _state_written_after(loop: For, storage: Storage, after: list) -> str | None:
    written = {storage.find(o) for s in after for t in walk(Block([s]))
               if isinstance(t, Eqn) and t.prim == "setitem" for o in t.outs}
    for c in loop.carries:
        if isinstance(c.init, Var) and c.init.type.ndim and storage.find(c.init) in written:
            return f"`{c.init.name}`, which it starts from, is written after the loop"
    return None


@dataclasses.dataclass
class _Segments:
    """The variables of one checkpointed loop: the pushes counted against the budget
    (``used``), the iteration count (``k``), the stack of segment starts, and per carried
    value the stack of its states at those starts; ``most`` per loop stack its most pushes in a
    segment."""

    loop: For
    allocs: list  # the loop's own stack allocations (moved into the adjoint, per segment)
    budget: Const
    used: Var
    k: Var
    starts: Var
    n_starts: Var
    states: list  # (carry, its state stack, that stack's count)
    most: dict  # loop stack count -> its most per segment
    counts: list  # the loop stacks' counts

    def save_state(self, iteration, values) -> list:
        loc = self.loop.loc
        out = [Eqn("push", [], [self.starts, self.n_starts, iteration],
                   {"copy": False, "ndim": 0}, loc)]
        for (c, tape, n), v in zip(self.states, values):
            out.append(Eqn("push", [], [tape, n, v], {"copy": False, "ndim": c.var.type.ndim},
                           loc))
        return out


def _checkpoint(fn, adj_body, loop: For, rep: Repeat, top_saved, stacks, namer, cap: int):
    """Checkpoint one taped loop (module docstring): the forward pass counts, and saves the
    state where a segment begins; the adjoint replays each segment with its tape, last first.
    Returns the new ``top_saved`` and ``stacks``."""
    tapes = {s.ins[0] for s in walk(loop.body) if isinstance(s, Eqn) and s.prim == "push"}
    allocs = [s for s in fn.body.stmts if isinstance(s, Eqn) and s.prim == "stack_alloc"
              and s.outs[0] in tapes]
    replay = clone(loop.body)  # with its pushes, before the forward loses them
    drop_reserves(replay, tapes)

    def fresh(name, type_):
        return Var(namer.fresh(name), type_)

    states = []
    for c in loop.carries:
        t = c.var.type
        states.append((c, fresh("_ck_" + c.var.name.lstrip("_"), Type(t.kind, t.ndim + 1)),
                       fresh("_n_ck_" + c.var.name.lstrip("_"), INT)))
    seg = _Segments(loop, allocs, Const(max(1, cap // (2 * VALUE_BYTES))),
                    used=fresh("_ck_used", INT), k=fresh("_ck_k", INT),
                    starts=fresh("_ck_start", Type("i", 1)), n_starts=fresh("_n_ck_start", INT),
                    states=states,
                    most={a.outs[1]: fresh(a.outs[1].name + "_most", INT) for a in allocs},
                    counts=[a.outs[1] for a in allocs])
    _segment_the_forward(fn, seg, tapes, namer, fresh("_ck_full", Type("b", 0)))
    body, defined_here = _replay_the_segments(adj_body, seg, rep, replay, fresh)
    return _what_travels(fn, seg, body, defined_here, top_saved, stacks)


def _segment_the_forward(fn, seg: _Segments, tapes, namer, full: Var) -> None:
    """The forward pass: count instead of push; a new segment when the budget is used up."""
    loop, loc = seg.loop, seg.loop.loc
    before = [Eqn("count_reset", [seg.used], [], {}, loc),
              Eqn("count_reset", [seg.k], [], {}, loc),
              Eqn("stack_alloc", [seg.starts, seg.n_starts], [Const(16)],
                  {"kind": "i", "ndim": 0}, loc)]
    for c, tape, n in seg.states:
        before.append(Eqn("stack_alloc", [tape, n], [Const(16)],
                          {"kind": c.var.type.kind, "ndim": c.var.type.ndim}, loc))
    before += [Eqn("count_reset", [m], [], {}, loc) for m in seg.most.values()]
    before += [Eqn("count_reset", [n], [], {}, loc) for n in seg.counts]
    before += seg.save_state(Const(0), [c.init for c in loop.carries])
    count_pushes(loop.body, tapes, budget=seg.used, namer=namer)
    new_segment = Block(seg.save_state(seg.k, [c.var for c in loop.carries])
                        + [Eqn("count_reset", [seg.used], [], {}, loc)]
                        + [Eqn("count_reset", [n], [], {}, loc) for n in seg.counts])
    loop.body.stmts[:0] = [Eqn("ge", [full], [seg.used, seg.budget], {}, loc),
                           If(full, new_segment, Block(), [], loc)]
    loop.body.stmts += [Eqn("count_max", [seg.most[n]], [seg.most[n], n], {}, loc)
                        for n in seg.counts]
    loop.body.stmts.append(Eqn("count_tick", [], [seg.k], {}, loc))
    at = next(i for i, s in enumerate(fn.body.stmts) if s is loop)
    fn.body.stmts[at:at] = before
    fn.body.stmts[:] = [s for s in fn.body.stmts if not any(s is a for a in seg.allocs)]


def _replay_the_segments(adj_body, seg: _Segments, rep: Repeat, replay: Block, fresh):
    """The adjoint: segments last first; each is replayed with its tape, then reversed.
    Returns the segment body and the variables it defines."""
    loop, loc = seg.loop, seg.loop.loc
    seg_start, seg_end = fresh("_ck_from", INT), fresh("_ck_to", INT)
    index = fresh("_ck_i", INT)
    restored = {c.var: fresh(c.var.name + "_ck", c.var.type) for c in loop.carries}
    body = [Eqn("pop", [seg_start], [seg.starts, seg.n_starts], {"ndim": 0}, loc)]
    for c, tape, n in reversed(seg.states):
        body.append(Eqn("pop", [restored[c.var]], [tape, n], {"ndim": c.var.type.ndim},
                        loc))
    replay.stmts[:0] = [Eqn("loop_index", [loop.index], [index, loop.start, loop.step], {},
                            loc)]
    body.append(For(index, seg_start, seg_end, Const(1), replay,
                    [Carry(c.var, restored[c.var], c.update) for c in loop.carries],
                    fresh("_ck_trips", INT), None, loc))
    if rep.counter is not None:
        body.append(Repeat(seg_end, rep.body, rep.counter, low=seg_start))
    else:
        n_iter = fresh("_ck_len", INT)
        body += [Eqn("sub", [n_iter], [seg_end, seg_start], {}, loc), Repeat(n_iter, rep.body)]
    body.append(Eqn("assign", [seg_end], [seg_start], {}, loc))
    segments = [Eqn("stack_alloc", list(a.outs), [seg.most[a.outs[1]]], dict(a.params), a.loc)
                for a in seg.allocs]
    segments.append(Eqn("assign", [seg_end], [loop.trips], {}, loc))
    segments.append(Repeat(seg.n_starts, Block(body), note=rep.note, plan=rep.plan,
                           plan_reason=rep.plan_reason))
    k_rep = next(i for i, s in enumerate(adj_body.stmts) if s is rep)
    adj_body.stmts[k_rep:k_rep + 1] = segments
    return body, {*restored.values(), seg_start, seg_end, index, loop.index}


def _what_travels(fn, seg: _Segments, body, defined_here, top_saved, stacks):
    """The checkpoint stacks and the most pushes go to the adjoint; the loop's own stacks do
    not (each segment allocates them). Returns the new ``top_saved`` and ``stacks``."""
    loop = seg.loop
    moved = {v for a in seg.allocs for v in a.outs}
    stacks = [v for v in stacks if v not in moved] + [seg.starts, seg.n_starts] + [
        v for _, tape, n in seg.states for v in (tape, n)]
    bound = {v for _, v in top_saved} | {p for p in fn.params} | {v for v in stacks}
    needed = [*seg.most.values(), loop.trips, loop.start, loop.step] + free_vars(Block(body))
    for v in needed:
        if isinstance(v, Var) and v not in bound | moved and v not in defined_here \
                and _defined_in_forward(fn, v):
            top_saved = top_saved + [(v, v)]
            bound.add(v)
    return top_saved, stacks


def _defined_in_forward(fn, v: Var) -> bool:
    """Whether the forward kernel defines ``v`` at its top level or takes it as a parameter."""
    return any(v is p for p in fn.params) or any(
        any(v is d for d in defs(s)) for s in fn.body.stmts)


CHECKPOINT = Pass("checkpoint", checkpoint_loops, reads=("context", "adjoint", "saved", "stacks"),
                  writes=("saved", "stacks"), needs=("recompute",), when="memory_cap")

__all__ = ["CHECKPOINT", "checkpoint_loops"]
