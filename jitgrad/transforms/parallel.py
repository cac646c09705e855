"""Parallel loops: under ``parallel=True``, a top-level ``numba.prange`` loop runs in parallel in
the forward pass and in the adjoint, and the result does not depend on the thread count.

Takes the transformed, optimised `reverse.Gradient` (the builder marks loops written with
``numba.prange``: ``For.parallel``) and rewrites each marked loop it can run in parallel into a
``numba.prange`` loop over ``N`` chunks: chunk ``c`` runs iterations ``c*T//N`` to
``(c+1)*T//N - 1`` (``T`` the trip count) one after another, as the serial loop would. ``N`` is
computed when the loop starts, from ``T``, an estimate of an iteration's work and the size of
what each chunk accumulates (`chunk_count`), never from the thread count. Guarantees:

* **Nothing races.** A chunk writes only its own variables, arrays it allocates, elements
  ``a[i, ...]`` indexed by the loop's own index ``i`` (disjoint between iterations), and its own
  slot of a *partials* array. A work array allocated before the loop (``beta = np.zeros(K)``),
  which every iteration fills before reading it and nothing reads after the loop, is allocated
  per chunk instead (`_work_array`), and so is its adjoint (`_work_adjoint`). Every other value that iterations add up — a scalar reduction
  (``total += t``) in the forward pass, an adjoint that every iteration adds into
  (``_b_means[k, j] += ...``, ``_b_eps = _b_eps + ...``) in the adjoint — is accumulated per
  chunk, in a private variable or an array the chunk allocates, stored in the chunk's slot
  ``parts[c]`` when the chunk is done, and the chunks' partials are added to the total after
  the loop, one after another, in chunk order.
* **Allocations per chunk, not per iteration.** Work arrays that every iteration allocates at
  a size fixed before the loop are allocated once per chunk and refilled (`_hoist_allocations`);
  the stacks of the replay are typed arrays sized for one iteration, once per chunk (a value
  pushed and popped straight back has no stack: `recompute.round_trips`). A list remains
  where an iteration pushes several arrays (views, copies).
* **Chunk bodies compiled as serial code.** Each chunk loop's body becomes a function of the
  generated module (``<kernel>_chunk0``, `outline_chunks`), called from the ``prange`` loop:
  Numba compiles it as it compiles the serial gradient (inside its parallel loop the same code
  ran 1.3x slower).
* **Bit-for-bit repeatable.** The chunks, the order within a chunk and the order of the final
  sum are fixed by the arguments, so the result is the same on every run and at any thread
  count; it equals the serial result to rounding (the sums are associated differently).
* **As many chunks as pay for themselves.** A chunk costs its partials (allocated, zeroed,
  stored, added up after the loop) and a loop costs waking the threads: a short loop, or one
  whose iterations are cheap next to its partials, gets fewer chunks, down to one, which runs on
  the calling thread (`core.chunking.chunk_count`, and the emitter limits the threads to
  the chunks). The estimate of an iteration's work (`_work`) counts its equations, an inner
  loop's as many times as it runs when its bounds are known before the loop, else
  `UNKNOWN_TRIPS` times: the unit `core.chunking` prices the chunks in.
* **The adjoint needs no tape across iterations.** Only loops that ``recompute.py`` fuses or
  recomputes run in parallel (a marked loop is one or the other whenever its iterations are
  independent, however small its tape). A fused loop is one ``prange`` loop: each iteration's
  adjoint runs right after it, in the same chunk (`_fused_plan`). A recomputed loop is two:
  the forward in chunks, then the adjoint in chunks, each reverse iteration replaying its
  forward iteration onto stacks its chunk allocates.
* **``range`` loops too.** A top-level ``range`` loop that ``recompute.py`` found independent
  (it fuses or recomputes it) and that passes the same checks runs in parallel as well, and
  ``.source()`` says so (`INFERRED`, and `FUSED` for a fused one); one that does not pass
  stays serial without a note.
* **Refused loops run serially, and say why** in a comment in ``.source()`` (early exit, a value
  carried from one iteration to the next, a write into a shared array not indexed by the loop
  index, a ``prange`` inside another loop, ...).

Only this module's rewrite produces parallel loops: ``Repeat.parallel`` (a loop over the chunks,
emitted as ``for c in _prange(N)``) and the ``chunk_at`` / ``parts_*`` / ``reuse`` equations,
which `backend.numba.emit_parallel` writes. Numba's own parallel transforms of array expressions are switched off
(`backend.numba.compile.NUMBA_OPTIONS`, passed as a fresh copy to every build: Numba empties the dict it is given):
they would reduce in an order that depends on the thread count.
"""

from __future__ import annotations

import re

from jitgrad.core import ops
from jitgrad.core.chunking import UNKNOWN_TRIPS
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
    Var,
    replace_vars,
    sub_blocks,
    walk,
)
from jitgrad.core.types import INT, Type
from jitgrad.transforms.passes import GradientWork, Pass

# How `.source()` tells a parallel ``range`` loop (its independence inferred) from a prange one.
INFERRED = " (a range loop: its iterations are independent apart from sums)"
# ... and a fused one (`recompute._fuse`), whose iterations run their adjoints too.
FUSED = " (fused: each iteration's adjoint runs right after it, in the forward pass)"



