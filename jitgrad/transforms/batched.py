"""Batched products: a loop adjoint's rank-1 updates and matrix-vector products against one
loop-invariant matrix, collected into buffers and done as matrix products after the loop.

Takes the adjoint body after the loop strategies (`recompute`, `checkpoint`, `ascending`), each
loop's adjoint a `Repeat` whose iteration ``t`` (its counter) has the loop index
``i = start + t`` (``loop_index``, ``start`` a literal ≥ 0, step 1). In such a body, a product
``a_i @ B_i`` of a column ``P[:, i]`` and a block of columns ``Q[:, J_i]`` of matrices the loop
does not write (NPBench's covariance: ``data[:, i] @ data[:, i:M]``) has the adjoint, for the
iteration's cotangent ``g_t``:

* a **rank-1 update** ``acc[:, J_i] += outer(P[:, i], g_t)`` (the block's adjoint), and
* a **matrix-vector product** ``acc[:, i] += Q[:, J_i] @ g_t`` (the column's adjoint),

each one pass over an ``n``-row block per iteration (BLAS-2, memory-bound). When nothing else in
the loop reads or zeroes ``acc`` (it is only added into), the additions may wait until the loop
has run: the pass writes ``g_t`` into a buffer instead, ``G[t, J_i] += g_t`` for the rank-1
updates of ``P`` and ``H[J_i, t] += g_t`` for the products against ``Q``, and after the loop

    acc += P[:, start:start + T] @ G            (column t of that block is P[:, i])
    acc[:, start:start + T] += Q @ H            (column t of Q @ H is Σ_j Q[:, j] H[j, t])

with ``T`` the iterations run: the same sums, added in another order (the result changes by
rounding only), in BLAS-3 products. When ``P`` and ``Q`` are one matrix (``k`` columns) and
both kinds are present, the two are one product where that costs less (at run time,
``T·(k + m) ≥ k·m``: covariance's ``for i in range(M)``, correlation's ``range(M - 1)``):
``D`` (``k × m``) gets ``G`` in rows ``start:start + T`` and ``H`` in those columns, and
``acc += P @ D`` (what ``data.T @ data``'s adjoint costs).

Guarantees: the gradient is the loop's own up to rounding. The pass changes nothing unless
``acc`` is, inside the loop, only added into (by ``add_at``/``iadd``, which commute with the
deferred sums; anything else that reads, zeroes or aliases it leaves the loop alone), ``P`` and
``Q`` are defined before the loop and nothing in it writes their memory, and the index ``i`` of
the column read and written is the loop's own index. ``J_i`` is ``:`` or a slice whose bounds
may depend on ``i`` (``i:M``, ``i + 1:M``): the buffer is indexed with the same slice, so
whatever columns it selects (and however NumPy would broadcast the update) the product adds
the same entries. Cost: the products cover ``T`` columns and all of the accumulator's width
``m``: ``n·T·m`` multiply-adds against the loop's ``n·Σ|J_i|``, less when the slices span much
of the axis (a triangle, as here) and never more than ``m / min |J_i|`` times as many.
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.ir import (
    Block,
    Const,
    Eqn,
    If,
    MayShare,
    Repeat,
    Var,
    defs,
    direct_uses,
    sub_blocks,
    walk,
)
from jitgrad.core.types import BOOL, INT, Type
from jitgrad.transforms.passes import GradientWork, Pass

MATRIX = Type("f", 2)
NOTE = "its products batched: matrix products after the loop"


def batch_products(body: Block, namer) -> None:
    """The pass on an adjoint body (module docstring): every `Repeat` in it, nested ones
    included, whose loop adds rank-1 updates or matrix-vector products into one accumulator."""
    alias = MayShare(body)
    _in_block(body, alias, namer)


def _in_block(block: Block, alias: MayShare, namer) -> None:
    k = 0
    while k < len(block.stmts):
        s = block.stmts[k]
        for b in sub_blocks(s):
            _in_block(b, alias, namer)
        before, after = _batched(s, alias, namer) if isinstance(s, Repeat) else ([], [])
        block.stmts[k:k + 1] = before + [s] + after
        k += 1 + len(before) + len(after)


def _origin(v, made: dict):
    """The equation that computes ``v``, through ``assign``s (None: not in the loop's body)."""
    e = made.get(v)
    while e is not None and e.prim == "assign" and e.ins[0] in made:
        e = made[e.ins[0]]
    return e


def _column_block(e, made: dict, outside):
    """``(Q, slice item, slice atoms)`` when ``e`` reads ``Q[:, J]`` (``J`` a slice or ``:``)
    of a matrix ``Q`` defined before the loop; else None."""
    if e is None or e.prim != "getitem" or not outside(e.ins[0]) or e.ins[0].type.ndim != 2:
        return None
    spec = e.params["index_spec"]
    if len(spec) != 2 or spec[0] != ":" or spec[1] == "i":
        return None
    return e.ins[0], spec[1], list(e.ins[1:])


def _deferred(e, made: dict, index: Var, outside):
    """What an ``add_at`` of the loop body adds, when it is a rank-1 update or a
    matrix-vector product of the module docstring: ``(kind, matrix, slice item, slice atoms,
    cotangent)``, kind "rank1" or "matvec"; else None."""
    spec = e.params["index_spec"]
    acc, value = e.ins[0], e.ins[1]
    if len(spec) != 2 or spec[0] != ":" or acc.type != MATRIX or not isinstance(value, Var):
        return None
    src = _origin(value, made)
    if src is None:
        return None
    if spec[1] != "i" and src.prim == "outer":  # acc[:, J] += outer(P[:, i], g)
        col = _origin(src.ins[0], made)
        if (col is None or col.prim != "getitem" or col.params["index_spec"] != (":", "i")
                or col.ins[1] is not index or not outside(col.ins[0])
                or col.ins[0].type != MATRIX):
            return None
        g = src.ins[1]
        return ("rank1", col.ins[0], spec[1], list(e.ins[2:]), g) if _vector(g) else None
    if spec[1] == "i" and e.ins[2] is index and src.prim == "matmul":  # acc[:, i] += Q[:, J] @ g
        a, b = src.ins
        t = _origin(b, made)
        if _vector(a) and t is not None and t.prim == "transpose" and t.params.get(
                "axes") in (None, (1, 0)):  # g @ Q[:, J].T
            g, block = a, _column_block(_origin(t.ins[0], made), made, outside)
        elif _vector(b):  # Q[:, J] @ g
            g, block = b, _column_block(_origin(a, made), made, outside)
        else:
            return None
        if block is None:
            return None
        return ("matvec", block[0], block[1], block[2], g)
    return None


def _vector(a) -> bool:
    return isinstance(a, Var) and a.type == Type("f", 1)


def _batched(rep: Repeat, alias: MayShare, namer) -> list:
    """Rewrite ``rep``'s qualifying additions into buffer writes; return the statements that
    go before it (the buffers) and right after it (the products); ([], []): nothing qualifies."""
    if rep.counter is None or rep.low is not None or rep.parallel:
        return [], []
    body = rep.body
    made = {o: s for s in body.stmts if isinstance(s, Eqn) for o in s.outs}
    inner = {v for s in walk(body) for v in defs(s)}
    index = next((s for s in body.stmts if isinstance(s, Eqn) and s.prim == "loop_index"
                  and s.ins[0] is rep.counter and isinstance(s.ins[1], Const)
                  and isinstance(s.ins[1].value, int) and s.ins[1].value >= 0
                  and s.ins[2] == Const(1)), None)
    if index is None:
        return [], []

    def outside(v):
        return isinstance(v, Var) and v not in inner

    found: dict = {}  # accumulator -> [(add_at, kind, matrix, item, atoms, g)]
    for s in body.stmts:
        if isinstance(s, Eqn) and s.prim == "add_at" and outside(s.ins[0]):
            d = _deferred(s, made, index.out, outside)
            if d is not None:
                found.setdefault(s.ins[0], []).append((s, *d))
    before, after = [], []
    for acc, adds in found.items():
        if not _left_alone(body, acc, adds, alias):
            made_before, made_after = _rewrite(rep, index, acc, adds, namer)
            before += made_before
            after += made_after
    if after:
        rep.note = (rep.note + "; " if rep.note else "") + NOTE
    return before, after


def _left_alone(body: Block, acc: Var, adds: list, alias: MayShare) -> bool:
    """Whether ``acc`` is used in the loop other than added into, or a matrix read is
    written in it (module docstring)."""
    matched = {id(a[0]) for a in adds}
    cls = alias.find(acc)
    mats = {alias.find(a[2]) for a in adds}
    if cls in mats or any(alias.find(a[5]) == cls for a in adds):  # (a cotangent or matrix
        return True                                                 # that is acc itself)
    for s in walk(body):
        if isinstance(s, Eqn) and id(s) in matched:
            continue
        if isinstance(s, Eqn) and ops.flags(s.prim).writes_into_first and isinstance(
                s.ins[0], Var) and alias.find(s.ins[0]) in mats:
            return True
        used = [a for a in direct_uses(s) + defs(s) if isinstance(a, Var) and a.type.ndim]
        hits = [a for a in used if alias.find(a) == cls]
        if not hits:
            continue
        only_added = (isinstance(s, Eqn) and ops.flags(s.prim).adds_into and s.ins[0] is acc
                      and hits == [acc])
        if not only_added:
            return True
    return False


def _rewrite(rep: Repeat, index: Eqn, acc: Var, adds: list, namer) -> list:
    loc = adds[0][0].loc
    out: list = []

    def eqn(prim, ins, params=None, kind=MATRIX, into=out):
        v = Var(namer.temp("_t"), kind) if kind is not None else None
        into.append(Eqn(prim, [v] if v is not None else [], list(ins), dict(params or {}), loc))
        return v

    trips, start = rep.trips, index.ins[1]
    before: list = []
    width = eqn("shape_dim", [acc], {"axis": 1}, INT, into=before)
    bufs: dict = {}  # (kind, matrix) -> buffer, zeroed before the loop
    for s, kind, mat, item, atoms, g in adds:
        key = (kind, mat)
        if key not in bufs:
            if kind == "rank1":  # G: one row per iteration, acc's columns
                bufs[key] = eqn("zeros", [trips, width], {"kind": "f"}, into=before)
            else:  # H: Q's columns, one column per iteration
                cols = eqn("shape_dim", [mat], {"axis": 1}, INT, into=before)
                bufs[key] = eqn("zeros", [cols, trips], {"kind": "f"}, into=before)
        buf = bufs[key]
        if kind == "rank1":
            s.ins, s.params = [buf, g, rep.counter, *atoms], {"index_spec": ("i", item)}
        else:
            s.ins, s.params = [buf, g, *atoms, rep.counter], {"index_spec": (item, "i")}
    stop = eqn("add", [start, trips], kind=INT)

    def rank1(into):
        for (kind, mat), buf in bufs.items():
            if kind == "rank1":
                cols = eqn("getitem", [mat, start, stop],
                           {"index_spec": (":", ("s", True, True, False))}, into=into)
                eqn("add_at", [acc, eqn("matmul", [cols, buf], into=into)],
                    {"index_spec": (":", ":")}, None, into=into)

    def matvec(into):
        for (kind, mat), buf in bufs.items():
            if kind == "matvec":
                eqn("add_at", [acc, eqn("matmul", [mat, buf], into=into), start, stop],
                    {"index_spec": (":", ("s", True, True, False))}, None, into=into)

    mats = {m for _, m in bufs}
    if len(bufs) == 2 and len(mats) == 1:  # one matrix, both kinds: one product if cheaper
        (mat,) = mats
        k = eqn("shape_dim", [mat], {"axis": 1}, INT)
        two = eqn("mul", [trips, eqn("add", [k, width], kind=INT)], kind=INT)
        cond = eqn("ge", [two, eqn("mul", [k, width], kind=INT)], kind=BOOL)
        then, orelse = Block([]), Block([])
        span = ("s", True, True, False)
        both = eqn("zeros", [k, width], {"kind": "f"}, into=then.stmts)
        eqn("add_at", [both, bufs[("rank1", mat)], start, stop], {"index_spec": (span, ":")},
            None, into=then.stmts)
        eqn("add_at", [both, bufs[("matvec", mat)], start, stop], {"index_spec": (":", span)},
            None, into=then.stmts)
        eqn("add_at", [acc, eqn("matmul", [mat, both], into=then.stmts)],
            {"index_spec": (":", ":")}, None, into=then.stmts)
        rank1(orelse.stmts)
        matvec(orelse.stmts)
        out.append(If(cond, then, orelse, [], loc))
    else:
        rank1(out)
        matvec(out)
    return before, out


def _run(work: GradientWork) -> None:
    batch_products(work.adjoint, work.function.namer)


BATCHED = Pass("batched products", _run, reads=("function", "adjoint"), writes=(),
               needs=("saving",))

__all__ = ["BATCHED", "batch_products"]
