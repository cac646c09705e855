"""The slopes of implicitly defined values, computed after building (`prims.implicit`).

The frontend builds a root ``x`` of ``f(x, theta) = 0`` (``scipy.optimize.brentq``) as the
loop that finds it, then ``xs = stop_gradient(x)``, then ``f``'s statements on ``xs`` (its
value ``fv``), then ``root_at(x, fv, xs)``, all in one block. This pass, run on every built
graph (`pipeline.build_graph`), differentiates those statements in ``xs`` alone by forward
mode (`forward.tangents`, seeded with 1) and writes the equation as
``implicit_root(x, fv, df/dx)``, whose rule is the implicit function theorem. The frontend
cannot do it itself: forward mode is a transform, a layer above it.
"""

from __future__ import annotations

from jitgrad.core.errors import UnsupportedError
from jitgrad.core.ir import Block, Const, Eqn, Function, Var, replace_vars, sub_blocks
from jitgrad.transforms.forward import tangents


def implicit_slopes(fn: Function) -> None:
    """Give every ``root_at`` equation in ``fn`` its slope, in place."""
    _in_block(fn.body, fn)


def _in_block(block: Block, fn: Function) -> None:
    k = 0
    while k < len(block.stmts):
        s = block.stmts[k]
        for b in sub_blocks(s):
            _in_block(b, fn)
        if isinstance(s, Eqn) and s.prim == "root_at":
            k = _slope(block, k, fn)
        k += 1


def _slope(block: Block, k: int, fn: Function) -> int:
    """Rewrite ``block.stmts[k]`` (a ``root_at``); returns its new position."""
    e = block.stmts[k]
    root, fv, xs = e.ins
    start = next(j for j in range(k) if isinstance(block.stmts[j], Eqn)
                 and xs in block.stmts[j].outs) + 1
    body, (seed,), (slope,) = tangents([xs], Block(block.stmts[start:k]), [fv], [xs], fn.namer)
    if not isinstance(slope, Var):
        raise UnsupportedError("the function whose root scipy.optimize finds does not "
                               "depend on its first argument", e.loc)
    replace_vars(body, {seed: Const(1.0)})
    block.stmts[start:k] = body.stmts
    k = start + len(body.stmts)
    block.stmts[k] = Eqn("implicit_root", e.outs, [root, fv, slope], {}, e.loc)
    return k


__all__ = ["implicit_slopes"]