def _indexed(e: Eqn) -> bool:
    """``e`` reads or writes its first input at an index (getitem, setitem, add_at, ...)."""
    return ops.flags(e.prim).index_from is not None


class _Refused(Exception):
    """Why a loop runs serially."""


def drop_prange_marks(fn: Function) -> None:
    """Without ``parallel=True`` a ``prange`` loop is an ordinary ``range`` loop."""
    for s in walk(fn.body):
        if isinstance(s, For):
            s.parallel = False


def parallelise(grad, chunks: int | None = None) -> None:
    """Rewrite every top-level loop of ``grad`` that can run in parallel (forward, and its
    adjoint when it has one): those marked ``prange`` (the rest stay serial with a note saying
    why) and the ``range`` loops recomputed in reverse (`INFERRED`). ``chunks``: a fixed
    number of chunks per loop (tests run several on small inputs); None: `chunk_count`."""
    fwd, adj = grad.forward, grad.adjoint
    for s in list(fwd.body.stmts):
        for t in walk(Block([s])):
            if isinstance(t, For) and t.parallel and t is not s:
                _note(t, grad, "a prange loop inside another loop")
    namer = grad.fn.namer
    for loop in [s for s in fwd.body.stmts if isinstance(s, For)]:
        rep = grad.repeats.get(loop)
        if rep is not None and not any(r is rep for r in adj.body.stmts):
            rep = None  # (not at the adjoint's top level: leave it serial)
        fused = loop.plan is LoopPlan.FUSED
        if not loop.parallel and not fused and not (
                rep is not None and rep.plan is LoopPlan.RECOMPUTED):
            continue  # a range loop that recompute.py did not find independent
        try:
            adjoint_part = _fused_plan(loop, fwd, adj) if fused else None
            plan = _forward_plan(loop, fwd, adj, rep, adjoint_part)
            if fused and any(c not in plan["work"] for c in adjoint_part["scratch_of"]):
                raise _Refused("its adjoint writes the adjoint of an array shared by all "
                               "iterations")
            adj_plan = _adjoint_plan(loop, rep, adj, plan["work"]) \
                if rep is not None and _has(adj, rep) else None
        except _Refused as why:
            if loop.parallel:  # (a range loop stays serial without a word)
                _note(loop, grad, str(why))
            continue
        origin = ("" if loop.parallel else INFERRED) + (FUSED if fused else "")
        _rewrite_forward(loop, fwd, plan, namer, origin, adjoint_part, chunks)
        if adj_plan is not None:
            _rewrite_adjoint(loop, rep, adj, adj_plan, namer, origin, chunks)


def _has(kernel, stmt) -> bool:
    return any(s is stmt for s in kernel.body.stmts)


def _note(loop: For, grad, why: str) -> None:
    text = f"jitgrad: runs serially under parallel=True: {why}"
    loop.note = f"{loop.note}; {text}" if loop.note else text
    rep = grad.repeats.get(loop)
    if rep is not None:
        rep.note = f"{rep.note}; {text}" if rep.note else text


# ----------------------------------------------------------------------------- names


def _bound(stmt) -> list[Var]:
    """The variables a statement binds by name in the generated code (an in-place write into an
    array binds nothing; a counter is rebound by what steps it: a push, a pop, a tick)."""
    if isinstance(stmt, Eqn):
        if stmt.prim == "setitem":
            return []
        if stmt.prim == "assign" and isinstance(stmt.ins[0], Var) and \
                stmt.ins[0].name == stmt.outs[0].name:
            return []
        out = list(stmt.outs)
        counter = ops.flags(stmt.prim).steps_counter
        if counter is not None:
            out.append(stmt.ins[counter])
        return out
    if isinstance(stmt, If):
        return [m.var for m in stmt.merges]
    if isinstance(stmt, Repeat):
        return [stmt.counter] if stmt.counter is not None else []
    out = [c.var for c in stmt.carries] + [stmt.trips]
    if isinstance(stmt, For):
        out.append(stmt.index)
    return out


def _names_outside(kernel, inner) -> set[str]:
    """Names the kernel binds outside the statement ``inner`` (its parameters included)."""
    names = {p.name for p in kernel.params}

    def block(b: Block):
        for s in b.stmts:
            if s is inner:
                continue
            names.update(v.name for v in _bound(s))
            for sb in sub_blocks(s):
                block(sb)
    block(kernel.body)
    return names


def _private(v: Var, namer, suffix="_c") -> Var:
    return Var(namer.fresh(v.name + suffix), v.type, dims=v.dims)


# ----------------------------------------------------------------------------- forward


