"""The sizes of draws made inside loops, computed before the call (`draws.Recorder.finish`).

A draw's size must be computed from the parameters (and the draws made before it) by a
program the replay runs before the compiled code (`draws.DrawPlan`). Inside a loop, a size
read from an array made in the loop (``D = p.shape[0]`` of a row ``p`` of an argument; the
length of a slice ``p[:D]`` of it) is the same at every iteration: `size_in_loop` writes the
equation that computes it from the array the row or slice was taken from, or from the size's
token (a constant, an argument's axis, a size computed before the loop).
"""

from __future__ import annotations

from jitgrad.core import ir
from jitgrad.core.ir import Const, Var
from jitgrad.core.types import Type


def size_in_loop(gb, eqn, defs, order):
    """``n = x.shape[k]`` of an array ``x`` made inside a loop (a row of an argument, a
    slice of one), whose size there is the same at every iteration (a constant, an
    argument's axis, or a size computed from them before the loop): the equation that
    computes it from those, in ``eqn``'s place (the sizes it reads defined in ``defs``
    in turn); None where the size is not one of those."""
    x, axis = eqn.ins[0], eqn.params["axis"]
    out, loc = eqn.outs[0], eqn.loc

    def define(prim, ins, params=None, var=None):
        var = var or Var(gb.namer.fresh("_size"), Type("i", 0))
        defs[var] = ir.Eqn(prim, [var], list(ins), params or {}, loc)
        order[id(defs[var])] = order[id(eqn)]
        return defs[var]

    while isinstance(x, Var) and x in defs and defs[x].prim == "getitem":
        made = defs[x]  # a row of an array (x[k], x[k, :]) or a slice: that array's axis
        spec = made.params["index_spec"]
        if any(item not in ("i", ":") and not (isinstance(item, tuple) and item[0] == "s")
               for item in spec):
            return None
        atoms, kept = list(made.ins[1:]), []
        for j, item in enumerate(spec):  # (the source's axis, a slice's bounds) per axis
            if item == "i":  # kept
                atoms.pop(0)
                continue
            kept.append((j, [atoms.pop(0) if flag else None for flag in (
                item[1:] if isinstance(item, tuple) else (False,) * 3)]))
        kept += [(j, [None] * 3) for j in range(len(spec), len(spec) + x.type.ndim
                                                - len(kept))]
        axis, (start, stop, step) = kept[axis]
        if (start, stop, step) != (None, None, None):  # a slice: its length
            if step is not None:
                return None
            n = define("shape_dim", [made.ins[0]], {"axis": axis}).outs[0]
            return slice_length(n, start, stop, define, out)
        x = made.ins[0]
    if not isinstance(x, Var):
        return None
    if x is not eqn.ins[0]:  # the axis of the array it was taken from (needed in turn)
        return define("shape_dim", [x], {"axis": axis}, var=out)
    size = gb.size_class(ir.dims_of(x)[axis])
    while (isinstance(size, tuple) and len(size) == 2 and size not in gb.param_axes
           and size[0] in gb.shape_from and isinstance(size[1], int)):
        size = gb.size_class(ir.dims_of(gb.shape_from[size[0]])[size[1]])
    if isinstance(size, int):
        return define("add", [Const(size), Const(0)], var=out)
    if size in gb.param_axes:
        param, k = gb.param_axes[size]
        return define("shape_dim", [param], {"axis": k}, var=out)
    if isinstance(size, Var) and not size.type.ndim:  # a size computed (then needed)
        return define("add", [size, Const(0)], var=out)
    if (isinstance(size, tuple) and len(size) == 2 and isinstance(size[0], Var)
            and size[0] is not x and isinstance(size[1], int)):  # another array's axis
        return define("shape_dim", [size[0]], {"axis": size[1]}, var=out)
    return None

def slice_length(n, start, stop, define, out):
    """The equations of ``len(range(n)[start:stop])`` (a bound None: absent), Python's
    length of a slice: a bound below zero counts from the end, then each is clipped to
    [0, n]."""
    def clipped(v):
        neg = define("floordiv", [define("sub", [Const(1), define("sign", [v]).outs[0]])
                                  .outs[0], Const(2)]).outs[0]  # 1 where v < 0
        v = define("add", [v, define("mul", [n, neg]).outs[0]]).outs[0]
        return define("maximum", [Const(0), define("minimum", [v, n]).outs[0]]).outs[0]
    hi = clipped(stop) if stop is not None else n
    lo = clipped(start) if start is not None else Const(0)
    return define("maximum", [Const(0), define("sub", [hi, lo]).outs[0]], var=out)
