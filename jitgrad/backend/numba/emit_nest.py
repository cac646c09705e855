"""Loop nests: which operations one nest over a shape computes, and how it reads them.

Takes equations of the IR (their atoms' symbolic dims, `ir.dims_of`). Guarantees: `nest_reads`
says, per operand, how one iteration of a nest over ``dims`` reads it (or that the equation
cannot be computed in such a nest); `nest_operands` which operands are elements computed
earlier in the nest; `summed_shape` and `summed_index` the accumulator of a reduction along
an axis. Nothing here writes source lines: `emit_fused.NestWriter.fused` does.
"""

from __future__ import annotations

from jitgrad.core.ir import Eqn, Var, dims_of
from jitgrad.prims import primitives

# Reductions a loop nest accumulates, and the accumulator's starting value.
REDUCE_INIT = {"sum": "0.0", "max": "-np.inf", "min": "np.inf"}


def nest_dims(e: Eqn) -> tuple:
    """The dims a nest computing ``e`` runs over: its operand's for a reduction, else its
    result's."""
    return dims_of(e.ins[0]) if e.prim in REDUCE_INIT else e.outs[0].dims


def nest_reads(e, dims) -> list | None:
    """How one iteration of a loop nest over ``dims`` reads each operand of ``e``: "value" (a
    scalar, read as it is) or, per axis of the operand, the loop indexing it (None: index 0,
    a size-1 axis broadcast). The shape-only operand of a spread or broadcast is read at its
    own position (never used). None: ``e`` cannot be computed by such a nest.

    An accumulation into an array of the nest's shape (``iadd``: ``_b_z += c``, the adjoint
    of a value read several times) is read like an elementwise operation: the array at the
    nest's position, then its operand. An accumulation into a part of an array by basic
    indexing (``add_at``: ``_b_d[:, i:m] += c``, the adjoint of a slice read) whose operand
    has the nest's shape reads the array as "into": the nest adds into a view of that part
    at its own position (the adjoint's operand has the shape of the part it goes into).
    (Whether the array may be written inside the nest is the nest's question:
    `emit_fused.NestWriter.fusable_run`.)"""
    if isinstance(e, Eqn) and e.prim == "add_at" and not e.outs:
        acc, value, index = e.ins[0], e.ins[1], e.ins[2:]
        if (not isinstance(acc, Var) or acc.type.kind != "f" or not dims
                or dims_of(value) != dims or value.type.ndim != len(dims)
                or any(isinstance(a, Var) and a.type.ndim for a in index)):
            return None
        return ["into", tuple(range(len(dims)))] + ["value"] * len(index)
    if isinstance(e, Eqn) and e.prim == "iadd" and not e.outs:
        acc = e.ins[0]
        if not isinstance(acc, Var) or acc.type.kind != "f" or not dims or dims_of(acc) != dims:
            return None
        value = _elementwise_reads([e.ins[1]], dims)
        return None if value is None else [tuple(range(len(dims)))] + value
    if not isinstance(e, Eqn) or len(e.outs) != 1:
        return None
    out = e.outs[0]
    if e.prim in REDUCE_INIT:
        x = e.ins[0]
        if x.type.kind != "f" or dims_of(x) != dims or not dims:
            return None
        axis = e.params["axis"]
        return [tuple(range(len(dims)))] if axis is None or 0 <= axis < len(dims) else None
    if e.prim == "assign":
        x = e.ins[0]
        ok = isinstance(x, Var) and out.dims == dims and dims_of(x) == dims and dims
        return [tuple(range(len(dims)))] if ok else None
    p = primitives.PRIMITIVES.get(e.prim)
    if p is None or not out.type.ndim or out.dims != dims:
        return None
    if e.prim == "spread" and e.params["axis"] is not None:
        g, axis = e.ins[0], e.params["axis"]
        at = [k for k in range(len(dims)) if k != axis or g.type.ndim == len(dims)]
        d = dims_of(g)
        if len(d) != len(at) or any(d[j] != dims[k] and not (k == axis and d[j] == 1)
                                    for j, k in enumerate(at)):
            return None
        return [tuple(None if k == axis else k for k in at), tuple(range(len(dims)))]
    if p.flags.outer_of is not None:  # entry [i, j]: input 0's entry i, input 1's entry j
        # (the result's axes are its inputs' lengths, whatever the tokens say of them)
        ok = len(dims) == 2 and all(a.type.ndim == 1 for a in e.ins)
        return [(0,), (1,)] if ok else None
    if not (p.elementwise or p.flags.broadcasts):
        return None
    return _elementwise_reads(e.ins, dims)


def _elementwise_reads(atoms, dims) -> list | None:
    """Per atom: "value" for a scalar, else the loop indexing each of its axes (None for a
    size-1 axis broadcast); None when an atom does not broadcast to ``dims``."""
    reads = []
    for a in atoms:
        d = dims_of(a)
        if not d or not a.type.ndim:  # (a size read from a shape holds its size as its dims)
            reads.append("value")
            continue
        lead = len(dims) - len(d)
        if lead < 0:
            return None
        axes = []
        for j, t in enumerate(d):
            if t == dims[lead + j]:
                axes.append(lead + j)
            elif t == 1:
                axes.append(None)
            else:
                return None
        reads.append(tuple(axes))
    return reads


def nest_operands(group: list) -> tuple[list, dict, set]:
    """(from_nest, internal_uses, read_names) for a nest's run: per equation, whether each
    operand is an element computed earlier in the nest (an adjoint updated in place, ``_b_x =
    _b_x + c``, reads the array before the nest and defines an element); how often the nest
    reads each such element; and the names of the values it reads from outside."""
    from_nest, made = [], set()
    for e in group:
        from_nest.append([isinstance(a, Var) and a in made for a in e.ins])
        made.update(e.outs)  # (an accumulation into an array from outside makes nothing)
    internal_uses: dict[Var, int] = {}
    read_names = set()
    for e, inner in zip(group, from_nest):
        for a, here in zip(e.ins, inner):
            if here:
                internal_uses[a] = internal_uses.get(a, 0) + 1
            elif isinstance(a, Var):
                read_names.add(a.name)
    return from_nest, internal_uses, read_names


def summed_shape(sizes: list[str], params) -> str:
    axis, keep = params["axis"], params["keepdims"]
    kept = ["1" if k == axis or axis is None else s for k, s in enumerate(sizes)
            if keep or (axis is not None and k != axis)]
    return "(" + ", ".join(kept) + ("," if len(kept) == 1 else "") + ")"


def summed_index(idx: list[str], params) -> str:
    axis, keep = params["axis"], params["keepdims"]
    at = ["0" if k == axis or axis is None else i for k, i in enumerate(idx)
          if keep or (axis is not None and k != axis)]
    return "[" + ", ".join(at) + "]"