def _forward_plan(loop: For, fwd, adj, rep, adjoint_part: dict | None = None) -> dict:
    """What the forward rewrite privatises, or `_Refused`. ``adjoint_part``: a fused loop's
    `_fused_plan` (the names its iterations' adjoints accumulate into are privatised there)."""
    from jitgrad.transforms.recompute import (
        is_reduction,  # the reductions recomputing relies on too
    )

    if loop.exit_flag is not None:
        raise _Refused("it can exit early")
    if adjoint_part is None and any(isinstance(s, Eqn) and ops.flags(s.prim).tape
                                    for s in walk(loop.body)):
        why = loop.plan_reason
        raise _Refused("its adjoint needs a tape across iterations"
                       + (f" ({why})" if why else ""))
    reductions, arrays, work = [], [], []
    for c in loop.carries:
        if c.update is c.var:
            continue
        if c.var.type.ndim:
            try:
                _check_disjoint(loop, c)
                arrays.append(c)
            except _Refused:
                if not _work_array(loop, c, fwd, adj, rep):
                    raise
                work.append(c)
            continue
        uses = [s for s in walk(loop.body) if any(a is c.var for a in _reads(s))]
        if c.var.type.kind not in "fi" or not uses or not is_reduction(loop, c):
            raise _Refused(f"`{c.var.name}` is carried from one iteration to the next "
                           "(only `x += ...` reductions may cross iterations)")
        reductions.append(c)
    outer = _names_outside(fwd, loop)
    maxes = [s.outs[0] for s in loop.body.stmts if isinstance(s, Eqn) and s.prim == "count_max"]
    private = {c.var for c in reductions} | {v for v in maxes}
    fused_names = set() if adjoint_part is None else adjoint_part["names"]
    for s in walk(loop.body):
        for v in _bound(s):
            if v.name in outer and v not in private and v.name not in fused_names and not any(
                    v is c.var for c in arrays + work):
                raise _Refused(f"`{v.name}` is shared by all iterations")
    return {"reductions": reductions, "arrays": arrays, "maxes": maxes, "work": work}


def _work_array(loop: For, c: Carry, fwd, adj, rep) -> bool:
    """``c`` is a float work array allocated before the loop (``beta = np.zeros(K)``) that
    every iteration fills before it reads it (`recompute.reads_start`), and whose contents
    nothing reads after the loop: each chunk can fill an array of its own."""
    from jitgrad.transforms.recompute import reads_start

    init = c.init
    if not (isinstance(init, Var) and c.var.type.kind == "f" and init.name != c.var.name) \
            or reads_start(loop.body, {c.var}):
        return False
    names = {c.var.name, init.name, c.var.root.name}
    at = next(k for k, s in enumerate(fwd.body.stmts) if s is loop)
    later = [t for s in fwd.body.stmts[at + 1:] for t in walk(Block([s]))]
    # (the adjoint sees what the forward pass saved; the loop's replay fills its own)
    later += [t for s in adj.body.stmts if s is not rep for t in walk(Block([s]))]
    for t in later:
        for k, a in enumerate(_reads(t)):
            if isinstance(a, Var) and a.name in names and not (
                    isinstance(t, Eqn) and k in ops.flags(t.prim).shape_only):
                return False
    return True


def _reads(s) -> list:
    from jitgrad.core.ir import direct_uses
    return direct_uses(s)


def _check_disjoint(loop: For, c: Carry) -> None:
    """Every access to the carried array ``c.var`` in the body is at ``[i, ...]`` (``i`` the
    loop's index), so iterations touch disjoint elements."""
    versions = {c.var}
    index = _index_names(loop, loop.body)
    for s in walk(loop.body):
        if isinstance(s, Eqn) and s.prim == "setitem" and s.ins[0] in versions:
            versions.add(s.outs[0])
        for m in getattr(s, "carries", []) + getattr(s, "merges", []):
            if any(isinstance(a, Var) and a in versions for a in (m.init, m.update)):
                versions.add(m.var)
    for s in walk(loop.body):
        if isinstance(s, Eqn):
            for k, a in enumerate(s.ins):
                if not (isinstance(a, Var) and a in versions):
                    continue
                if k in ops.flags(s.prim).shape_only:
                    continue
                if not (k == 0 and _indexed(s) and _by_index(s, index)):
                    name = (c.init.root if isinstance(c.init, Var) else c.var).name
                    raise _Refused(f"`{name}` is shared by all iterations and not only read or "
                                   f"written at [{loop.index.name}, ...]: allocate it in the "
                                   "loop")


def _by_index(e: Eqn, index: set[Var]) -> bool:
    """``e`` reads or writes ``a[i, ...]`` with ``i`` (a variable in ``index``) the loop's index."""
    spec = e.params.get("index_spec") or ()
    first = {"getitem": 1, "setitem": 2, "add_at": 2, "zero_at": 1}[e.prim]
    return bool(spec) and spec[0] == "i" and len(e.ins) > first and e.ins[first] in index


def _index_names(loop: For, *blocks: Block) -> set[Var]:
    """The loop's index and the variables that carry or copy it (an inner loop carries it)."""
    out = {loop.index}
    changed = True
    while changed:
        changed = False
        for b in blocks:
            for s in walk(b):
                pairs = [(c.var, c.init, c.update) for c in getattr(s, "carries", [])]
                if isinstance(s, Eqn) and s.prim == "assign" and isinstance(s.ins[0], Var):
                    pairs.append((s.outs[0], s.ins[0], s.ins[0]))
                for v, init, update in pairs:
                    if v not in out and init in out and (update is v or update in
                                                                 out):
                        out.add(v)
                        changed = True
    return out


