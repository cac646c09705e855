"""Named passes over the transformed kernels, run in a declared order.

Takes a `reverse.Gradient`; guarantees each pass keeps the values the kernels return and every
side effect (in-place writes, tape pushes and pops), and only removes or simplifies the rest.

Passes:
* ``dead_code``: drops equations whose results nothing reads (shape reads the builder made
  eagerly, branches of a rule that turned out zero, forward values the adjoint never needs).
* ``fold_assigns``: writes a temporary's operation straight into the adjoint it is assigned to.
"""

from __future__ import annotations

from .ir import Block, Eqn, For, If, Repeat, Var, While

_EFFECTS = {"setitem", "add_at", "zero_at", "iadd", "push", "pop", "stack_alloc"}


def _uses(stmt) -> list:
    out = []
    if isinstance(stmt, Eqn):
        return list(stmt.ins)
    if isinstance(stmt, For):
        out += [stmt.start, stmt.stop, stmt.step]
        if stmt.exit_flag is not None:
            out.append(stmt.exit_flag)
    if isinstance(stmt, While):
        out.append(stmt.cond)
        if stmt.exit_flag is not None:
            out.append(stmt.exit_flag)
    if isinstance(stmt, If):
        out.append(stmt.cond)
    if isinstance(stmt, Repeat):
        out.append(stmt.trips)
    carries = stmt.merges if isinstance(stmt, If) else getattr(stmt, "carries", [])
    for c in carries:
        out += [c.init, c.update]
    return out


def _blocks(stmt) -> list[Block]:
    if isinstance(stmt, (For, Repeat)):
        return [stmt.body]
    if isinstance(stmt, While):
        return [stmt.cond_block, stmt.body]
    if isinstance(stmt, If):
        return [stmt.then, stmt.orelse]
    return []


def dead_code(block: Block, live_out: set[int]) -> None:
    """Remove pure equations whose outputs are not live, to a fixed point."""
    while True:
        live = set(live_out)
        # every use anywhere keeps its definition (conservative across loops and branches)
        def collect(b: Block):
            for s in b.stmts:
                for a in _uses(s):
                    if isinstance(a, Var):
                        live.add(id(a))
                for sb in _blocks(s):
                    collect(sb)
        collect(block)
        removed = False

        def prune(b: Block):
            nonlocal removed
            keep = []
            for s in b.stmts:
                if isinstance(s, Eqn) and s.prim not in _EFFECTS and s.outs and not any(
                        id(o) in live for o in s.outs):
                    removed = True
                    continue
                for sb in _blocks(s):
                    prune(sb)
                keep.append(s)
            b.stmts[:] = keep
        prune(block)
        if not removed:
            return


def fold_assigns(block: Block, returned: set[int]) -> None:
    """``_t1 = x * 2.0`` followed by ``_b_x = _t1`` becomes ``_b_x = x * 2.0`` when nothing
    else reads ``_t1``."""
    counts: dict[int, int] = {}

    def count(b: Block):
        for s in b.stmts:
            for a in _uses(s):
                if isinstance(a, Var):
                    counts[id(a)] = counts.get(id(a), 0) + 1
            for sb in _blocks(s):
                count(sb)
    count(block)

    def fold(b: Block):
        keep = []
        for s in b.stmts:
            for sb in _blocks(s):
                fold(sb)
            if (isinstance(s, Eqn) and s.prim == "assign" and keep and isinstance(keep[-1], Eqn)
                    and isinstance(s.ins[0], Var) and keep[-1].outs
                    and keep[-1].outs[0] is s.ins[0] and len(keep[-1].outs) == 1
                    and s.ins[0].name.startswith("_t") and counts.get(id(s.ins[0])) == 1
                    and id(s.ins[0]) not in returned and keep[-1].prim not in _EFFECTS
                    and s.outs[0] not in keep[-1].ins):
                prev = keep[-1]
                keep[-1] = Eqn(prev.prim, [s.outs[0]], prev.ins, prev.params, prev.loc)
                continue
            keep.append(s)
        b.stmts[:] = keep
    fold(block)


def optimise(grad) -> None:
    """Run the passes in order on both kernels."""
    for kernel in (grad.forward, grad.adjoint):
        live = {id(a) for a in kernel.returns if isinstance(a, Var)}
        dead_code(kernel.body, live)
        fold_assigns(kernel.body, live)
