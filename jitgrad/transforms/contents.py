"""Contents nothing reads: writes dropped, and arrays read only for their shape left unfilled.

Takes a kernel's body, the variables it must keep (its returns) and those of them the other
kernel reads only for their shape (`shape_only_saved`: a saved array whose every use in the
adjoint is a ``shape_only`` operand, such as the ``spread`` of ``np.sum``'s cotangent). Under
``jitgrad.grad`` the forward kernel often computes arrays only for what their shapes check or
tell the adjoint: NPBench's covariance fills ``cov`` in a loop of products, and the adjoint
reads its shape alone; doitgen's ``A[:] = reshape(reshape(A) @ C4)`` computes the product
whose shape the adjoint's reshapes read.

Contents liveness: a class of arrays that may share memory (`_Memory`: views, versions) has
live contents when a member is returned (and not only for its shape) or a parameter, or is an
operand, other than a ``shape_only`` one, of an equation whose own result's contents are live,
that has effects (a push onto the tape, a check), or whose result something reads and whose
sizes may depend on its operands' contents or which may fail on them (``x[mask]``, the
positions an index array names: `_sized_by_shapes` says which need shapes alone); a write (``setitem``) reads its value only
when the class it writes has live contents *after it*: the body is walked backwards, a loop or
branch as a whole until nothing changes. Then:

* a write into a class whose contents are not live afterwards is dropped (the version it
  defines is an alias of the array it wrote into) when it cannot fail
  at the shape (``fits``: the builder checks the value's sizes with equations of its own, which
  stay; or a whole write, `optimise._whole`'s test). An integer index out of range is not
  checked by the compiled code either;
* a pure array equation (not a view) whose result's contents are not live but which something
  still reads, for its shape, is replaced by ``empty`` of the same sizes, when the result's
  size tokens (`ir.dims_of`) name them: a literal, or an axis of an array defined before it.
  An elementwise equation with one array operand, or a product (``contracts``), qualifies;
  dead code then drops what it read (as `optimise.dead_code` drops any pure equation nothing
  reads, the check a product would have made of its operands' sizes goes with it).

Guarantees: every returned value, every effect but the dropped writes, and every shape read
are as before; no array whose contents anything reads is changed.
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.ir import (
    Block,
    Const,
    Eqn,
    If,
    Var,
    VarUnion,
    defs,
    dims_of,
    direct_uses,
    sub_blocks,
    walk,
)
from jitgrad.core.types import INT
from jitgrad.prims.primitives import PRIMITIVES


def shape_only_saved(body: Block, params: list) -> set:
    """The ``params`` of a kernel that ``body`` reads only as ``shape_only`` operands."""
    out = {p for p in params if isinstance(p, Var) and p.type.ndim}
    for s in walk(body):
        shape = ops.flags(s.prim).shape_only if isinstance(s, Eqn) else ()
        for k, a in enumerate(direct_uses(s)):
            if a in out and k not in shape:
                out.discard(a)
    return out


def unread_contents(body: Block, keep: list, shape_kept: set, params: list, namer) -> bool:
    """The pass (module docstring) on one kernel's ``body``; say whether it changed it."""
    alias = _Memory(body)
    live = {alias.find(v) for v in list(keep) + list(params)
            if isinstance(v, Var) and v.type.ndim and v not in shape_kept}
    dropped: set[int] = set()
    used = {a for s in walk(body) for a in direct_uses(s) if isinstance(a, Var)} | set(keep)
    _backwards(body.stmts, live, alias, dropped, used)
    unfilled = _unfilled(body, live, alias, params, namer)
    if dropped:
        _drop(body, dropped)
    return bool(dropped or unfilled)


class _Memory(VarUnion):
    """Union-find over the arrays of a body that share memory: a view, a version written in
    place, an alias (``assign``) or a result that may be its input, with input 0; a loop's
    carried and a branch's merged values with theirs. (`MayShare` also joins a written value
    with the array it is written into, which would make the value's contents live.)"""

    def __init__(self, body: Block):
        super().__init__()
        for s in walk(body):
            if isinstance(s, Eqn):
                f = ops.flags(s.prim)
                if (f.shares_first_input or f.may_return_input) and s.outs and s.ins and (
                        isinstance(s.ins[0], Var)):
                    for o in s.outs:
                        if o.type.ndim:
                            self.union(o, s.ins[0])
            else:
                carries = s.merges if isinstance(s, If) else getattr(s, "carries", ())
                for c in carries:
                    for a in (c.init, c.update):
                        if isinstance(a, Var) and c.var.type.ndim:
                            self.union(c.var, a)


def _write(s) -> bool:
    f = ops.flags(s.prim)
    return isinstance(s, Eqn) and f.writes_into_first and not f.accumulates and isinstance(
        s.ins[0], Var)


def _sized_by_shapes(s: Eqn) -> bool:
    """Whether an equation's result has sizes its operands' shapes and numbers decide, and
    it cannot fail on their contents: then a result read only for its shape needs none of
    its operands' contents. (``x[mask]``'s length, and the checks of an index array's
    entries, read contents.)"""
    f = ops.flags(s.prim)
    prim = PRIMITIVES.get(s.prim)
    return (f.contracts or f.view or f.read_only_view or f.sizes_from is not None
            or f.same_shape_as is not None or (prim is not None and prim.elementwise))


