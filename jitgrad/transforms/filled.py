"""Matrix products and sums of an array whose entries are all one number, made reductions.

Takes a kernel's body; guarantees the same values, with fewer operations. The cotangent that
enters the adjoint of ``np.sum(C)`` is ``C``'s shape filled with 1.0 (``spread``), and it
reaches the adjoints of the products that made ``C`` as it is: NPBench's ``gemm``
(``C[:] = alpha * A @ B + beta * C``) then multiplies ``ones @ B.T`` and ``(alpha * A).T @
ones``, two matrix products the size of the primal's. Each entry of a product by a filled
operand is that number times a sum of the other operand: ``F @ Y`` (``F`` m×k filled with
``c``) has rows ``c * Y.sum(axis=0)``, ``X @ F`` (``F`` k×n) columns ``c * X.sum(axis=1)``.
So such a product becomes one reduction of the other operand and an outer product (a loop
nest writing the result once), or a ``full`` when the other operand is a vector: memory
passes instead of a product's arithmetic. XLA's algebraic simplifier does the same for
``dot(broadcast(c), x)``.

An array is *filled with* ``c`` (a number known while building, or a float variable of no
axes that is not defined again meanwhile: ``np.sum(X) * s``) from its definition on, in
the order of a block's own statements, until an equation writes into its alias class
(`core.ir.MayShare`), or a loop or branch does or defines it again; the definition is

* a broadcast (`core.ops.Flags.broadcasts`: ``spread``, ``broadcast_like``) of ``c`` or of an
  array filled with ``c``,
* a view (`Flags.view`, `Flags.read_only_view`: an index, a transpose, a reshape) or a copy
  (`Flags.same_value`) of an array filled with ``c``,
* an operation that returns its input when the shapes agree (`Flags.may_return_input` with
  `Flags.same_shape_as`: ``sum_to_like``), and they do by `core.ir.dims_of`,
* a filled array times or over a number, or a number times or over it (`Flags.scales`:
  ``np.cov``'s cotangent, ones over ``n - 1``): filled with the product or quotient, computed
  first.

Only products of vectors and matrices are rewritten (a stack of matrices is left alone). A
sum of every entry of a filled array (`Flags.sums`, to a scalar) is its number times its size.
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.ir import Atom, Block, Const, Eqn, MayShare, Namer, Var, defs, dims_of, walk
from jitgrad.core.types import FLOAT, INT, Type


def filled_products(block: Block, namer: Namer, params: list[Var]) -> int:
    """Rewrite the products by a filled operand among ``block``'s own statements (module
    docstring); return how many. A size of the result is read off a parameter in ``params``
    where `core.ir.dims_of` says it is one of its axes: then nothing reads the filled array,
    nor the forward value whose shape it has (``np.sum(A.T @ A)`` computes no product
    forwards)."""
    alias = MayShare(block)
    fill: dict[Var, Atom] = {}
    shape_of: dict[Var, Var] = {}  # a filled array -> an array of its size (`_size_source`)
    made: dict[Var, Eqn] = {}  # the transposes, read back by a sum along the other axis
    out: list = []
    done = 0
    for s in block.stmts:
        if not isinstance(s, Eqn):  # what a loop or branch defines or writes is unknown after
            for v in defs(s):
                _redefined(v, fill)
                made.pop(v, None)
            for inner in walk(Block([s])):
                if isinstance(inner, Eqn):
                    _forget(inner, fill, alias)
            out.append(s)
            continue
        new = (_rewrite(s, fill, made, namer, set(params)) if ops.flags(s.prim).contracts
               and fill else _summed(s, fill, shape_of, namer))
        if new is not None:
            fill.pop(s.out, None)
            out += new
            done += 1
            continue
        _forget(s, fill, alias)
        for v in s.outs:
            made.pop(v, None)
        if s.prim == "transpose" and s.out.type.ndim == 2 and s.params.get("axes") in (
                None, (1, 0)):
            made[s.out] = s
        for v in s.outs:  # (an array whose size was read off v no longer is filled)
            for w in [w for w, src in shape_of.items() if src is v and w is not v]:
                fill.pop(w, None)
                del shape_of[w]
        value = _filled(s, fill)
        if value is not None:
            fill[s.out] = value
            shape_of[s.out] = _size_source(s, shape_of)
        else:
            scaled = _scaled(s, fill, namer)
            if scaled is not None:  # (the number first: a float variable of no axes)
                out.append(scaled)
                fill[s.out] = scaled.out
                shape_of[s.out] = shape_of.get(s.ins[0] if s.ins[0] in fill else s.ins[1],
                                               s.out)
        out.append(s)
    block.stmts[:] = out
    return done


def _redefined(v: Var, fill: dict[Var, Atom]) -> None:
    """``v`` holds a new value: neither it nor an array filled with it is filled any more."""
    fill.pop(v, None)
    for w in [w for w, c in fill.items() if c is v]:
        del fill[w]


def _forget(e: Eqn, fill: dict[Var, Atom], alias: MayShare) -> None:
    """After ``e``: its results hold new values, and what it writes into may have changed."""
    for v in e.outs:
        _redefined(v, fill)
    if ops.flags(e.prim).writes_into_first and isinstance(e.ins[0], Var) and fill:
        root = alias.find(e.ins[0])
        for v in [v for v in fill if alias.find(v) is root]:
            del fill[v]


def _filled(e: Eqn, fill: dict[Var, Atom]) -> Atom | None:
    """The number every entry of ``e``'s result is, if the rules of the module docstring say:
    a constant, or a float variable of no axes."""
    if len(e.outs) != 1 or not e.ins or not e.out.type.ndim or e.out.type.kind != "f":
        return None
    flags = ops.flags(e.prim)
    src = e.ins[0]
    if flags.writes_into_first:
        return None
    if flags.broadcasts and isinstance(src, Const) and isinstance(src.value, (int, float)) \
            and not isinstance(src.value, bool):
        return Const(float(src.value))
    if flags.broadcasts and isinstance(src, Var) and src.type == FLOAT:
        return src
    if not isinstance(src, Var) or src not in fill:
        return None
    if (flags.broadcasts or flags.view or flags.read_only_view or flags.same_value
            or (flags.may_return_input and flags.same_shape_as is not None
                and dims_of(src) == dims_of(e.ins[flags.same_shape_as]))):
        return fill[src]
    return None


def _scaled(e: Eqn, fill: dict[Var, Atom], namer: Namer) -> Eqn | None:
    """A filled array times or over a number (``np.cov``'s cotangent, ones over ``n - 1``),
    or a number times or over it (a `Flags.scales` operation), is filled with that product or
    quotient: the equation that computes it (before ``e``), or None."""
    if not (ops.flags(e.prim).scales and len(e.outs) == 1 and len(e.ins) == 2
            and e.out.type.kind == "f" and e.out.type.ndim):
        return None
    a, b = e.ins
    arrays = [x for x in (a, b) if isinstance(x, Var) and x.type.ndim]
    if len(arrays) != 1 or arrays[0] not in fill or dims_of(arrays[0]) != e.out.dims:
        return None
    number = b if arrays[0] is a else a
    if not (isinstance(number, Const) and isinstance(number.value, (int, float))
            and not isinstance(number.value, bool)
            or isinstance(number, Var) and number.type in (FLOAT, INT)):
        return None
    c = fill[arrays[0]]
    return Eqn(e.prim, [Var(namer.temp("_t"), FLOAT)], [c, number] if number is b else
               [number, c], {}, e.loc)


def _size_source(e: Eqn, shape_of: dict[Var, Var]) -> Var:
    """An array of the size of ``e``'s filled result: the array a broadcast takes its shape
    from (nothing then reads the filled array for its size), a copy's source's, or itself."""
    flags = ops.flags(e.prim)
    like = e.ins[flags.same_shape_as] if flags.same_shape_as is not None else None
    if flags.broadcasts and isinstance(like, Var) and like.type.ndim == e.out.type.ndim:
        return like
    if flags.same_value and isinstance(e.ins[0], Var) and e.ins[0] in shape_of:
        return shape_of[e.ins[0]]
    return e.out


def _summed(e: Eqn, fill: dict[Var, Atom], shape_of: dict[Var, Var], namer: Namer):
    """The sum of every entry of a filled array (``np.sum(C)``'s cotangent summed back to a
    scalar, NPBench's ``a + trace``): its number times its size, or None."""
    src = e.ins[0] if e.ins else None
    if not (ops.flags(e.prim).sums and len(e.outs) == 1 and e.out.type == FLOAT
            and isinstance(src, Var) and src in fill):
        return None
    n = Var(namer.temp("_len"), INT)
    return [Eqn("size", [n], [shape_of.get(src, src)], {}, e.loc),
            Eqn("mul", [e.out], [fill[src], n], {}, e.loc)]


def _rewrite(e: Eqn, fill: dict[Var, Atom], made: dict[Var, Eqn], namer: Namer,
             params: set[Var]):
    """The equations that compute ``e`` (a matmul) from a reduction, or None. The sum of a
    transpose ``made`` here is the sum of its source along the other axis: a pass along the
    rows of a C-ordered array, not down its columns."""
    a, b = e.ins
    out = e.out
    if not (isinstance(a, Var) and isinstance(b, Var)
            and a.type.ndim in (1, 2) and b.type.ndim in (1, 2)):
        return None
    loc = e.loc
    eqns: list[Eqn] = []

    def new(prim, ins, params, type_, base, dims=None):
        v = Var(namer.temp(base), type_, dims=dims)
        eqns.append(Eqn(prim, [v], ins, params, loc))
        return v

    def scaled(x, c):  # c * x, written only when c is not 1
        return x if c == Const(1.0) else new("mul", [x, c], {}, x.type, "_t", x.dims)

    if a in fill and a.type.ndim == 2:  # F @ Y: every row of the result is c * Y summed down
        c, other, keep = fill[a], b, 1
    elif b in fill and b.type.ndim == 2:  # X @ F: every column is c * X summed across
        c, other, keep = fill[b], a, 0
    else:  # a filled vector: one pass over the other operand either way, BLAS's the fastest
        return None
    if other.type.kind != "f":
        return None
    filled_by = a if keep == 1 else b
    along = 0 if keep == 1 else 1
    token = dims_of(filled_by)[along]
    if isinstance(token, tuple) and len(token) == 2 and token[0] in params:
        filled_by, along = token  # that size is this parameter's axis
    n = new("shape_dim", [filled_by], {"axis": along}, INT, "_len")
    if other.type.ndim == 1:  # matrix @ vector: a vector of one number, the vector's sum
        total = scaled(new("sum", [other], {"axis": None, "keepdims": False}, FLOAT, "_t"), c)
        eqns.append(Eqn("full", [out], [total, n], {}, loc))
        return eqns
    axis = 0 if keep == 1 else 1
    kept = dims_of(other)[1 - axis]
    if other in made:  # X.T summed along axis: X summed along the other one
        other, axis = made[other].ins[0], 1 - axis
    sums = new("sum", [other], {"axis": axis, "keepdims": False}, Type("f", 1), "_t",
               (kept,))
    ones = new("full", [c, n], {}, Type("f", 1), "_t", (token,))
    pair = [ones, sums] if keep == 1 else [sums, ones]
    eqns.append(Eqn("outer", [out], pair, {}, loc))
    return eqns