def _outer_writes(body: Block, outer: set[str], index: set[Var]) -> tuple[list, list]:
    """The arrays named in ``outer`` (defined outside ``body``) that iterations of ``body``
    write into, in name order, less those written only at places indexed by the loop index
    ``index`` (or read for their shape: disjoint, so shared): the ones only added into
    (``iadd``, ``add_at``: accumulated per chunk), and the others as ``(name, array)``."""
    written = {s.ins[0].name for s in walk(body) if isinstance(s, Eqn)
               and ops.flags(s.prim).writes_into_first and isinstance(s.ins[0], Var)
               and s.ins[0].name in outer}
    accumulate, others = [], []
    for name in sorted(written):
        uses = [(s, k) for s in walk(body) if isinstance(s, Eqn)
                for k, a in enumerate(s.ins) if isinstance(a, Var) and a.name == name]
        array = next(s.ins[0] for s, _ in uses)
        if all(k == 0 and _indexed(s) and _by_index(s, index)
               or k in ops.flags(s.prim).shape_only for s, k in uses):
            continue
        if all(k == 0 and ops.flags(s.prim).adds_into for s, k in uses):
            accumulate.append(array)
        else:
            others.append((name, array))
    return accumulate, others


def _fused_plan(loop: For, fwd, adj) -> dict:
    """A fused loop (`recompute._fuse`: each iteration runs its adjoint, for a seed of one, in
    the forward pass) also adds into gradient arrays and sums made before it, by name: what
    each chunk does with them, or `_Refused`. Arrays the adjoints add into (``_g_w[j] +=``)
    and scalar sums are accumulated per chunk like the adjoint's (`_adjoint_plan`); arrays
    written only at ``[i, ...]`` are shared; the seed (read, zeroed, added back by every
    iteration) starts each chunk at its value. The stacks of one iteration are the chunk's."""
    outer = _names_outside(fwd, loop)
    index = _index_names(loop, loop.body)
    carried = {c.var.name for c in loop.carries}
    accumulate, others = _outer_writes(loop.body, outer - carried, index)
    scratch = []
    for name, array in others:
        work = _work_adjoint(name, [c for c in loop.carries if c.var.type.ndim], fwd, loop,
                             also=[adj])
        if work is not None:  # (`parallelise` checks that the work array is one)
            scratch.append((array, work))
            continue
        raise _Refused(f"its adjoint reads and writes `{name}` at places other iterations "
                       "write")
    tapes = {s.ins[0] for s in walk(loop.body) if isinstance(s, Eqn) and s.prim == "push"}
    stacks = [s for s in fwd.body.stmts if isinstance(s, Eqn) and s.prim == "stack_alloc"
              and s.outs[0] in tapes]
    popped_after = {s.ins[0] for b in (fwd.body, adj.body) for s in walk(b)
                    if isinstance(s, Eqn) and s.prim == "pop"
                    and not any(s is t for t in walk(loop.body))}
    if len(stacks) != len(tapes) or tapes & popped_after:
        raise _Refused("its stacks are used outside the loop")
    counters = {s.outs[1].name for s in stacks}
    scalars, passthrough, seen = [], [], set()
    for s in walk(loop.body):
        for v in _bound(s):
            if v.name not in outer or v.name in seen or v.name in carried \
                    or v.name in counters:
                continue
            seen.add(v.name)
            if v.type.ndim:
                raise _Refused(f"its adjoint rebinds the array `{v.name}`")
            if _accumulates(loop.body, v):
                scalars.append(v)
            elif _carried_adjoint(loop.body, v):
                passthrough.append(v)
            else:
                raise _Refused(f"its adjoint carries `{v.name}` from one iteration to the next")
    names = {v.name for v in accumulate + scalars + passthrough} | counters \
        | {v.name for v, _ in scratch}
    return {"accumulate": accumulate, "scalars": scalars, "passthrough": passthrough,
            "scratch": [v for v, _ in scratch], "scratch_of": [c for _, c in scratch],
            "stacks": stacks, "names": names}


