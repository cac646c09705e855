"""The pass ``in_place``: an adjoint's accumulation into an array it owns, added in place.

Takes the transformed and optimised `reverse.Gradient` (after `optimise.OPTIMISE`); changes
only its adjoint kernel, where ``x = x + c`` (the adjoint's accumulation: the result is ``x``
itself) becomes ``x += c`` (``iadd``) when nothing can read the old sum:

* in the same block, ``x`` was last defined by an equation that makes a fresh array (an
  elementwise operation, an outer or matrix product, an allocation; `optimise.makes_fresh_array`),
  or by an assignment of such an array;
* every other name that may share ``x``'s memory (`core.ir.MayShare`) is such an assignment
  or that fresh result, made in this block before the addition and read nowhere after it,
  and none is a parameter or returned (so no view, carried or saved value);
* ``c`` broadcasts to ``x``'s shape (`dims_of`).

The sum is the same (``x[i] + c[i]`` either way), one allocation and one pass over memory
fewer: a matrix read by two products (mvt's ``A @ y_1`` and ``y_2 @ A``) gets its adjoint in
one buffer, updated in one pass, and an adjoint handed on from a temporary (softmax's
``_b_x = _b_t1``, then the max's share added) is updated where it lies.
"""

from __future__ import annotations

from jitgrad.core.ir import Block, Eqn, MayShare, Var, defs, dims_of, direct_uses, sub_blocks, walk
from jitgrad.transforms.optimise import makes_fresh_array
from jitgrad.transforms.passes import GradientWork, Pass


def _in_place(work: GradientWork) -> None:
    adjoint = work.gradient.adjoint
    adds_in_place(adjoint.body, adjoint.params, adjoint.returns)


IN_PLACE = Pass("in_place", _in_place, reads=("gradient",), writes=(), needs=("optimise",),
                when="in_place")


def adds_in_place(body: Block, params: list[Var], returns=()) -> None:
    """``x = x + c`` becomes ``x += c`` where the module docstring's conditions hold."""
    alias = MayShare(body)
    names: dict[Var, set] = {}  # alias class -> the arrays in it
    uses: dict[Var, int] = {}  # array -> the statements that read it, anywhere in the body
    for s in walk(body):
        for a in direct_uses(s):
            if isinstance(a, Var) and a.type.ndim:
                uses[a] = uses.get(a, 0) + 1
        for a in direct_uses(s) + defs(s):
            if isinstance(a, Var) and a.type.ndim:
                names.setdefault(alias.find(a), set()).add(a)
    passed = {p for p in params if p.type.ndim}
    kept = passed | {a for a in returns if isinstance(a, Var)}

    def others(v: Var) -> set:
        return names.get(alias.find(v), {v}) - {v}

    _adds_in(body, others, uses, passed, kept)


def _broadcasts_into(c, x: Var) -> bool:
    """Whether ``c``'s shape broadcasts to ``x``'s and no further (by their size tokens)."""
    dc, dx = dims_of(c), dims_of(x)
    lead = len(dx) - len(dc)
    return lead >= 0 and all(t == dx[lead + j] or t == 1 for j, t in enumerate(dc))


def _adds_in(block: Block, others, uses: dict, passed: set, kept: set) -> None:
    # arrays whose memory this block made, each with the names for it the block made
    fresh: dict[Var, set] = {}
    for k, s in enumerate(block.stmts):
        for sb in sub_blocks(s):
            _adds_in(sb, others, uses, passed, kept)
        x = s.ins[0] if isinstance(s, Eqn) and s.ins else None
        if (isinstance(s, Eqn) and s.prim == "add" and len(s.outs) == 1 and len(s.ins) == 2
                and s.outs[0] is x and x in fresh and s.ins[1] is not x
                and x.type.kind == "f" and _broadcasts_into(s.ins[1], x)
                and _unread_after(others(x), fresh[x], block.stmts[:k], uses, kept)):
            block.stmts[k] = Eqn("iadd", [], [x, s.ins[1]], {}, s.loc)
            continue
        for v in defs(s):
            fresh.pop(v, None)
        if not isinstance(s, Eqn) or len(s.outs) != 1 or s.outs[0] in passed:
            continue
        if makes_fresh_array(s):
            fresh[s.outs[0]] = set()
        elif s.prim == "assign" and s.ins[0] in fresh:
            fresh[s.outs[0]] = fresh[s.ins[0]] | {s.ins[0]}


def _unread_after(sharing: set, made_here: set, before: list, uses: dict, kept: set) -> bool:
    """Whether the names in ``sharing`` (the others that may share an array's memory) are all
    among ``made_here`` (this block's names for it) and read only in ``before`` (the block's
    statements before the addition), none kept (a parameter or a return)."""
    if not sharing <= made_here or sharing & kept:
        return False
    earlier: dict[Var, int] = {}
    for s in walk(Block(before)):
        for a in direct_uses(s):
            if a in sharing:
                earlier[a] = earlier.get(a, 0) + 1
    return all(earlier.get(v, 0) == uses.get(v, 0) for v in sharing)