def _mark(s, live: set, alias: _Memory, dropped: set, used: set) -> bool:
    """One statement's effect on ``live`` (walked backwards); say whether ``live`` grew.
    ``used``: every variable something reads."""
    before = len(live)
    if isinstance(s, Eqn):
        f = ops.flags(s.prim)
        if _write(s):
            if alias.find(s.ins[0]) in live:
                dropped.discard(id(s))
                reads = [a for k, a in enumerate(s.ins) if k and k not in f.shape_only]
            else:
                if s.params.get("fits") or _whole_write(s):
                    dropped.add(id(s))
                    return False
                reads = [a for k, a in enumerate(s.ins) if k not in f.shape_only]
        elif f.effects or any(o.type.ndim and alias.find(o) in live for o in s.outs) or any(
                not o.type.ndim for o in s.outs) or (any(o in used for o in s.outs)
                                                     and not _sized_by_shapes(s)):
            reads = [a for k, a in enumerate(s.ins) if k not in f.shape_only]
        else:
            return False
        for a in reads:
            if isinstance(a, Var) and a.type.ndim:
                live.add(alias.find(a))
        return len(live) > before
    return False  # a loop's or branch's own reads: numbers, and carried arrays (aliases)


def _whole_write(s) -> bool:
    spec = s.params.get("index_spec")
    x, v = s.ins[0], s.ins[1]
    return bool(spec) and all(i == ":" for i in spec) and len(spec) <= x.type.ndim and (
        isinstance(v, Const) or v.type.ndim == 0 or dims_of(v) == dims_of(x))


def _backwards(stmts: list, live: set, alias: _Memory, dropped: set, used: set) -> None:
    for s in reversed(stmts):
        if isinstance(s, Eqn):
            _mark(s, live, alias, dropped, used)
            continue
        inner = list(walk(Block([s])))
        grew = True
        while grew:  # a loop or branch as a whole, until nothing changes
            grew = False
            for t in reversed(inner):
                grew |= _mark(t, live, alias, dropped, used)


def _unfilled(body: Block, live: set, alias: _Memory, params: list, namer) -> bool:
    """Replace the equations whose results are read for their shape alone by ``empty``."""
    changed = False
    scope = {p for p in params if isinstance(p, Var)}
    sizes_of: dict = {}

    def visit(block: Block, scope: set) -> None:
        nonlocal changed
        scope = set(scope)
        out = []
        for s in block.stmts:
            if isinstance(s, Eqn) and _fillable(s) and alias.find(s.out) not in live:
                sizes, made = _sizes(s.out, scope, namer, s.loc)
                if sizes is not None:
                    out += made
                    s.prim, s.ins, s.params = "empty", sizes, {"kind": s.out.type.kind}
                    sizes_of[s.out] = sizes
                    changed = True
            for b in sub_blocks(s):
                visit(b, scope | set(defs(s)))
            out.append(s)
            scope.update(defs(s))
        block.stmts[:] = out

    visit(body, scope)
    for s in walk(body):  # a size read from such an array is the size it was made with
        if isinstance(s, Eqn) and s.prim == "shape_dim" and s.ins[0] in sizes_of and isinstance(
                s.params.get("axis"), int):
            s.prim, s.ins, s.params = "assign", [sizes_of[s.ins[0]][s.params["axis"]]], {}
    return changed


def _fillable(s: Eqn) -> bool:
    f = ops.flags(s.prim)
    if len(s.outs) != 1 or not s.out.type.ndim or f.effects or f.view or f.read_only_view or (
            f.view_if_contiguous or f.may_return_input or f.same_value):
        return False
    arrays = [a for a in s.ins if isinstance(a, Var) and a.type.ndim]
    prim = PRIMITIVES.get(s.prim)
    return f.contracts or (prim is not None and prim.elementwise and len(arrays) <= 1)


def _sizes(v: Var, scope: set, namer, loc):
    """Atoms for ``v``'s sizes from its size tokens (None: a size they do not name), and the
    ``shape_dim`` equations that read them."""
    atoms, made = [], []
    for tok in dims_of(v):
        if isinstance(tok, int) and not isinstance(tok, bool):
            atoms.append(Const(tok))
        elif (isinstance(tok, tuple) and len(tok) == 2 and isinstance(tok[0], Var)
              and isinstance(tok[1], int) and tok[0] is not v and tok[0] in scope):
            n = Var(namer.temp("_t"), INT)
            made.append(Eqn("shape_dim", [n], [tok[0]], {"axis": tok[1]}, loc))
            atoms.append(n)
        else:
            return None, []
    return atoms, made


def _drop(block: Block, drop: set) -> None:
    """The writes in ``drop`` go; the version one defines is the array it wrote into."""
    kept = []
    for s in block.stmts:
        if id(s) in drop:
            if not s.outs:
                continue
            s.prim, s.ins, s.params = "assign", [s.ins[0]], {}
        for b in sub_blocks(s):
            _drop(b, drop)
        kept.append(s)
    block.stmts[:] = kept


__all__ = ["shape_only_saved", "unread_contents"]