def _rewrite_forward(loop: For, fwd, plan: dict, namer, origin: str = "",
                     adjoint_part: dict | None = None, fixed: int | None = None) -> None:
    at = next(k for k, s in enumerate(fwd.body.stmts) if s is loop)
    chunk = Var(namer.fresh("_chunk"), INT)
    chunks = Var(namer.fresh("_chunks"), INT)
    trips = Var(namer.fresh("_trips_all"), INT)
    outer = _names_outside(fwd, loop)
    before = [Eqn("trip_count", [trips], [loop.start, loop.stop, loop.step], {}, loop.loc)]
    for c in plan["arrays"]:
        before.append(Eqn("assign", [c.var], [c.init], {}, loop.loc))
    work = [Eqn("zeros_like", [c.var], [c.init], {}, loop.loc) for c in plan["work"]]
    inner_pre, inner_post, after, mapping, carries = [], [], [], {}, []
    for v, kind, combine in ([(c.var, c.var.type.kind, "parts_add") for c in plan["reductions"]]
                             + [(m, "i", "parts_max") for m in plan["maxes"]]):
        mine = mapping[v] = _private(v, namer)
        parts = Var(namer.fresh("_parts_" + v.name.lstrip("_")), Type(kind, 1))
        before.append(Eqn("parts_alloc", [parts], [chunks], {"kind": kind}, loop.loc))
        inner_post.append(Eqn("parts_set", [], [parts, chunk, mine], {}, loop.loc))
        after.append(Eqn(combine, [], [v, parts, chunks], {"name": chunk.name}, loop.loc))
        if combine == "parts_max":
            inner_pre.append(Eqn("count_reset", [mine], [], {}, loop.loc))
    for c in plan["reductions"]:
        zero = Const(0.0 if c.var.type.kind == "f" else 0)
        carries.append(Carry(mapping[c.var], zero, c.update))
        after.insert(0, Eqn("assign", [c.var], [c.init], {}, loop.loc))
    replace_vars(loop.body, mapping)
    for c in carries:
        c.update = mapping.get(c.update, c.update)
    sized = []  # what each chunk accumulates: arrays, and a count of scalars
    scalars = len(plan["reductions"]) + len(plan["maxes"])
    if adjoint_part is not None:
        sized = list(adjoint_part["accumulate"])
        scalars += len(adjoint_part["scalars"])
        more = _privatise_sums(loop.body, adjoint_part, chunk, chunks, namer, loop.loc)
        for a in adjoint_part["stacks"]:
            fwd.body.stmts.remove(a)
        at = next(k for k, s in enumerate(fwd.body.stmts) if s is loop)
        before += more["before"]
        inner_pre += adjoint_part["stacks"] + more["pre"]
        inner_post += more["post"]
        after += more["after"]
    inner_pre += work + _hoist_allocations(loop.body, namer)
    lo = Var(namer.fresh("_lo"), INT)
    hi = Var(namer.fresh("_hi"), INT)
    bounds = [chunk, trips, loop.start, loop.step, chunks]
    before[1:1] = _chunk_count(chunks, trips, loop.body, outer, sized, scalars, fixed, namer,
                               loop.loc)
    inner = For(loop.index, lo, hi, loop.step, loop.body, carries,
                Var(namer.fresh("_trips"), INT), None, loop.loc)
    body = Block([Eqn("chunk_at", [lo], bounds, {"next": False, "offset": 0}, loop.loc),
                  Eqn("chunk_at", [hi], bounds, {"next": True, "offset": 0}, loop.loc)]
                 + inner_pre + [inner] + inner_post)
    par = Repeat(chunks, body, chunk, note=(
        f"jitgrad: parallel{origin}: chunks of iterations (as many as pay for themselves: "
        "`_rt.chunk_count`) run with numba.prange, each to the next free thread; sums are added "
        "up per chunk, then in chunk order"), parallel=True)
    after.append(Eqn("assign", [loop.trips], [trips], {}, loop.loc))
    for c in plan["work"]:  # (only its shape is read after the loop)
        after.append(Eqn("assign", [c.var], [c.init], {}, loop.loc))
    fwd.body.stmts[at:at + 1] = before + [par] + after


# ----------------------------------------------------------------------------- adjoint


def _adjoint_plan(loop: For, rep: Repeat, adj, work: list[Carry]) -> dict:
    """What the adjoint rewrite privatises, or `_Refused`. ``work``: the loop's work arrays,
    which the replay fills in arrays the chunk allocates (moved there, like the stacks)."""
    if rep.plan is not LoopPlan.RECOMPUTED:
        raise _Refused("its adjoint reads a tape across iterations")
    tapes = {s.ins[0] for s in walk(rep.body) if isinstance(s, Eqn) and s.prim == "pop"}
    allocs = [s for s in adj.body.stmts if isinstance(s, Eqn) and s.prim == "stack_alloc"
              and s.outs[0] in tapes]
    if len(allocs) != len(tapes):
        raise _Refused("its adjoint reads a stack the forward pass filled")
    works = [s for s in adj.body.stmts if isinstance(s, Eqn) and s.prim == "zeros_like"
             and any(s.outs[0] is c.var for c in work)]
    if len(works) != len(work):
        raise _Refused("its adjoint reads a work array the forward pass filled")
    allocs += works
    outer = _names_outside(adj, rep) - {v.name for a in allocs for v in a.outs}
    # arrays from outside the loop that the adjoint writes into
    index = _index_names(loop, loop.body, rep.body)
    accumulate, others = _outer_writes(rep.body, outer, index)
    scalars, passthrough, scratch = [], [], []
    for name, array in others:
        if _work_adjoint(name, work, adj, rep) is not None:
            scratch.append(array)
            continue
        raise _Refused(f"its adjoint reads and writes `{name}` at places other iterations "
                       "write")
    acc_names = {v.name for v in accumulate + scratch}
    seen = set()
    for s in walk(rep.body):
        for v in _bound(s):
            if v.name not in outer or v.name in seen:
                continue
            seen.add(v.name)
            if v.name in acc_names or v.type.ndim:
                raise _Refused(f"its adjoint rebinds the array `{v.name}`")
            (scalars if _accumulates(rep.body, v) else passthrough).append(v)
    for v in passthrough:
        if not _carried_adjoint(rep.body, v):
            raise _Refused(f"its adjoint carries `{v.name}` from one iteration to the next")
    return {"allocs": allocs, "accumulate": accumulate, "scalars": scalars,
            "passthrough": passthrough, "scratch": scratch}


