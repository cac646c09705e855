"""Copies of arrays nothing writes: the forward kernel's ``y = copy(x)`` read as ``x`` itself.

Takes a `reverse.Gradient` after the other passes of `optimise` dropped what nothing reads;
guarantees every value the kernels compute and return stays the same, and that no array the
caller gets back shares memory with an argument.

A copy keeps a value from a later write: the loss's ``A = A.copy()`` before an in-place
kernel, the snapshot the saving pass takes of an array written after the adjoint's read. Once
the writes are gone (`contents.unread_contents` drops those whose contents nothing reads: under
``jitgrad.grad``, NPBench doitgen's ``A[:] = ...``), the copy is a pass over memory for
nothing, and the value is the array it copies. ``y = copy(x)`` at the forward kernel's top
level becomes ``y = x`` when, in the forward kernel, nothing writes into memory either of
them may share (`core.ir.MayShare`; a write before the copy counts too: conservative), none of
the arrays that may share it is returned to the caller (the function's value or aux), and
none handed to the adjoint (a saved value, or an argument) is written by the adjoint or may
share the memory of a gradient it returns.
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.ir import Eqn, If, MayShare, Var, defs, direct_uses, walk


def copies_of_unwritten(grad, value_needed: bool) -> bool:
    """Rewrite the forward kernel's copies of arrays nothing writes (see the module doc);
    True if any was."""
    fwd, adj = grad.forward, grad.adjoint
    n = len(grad.fn.params)
    to_caller = {a for a in (fwd.returns[:1] if value_needed else []) + list(fwd.aux)
                 if isinstance(a, Var)}
    adj_alias = MayShare(adj.body)
    handed = list(zip(fwd.params, adj.params[:n])) + list(zip(fwd.returns[1:], adj.params[n:]))
    given_back = _memory_returned(adj)
    written_by_adjoint = {f for f, a in handed if isinstance(f, Var) and f.type.ndim
                          and (adj_alias.written(a) or a in given_back)}
    changed = False
    for k, s in enumerate(fwd.body.stmts):
        if not (isinstance(s, Eqn) and s.prim == "copy" and len(s.outs) == 1 and len(s.ins) == 1
                and isinstance(s.ins[0], Var) and s.ins[0].type == s.outs[0].type
                and s.ins[0].type.ndim):
            continue
        alias = MayShare(fwd.body)  # (again after each rewrite: the copy's classes merge)
        x, y = s.ins[0], s.outs[0]
        if alias.written(x) or alias.written(y):
            continue
        roots = {alias.find(x), alias.find(y)}
        sharing = {a for t in walk(fwd.body) for a in direct_uses(t) + defs(t)
                   if isinstance(a, Var) and a.type.ndim and alias.find(a) in roots}
        sharing |= {p for p in fwd.params if p.type.ndim and alias.find(p) in roots}
        if sharing & to_caller or sharing & written_by_adjoint:
            continue
        fwd.body.stmts[k] = None if y is x else Eqn("assign", [y], [x], {}, s.loc)
        changed = True
    fwd.body.stmts[:] = [s for s in fwd.body.stmts if s is not None]
    return changed


def _memory_returned(adj) -> set[Var]:
    """The adjoint's arrays whose memory a gradient it returns is: the returns, and what each
    is a name (``assign``), a view (its first input's memory), a branch's merge or a loop's
    carry of, back to the parameters."""
    source = {}
    for t in walk(adj.body):
        if isinstance(t, Eqn) and len(t.outs) == 1 and t.ins and isinstance(t.ins[0], Var) and (
                t.prim == "assign" or ops.flags(t.prim).shares_first_input
                or ops.flags(t.prim).may_return_input):
            source.setdefault(t.outs[0], []).append(t.ins[0])
        elif not isinstance(t, Eqn):  # a branch's merged values, a loop's carried ones
            for c in (t.merges if isinstance(t, If) else getattr(t, "carries", ())):
                source.setdefault(c.var, []).extend(
                    a for a in (c.init, c.update) if isinstance(a, Var))
    out, todo = set(), [r for r in adj.returns if isinstance(r, Var) and r.type.ndim]
    while todo:
        v = todo.pop()
        if v not in out:
            out.add(v)
            todo.extend(source.get(v, []))
    return out