def _work_adjoint(name: str, work: list[Carry], kernel, stmt, also=()) -> Carry | None:
    """The work array (one of ``work``) whose adjoint ``name`` is (``_b_z`` of ``z``), when that
    adjoint is allocated as zeros in ``kernel`` just before the loop ``stmt`` and read by
    nothing after it (nor anywhere in the kernels ``also``): each chunk can have its own.
    Every reverse iteration leaves it all zero (the adjoint of the fill that starts each
    iteration reads and zeroes every element), so nothing crosses iterations through it."""
    carry = next((c for c in work for n in (c.var.name, c.init.name, c.var.root.name)
                  if re.fullmatch(rf"_b_{re.escape(n.lstrip('_'))}(_\d+)?", name)), None)
    if carry is None:
        return None
    at = next(k for k, s in enumerate(kernel.body.stmts) if s is stmt)
    binds = [k for k, s in enumerate(kernel.body.stmts[:at])
             if any(v.name == name for t in walk(Block([s])) for v in _bound(t))]
    if len(binds) != 1 or not (isinstance(kernel.body.stmts[binds[0]], Eqn)
                               and ops.flags(kernel.body.stmts[binds[0]].prim).zero_filled):
        return None
    later = kernel.body.stmts[binds[0] + 1:at] + kernel.body.stmts[at + 1:]
    for s in later + [s for k in also for s in k.body.stmts]:
        for t in walk(Block([s])):
            for k, a in enumerate(_reads(t)):
                if isinstance(a, Var) and a.name == name and not (
                        isinstance(t, Eqn) and k in ops.flags(t.prim).shape_only):
                    return None
    return carry


def _accumulates(block: Block, v: Var) -> bool:
    """Every binding of ``v``'s name in ``block`` is ``v = v + x`` (``x`` not ``v``), and ``v``
    is read nowhere else: a sum the iterations add to."""
    for s in walk(block):
        reads = [a for a in _reads(s) if isinstance(a, Var) and a.name == v.name]
        binds = [o for o in _bound(s) if o.name == v.name]
        if not reads and not binds:
            continue
        if not (isinstance(s, Eqn) and s.prim == "add" and binds and len(reads) == 1):
            return False
    return True


def _carried_adjoint(block: Block, v: Var) -> bool:
    """A reduction's carried adjoint: each iteration starts by reading it and setting it to
    zero (the reverse transform's loop prologue), and adds back what it read."""
    first = [s for s in block.stmts if isinstance(s, Eqn) and (
        any(isinstance(a, Var) and a.name == v.name for a in s.ins)
        or any(o.name == v.name for o in s.outs))][:2]
    return (len(first) == 2 and first[0].prim == "assign" and first[0].ins[0] is not None
            and first[1].prim == "assign" and isinstance(first[1].ins[0], Const)
            and first[1].ins[0].value == 0)


def _rewrite_adjoint(loop: For, rep: Repeat, adj, plan: dict, namer,
                     origin: str = "", fixed: int | None = None) -> None:
    body = adj.body.stmts
    for a in plan["allocs"]:
        body.remove(a)
    at = next(k for k, s in enumerate(body) if s is rep)
    chunk = Var(namer.fresh("_chunk"), INT)
    chunks = Var(namer.fresh("_chunks"), INT)
    counter = rep.counter if rep.counter is not None else Var(namer.fresh("_k"), INT)
    trips = rep.trips
    stacks = list(plan["allocs"])
    outer = _names_outside(adj, rep)
    more = _privatise_sums(rep.body, plan, chunk, chunks, namer, loop.loc)
    before, pre, post, after = more["before"], stacks + more["pre"], more["post"], more["after"]
    pre += _hoist_allocations(rep.body, namer)
    lo = Var(namer.fresh("_lo"), INT)
    hi = Var(namer.fresh("_hi"), INT)
    bounds = [chunk, trips, Const(0), Const(1), chunks]
    count = _chunk_count(chunks, trips, rep.body, outer, list(plan["accumulate"]),
                         len(plan["scalars"]), fixed, namer, loop.loc)
    inner = For(counter, hi, lo, Const(-1), rep.body, [], Var(namer.fresh("_trips"), INT),
                None, loop.loc)
    chunk_body = Block(
        [Eqn("chunk_at", [lo], bounds, {"next": False, "offset": -1}, loop.loc),
         Eqn("chunk_at", [hi], bounds, {"next": True, "offset": -1}, loop.loc)]
        + pre + [inner] + post)
    par = Repeat(chunks, chunk_body, chunk, note=(
        f"jitgrad: parallel{origin}: chunks (as many as pay for themselves: `_rt.chunk_count`), "
        "each in reverse, with numba.prange; each adds into its own partial gradients, added up "
        "in chunk order after the loop"), parallel=True)
    body[at:at + 1] = count + before + [par] + after


def _privatise_sums(body: Block, plan: dict, chunk: Var, chunks: Var, namer, loc) -> dict:
    """Give each chunk its own copy of what the iterations of ``body`` add into by name:
    arrays (``plan["accumulate"]``) and scalars (``"scalars"``) start at zero and are stored
    in the chunk's slot of a partials array, added to the total after the loop in chunk
    order; a carried adjoint (``"passthrough"``) starts from its value; a work array's adjoint
    (``"scratch"``) at zero. Renames ``body``; returns the statements to put before the loop,
    at a chunk's start and end, and after the loop."""
    before, pre, post, after, mapping = [], [], [], [], {}
    for v in plan["accumulate"]:  # the chunk's own array, stored into ``parts`` at its end
        parts = Var(namer.fresh("_parts" + v.name), Type("f", v.type.ndim + 1))
        mine = mapping[v] = _private(v, namer)
        before.append(Eqn("parts_alloc", [parts], [chunks, v], {"kind": "f"}, loc))
        pre.append(Eqn("zeros_like", [mine], [v], {}, loc))
        post.append(Eqn("parts_set", [], [parts, chunk, mine], {}, loc))
        after.append(Eqn("parts_add", [], [v, parts, chunks], {"name": chunk.name}, loc))
    for v in plan["scalars"]:
        parts = Var(namer.fresh("_parts" + v.name), Type("f", 1))
        mine = mapping[v] = _private(v, namer)
        before.append(Eqn("parts_alloc", [parts], [chunks], {"kind": "f"}, loc))
        pre.append(Eqn("assign", [mine], [Const(0.0)], {}, loc))
        post.append(Eqn("parts_set", [], [parts, chunk, mine], {}, loc))
        after.append(Eqn("parts_add", [], [v, parts, chunks], {"name": chunk.name}, loc))
    for v in plan["passthrough"]:  # unchanged by the loop: each chunk starts from it
        mine = mapping[v] = _private(v, namer)
        pre.append(Eqn("assign", [mine], [v], {}, loc))
    for v in plan.get("scratch", []):  # a work array's adjoint: zero at each iteration's start
        mine = mapping[v] = _private(v, namer)
        pre.append(Eqn("zeros_like", [mine], [v], {}, loc))
    _rename_by_name(body, {v.name: m for v, m in mapping.items()})
    return {"before": before, "pre": pre, "post": post, "after": after}


def _rename_by_name(block: Block, by_name: dict) -> None:
    """Every variable named like a key reads and binds its private stand-in instead (the
    adjoint's accumulators are one name for several variable objects)."""
    ids = {}
    for s in walk(block):
        atoms = list(_reads(s)) + list(_bound(s))
        if isinstance(s, Eqn):
            atoms += s.outs
        for a in atoms:
            if isinstance(a, Var) and a.name in by_name:
                ids[a] = by_name[a.name]
    replace_vars(block, ids)


# ----------------------------------------------------------------------------- work


def _chunk_count(chunks: Var, trips: Var, body: Block, outer: set[str], sized: list[Var],
                 scalars: int, fixed: int | None, namer, loc) -> list[Eqn]:
    """The equations that set ``chunks``, the number of chunks of a loop of ``trips``
    iterations of ``body``, each of which accumulates the arrays ``sized`` and ``scalars``
    numbers: ``fixed``, or `chunk_count` of the loop's estimated work (`_work`)."""
    if fixed is not None:
        return [Eqn("chunk_count", [chunks], [trips], {"fixed": fixed}, loc)]
    work = _work(body, outer, namer, loc)
    return work["eqns"] + [Eqn("chunk_count", [chunks], [trips, work["atom"]] + sized,
                               {"scalars": scalars}, loc)]


def _repeatable(prim: str) -> bool:
    """The integer operations `_work` repeats before a parallel loop to learn an inner loop's
    trip count: counting that cannot fail and has no effects (a read or a division could
    fail, where the iteration guards it)."""
    return ops.flags(prim).counting and not ops.flags(prim).effects


def _work(body: Block, outer: set[str], namer, loc) -> dict:
    """An estimate of the equations one iteration of ``body`` runs, for `chunk_count` (in the
    unit `core.chunking` defines and prices): each equation once, an inner loop's body times
    its trip count, both branches of an ``if``. A trip count is computed before the parallel
    loop when it can be: from constants and names bound outside the loop, through integer
    operations the iteration does on them (an adjoint loop's ``_trips = _rt.nonnegative(d)``);
    else it counts `UNKNOWN_TRIPS` (a triangle's ``range(c + 1, d)``). Returns ``{"eqns":
    what computes it, "atom": it}``."""
    binds: dict[str, list] = {}
    for s in walk(body):
        for v in _bound(s):
            binds.setdefault(v.name, []).append(s)
    eqns: list[Eqn] = []
    early: dict[str, object] = {}  # name in the iteration -> the same value before the loop

    def before_loop(a):
        """``a`` computed before the loop, or None when the iteration decides it."""
        if isinstance(a, Const) or (a.name in outer and a.name not in binds):
            return a
        if a.name in early:
            return early[a.name]
        # bound once by an integer operation (and maybe by a loop as its trip count: the
        # adjoint counts a loop's trips again)
        found = [e for e in binds.get(a.name, []) if not (isinstance(e, For) and e.trips is a)]
        e = found[0] if len(found) == 1 else None
        early[a.name] = None  # (a cycle resolves to unknown)
        if not (isinstance(e, Eqn) and _repeatable(e.prim) and len(e.outs) == 1
                and e.outs[0].type.kind == "i"):
            return None
        ins = [before_loop(x) for x in e.ins]
        if any(x is None for x in ins):
            return None
        out = Var(namer.fresh("_trips_est"), INT)
        eqns.append(Eqn(e.prim, [out], ins, dict(e.params), loc))
        early[a.name] = out
        return out

    def op(prim: str, a, b):
        out = Var(namer.fresh("_work"), INT)
        eqns.append(Eqn(prim, [out], [a, b], {}, loc))
        return out

    def trips_of(s):
        if isinstance(s, For):
            bounds = [before_loop(x) for x in (s.start, s.stop, s.step)]
            if any(x is None for x in bounds):
                return None
            out = Var(namer.fresh("_trips_est"), INT)
            eqns.append(Eqn("trip_count", [out], bounds, {}, loc))
            return out
        return before_loop(s.trips) if isinstance(s, Repeat) else None

    def block(b: Block):
        """(a constant, the terms known only when the loop starts) of one run of ``b``."""
        count, terms = 0, []
        for s in b.stmts:
            count += 1
            inner = [block(sb) for sb in sub_blocks(s)]
            inner_count = sum(c for c, _ in inner)
            inner_terms = [t for _, ts in inner for t in ts]
            if isinstance(s, (Eqn, If)):
                count, terms = count + inner_count, terms + inner_terms
                continue
            trips = trips_of(s)
            if trips is None:  # a loop whose trip count the iteration decides
                count += UNKNOWN_TRIPS * inner_count
                terms += [op("mul", Const(UNKNOWN_TRIPS), t) for t in inner_terms]
                continue
            per_trip = Const(inner_count)
            for t in inner_terms:
                per_trip = op("add", per_trip, t)
            terms.append(op("mul", trips, per_trip))
        return count, terms

    count, terms = block(body)
    atom = Const(count)
    for t in terms:
        atom = op("add", atom, t)
    return {"eqns": eqns, "atom": atom}


# ----------------------------------------------------------------------------- per chunk

# Allocations a chunk makes once instead of once per iteration (`zero_filled` or
# `uninitialised` arrays), and what refills them (nothing, for an uninitialised one).
_FILL = {"f": "0.0", "i": "0", "b": "False"}


def _hoist_allocations(body: Block, namer) -> list[Eqn]:
    """Work arrays that every iteration allocates afresh, at the top of its body and at a size
    fixed before the loop (``xc = np.zeros(d)``, an adjoint's ``_b_xc = np.zeros_like(xc)``),
    are allocated once per chunk instead: each iteration refills the chunk's array (`reuse`).
    Rewrites ``body``; returns the chunk's allocations. Sound because an iteration's arrays do
    not outlive it: nothing carries them to the next iteration (`parallelise` refuses that) and
    the stacks they may be pushed on are emptied within the iteration."""
    bound: dict[str, int] = {}
    for s in walk(body):
        for v in _bound(s):
            bound[v.name] = bound.get(v.name, 0) + 1
    chunk_array: dict[str, Var] = {}  # name in the body -> the chunk's array
    allocs = []
    for k, s in enumerate(body.stmts):
        flags = ops.flags(s.prim) if isinstance(s, Eqn) else ops.NONE
        if not ((flags.zero_filled or flags.uninitialised) and s.outs[0].type.ndim
                and bound.get(s.outs[0].name) == 1):
            continue
        ins = [chunk_array.get(a.name) if isinstance(a, Var) and a.name in bound else a
               for a in s.ins]
        if any(a is None for a in ins):
            continue  # its size is computed in the iteration
        v = s.outs[0]
        mine = Var(namer.fresh("_chunk_" + v.name.lstrip("_")), v.type, dims=v.dims)
        allocs.append(Eqn(s.prim, [mine], ins, dict(s.params), s.loc))
        fill = None if flags.uninitialised else _FILL[v.type.kind]
        body.stmts[k] = Eqn("reuse", [v], [mine], {"fill": fill}, s.loc)
        chunk_array[v.name] = mine
    return allocs


def _serial(work: GradientWork) -> None:
    drop_prange_marks(work.function)


def _parallel(work: GradientWork) -> None:
    parallelise(work.gradient, work.settings.chunks)


SERIAL = Pass("serial", _serial, reads=("function",), writes=(), when="not parallel")
PARALLELISE = Pass("parallelise", _parallel, reads=("gradient",), writes=(), needs=("optimise",),
                   when="parallel")

__all__ = ["PARALLELISE", "SERIAL", "UNKNOWN_TRIPS", "drop_prange_marks", "parallelise"]
