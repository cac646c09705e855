"""Reductions along one axis, and the adjoints of reductions and of broadcasting, for generated
code (``_rt.<name>``, re-exported by `runtime`).

Takes arrays of any rank and layout; where a result's shape cannot be computed inside Numba the
generated code passes it in (``out_shape``), since it knows every rank. Guarantees NumPy's
values: the same sums, products and extremes, NaN propagating in a max or min as in NumPy, an
empty max or min raising NumPy's ValueError. Compiled with `compile.jit` (once per machine).

Why these are loops of the backend's own, not the primitives' NumPy implementations
(`prims.reductions`): Numba rejects ``axis=`` for max, min, prod and cumsum and ``keepdims=``
everywhere, and compiles ``np.sum(x, axis)`` for seconds, where these loops take a fraction
of a second. `prod_others` and `prod_others_axis` compute the products in the same order as
the primitives' implementations (which are NumPy's running products, fast in the
interpreter), so they agree to the bit. The running-product loops (`cumprod_grad`,
`cumprod_jvp`, `prod_others_jvp`) are not written here: they are the primitives' own functions
(`prims.reductions`), compiled.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.np.arrayobj import make_array

from jitgrad.backend.numba.compile import intrinsic, jit
from jitgrad.backend.numba.runtime_alloc import float_dtype
from jitgrad.prims import reductions


def _plain_sum_all(x):
    """``np.sum(x)`` of a float array."""
    return np.sum(x)


@intrinsic(_plain_sum_all)
def sum_all(typingctx, x):
    """``np.sum(x)`` of a float array of any rank and layout, written into the caller: the
    items added one by one from zero in the order Numba's ``np.sum`` adds them (the same sum
    to the bit), where Numba's own compiles three functions of its own in each
    process (0.15-0.3 s: the sum, its axis checks)."""
    if not (isinstance(x, types.Array) and isinstance(x.dtype, types.Float)):
        return None

    def codegen(context, builder, signature, args):
        arrtype = signature.args[0]
        array = make_array(arrtype)(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, array.shape, arrtype.ndim)
        strides = cgutils.unpack_tuple(builder, array.strides, arrtype.ndim)
        total = cgutils.alloca_once_value(builder, context.get_constant(arrtype.dtype, 0.0))
        # Numba's order: memory order for a Fortran-ordered array (the first index moving
        # fastest), else the last index fastest
        fortran = arrtype.layout == "F"
        with cgutils.loop_nest(builder, shape[::-1] if fortran else shape,
                               shape[0].type) as indices:
            item = cgutils.get_item_pointer2(context, builder, array.data, shape, strides,
                                             arrtype.layout,
                                             indices[::-1] if fortran else indices)
            builder.store(builder.fadd(builder.load(total), builder.load(item)), total)
        return builder.load(total)

    return x.dtype(x), codegen



@jit
def _split(x, axis):
    """(before, n, after): the sizes of ``x`` before, at and after ``axis``."""
    pre = 1
    post = 1
    for k in range(x.ndim):
        if k < axis:
            pre *= x.shape[k]
        elif k > axis:
            post *= x.shape[k]
    return pre, x.shape[axis], post


@jit
def sum_axis(x, axis, out_shape):
    """``np.sum(x, axis)``, reshaped to ``out_shape`` (with or without the kept axis)."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.zeros((pre, post), dtype=x.dtype)
    for a in range(pre):
        for j in range(n):
            for b in range(post):
                out[a, b] += xc[a, j, b]
    return out.reshape(out_shape)


@jit
def _extreme_axis(x, axis, out_shape, largest):
    """The max (``largest``) or min of ``x`` over ``axis``; NaN propagates as in NumPy."""
    pre, n, post = _split(x, axis)
    if pre * post:
        nonempty(n)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.empty((pre, post), dtype=x.dtype)
    for a in range(pre):
        for b in range(post):
            out[a, b] = xc[a, 0, b]
        for j in range(1, n):
            for b in range(post):
                v = xc[a, j, b]
                if (v > out[a, b] if largest else v < out[a, b]) or np.isnan(v):
                    out[a, b] = v
    return out.reshape(out_shape)


@jit
def max_axis(x, axis, out_shape):
    """``np.max(x, axis)`` reshaped to ``out_shape`` (Numba rejects the axis argument)."""
    return _extreme_axis(x, axis, out_shape, True)


@jit
def min_axis(x, axis, out_shape):
    """``np.min(x, axis)`` reshaped to ``out_shape``."""
    return _extreme_axis(x, axis, out_shape, False)


@jit
def sum_to(c, like):
    """Sum ``c`` over the axes where ``like`` (of the same rank) has size 1 but ``c`` has not:
    the adjoint of NumPy broadcasting. Returns ``c`` itself (contiguous) when shapes agree."""
    if c.shape == like.shape:
        return np.ascontiguousarray(c)
    out = np.zeros(like.shape, float_dtype(c))
    cc = np.ascontiguousarray(c)
    flat_c = cc.reshape(cc.size)
    flat_o = out.reshape(out.size)
    for i in range(flat_c.size):
        rem = i
        o = 0
        mult = 1
        for k in range(c.ndim - 1, -1, -1):
            ik = rem % c.shape[k]
            rem //= c.shape[k]
            if like.shape[k] != 1:
                o += ik * mult
            mult *= like.shape[k]
        flat_o[o] += flat_c[i]
    return out


@jit
def spread(g, like, axis):
    """``g`` (``like`` reduced over ``axis``, the axis kept or not) copied back along ``axis``
    to the shape of ``like``: the adjoint of a sum."""
    pre, n, post = _split(like, axis)
    gc = np.ascontiguousarray(g).reshape((pre, post))
    out = np.empty((pre, n, post), float_dtype(g))
    for a in range(pre):
        for j in range(n):
            for b in range(post):
                out[a, j, b] = gc[a, b]
    return out.reshape(like.shape)


@jit
def broadcast_like(g, like):
    """``g`` broadcast to the shape of ``like``, as a new array."""
    return np.zeros(like.shape, float_dtype(g)) + g


_EMPTY_EXTREME = ("zero-size array to reduction operation maximum or minimum, which has no "
                  "identity")


def _plain_nonempty(n):
    """Before a max or min over ``n`` values: NumPy has no maximum of nothing either."""
    if n == 0:
        raise ValueError(_EMPTY_EXTREME)


@intrinsic(_plain_nonempty)
def nonempty(typingctx, n):
    """`_plain_nonempty` written into the caller (a compare and a branch; as a helper, a
    compile of its own on a machine's first gradient)."""
    if not isinstance(n, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        empty = builder.icmp_signed("==", args[0], ir.Constant(args[0].type, 0))
        with cgutils.if_unlikely(builder, empty):
            context.call_conv.return_user_exc(builder, ValueError, (_EMPTY_EXTREME,))
        return context.get_dummy_value()

    return types.none(n), codegen



@jit
def prod_others(x):
    """Each entry's product of all the other entries (the adjoint of np.prod, exact at zeros):
    the product of those before it times the product of those after it."""
    flat = x.ravel()
    out = np.empty(flat.size, float_dtype(x))
    acc = 1.0
    for i in range(flat.size):
        out[i] = acc
        acc *= flat[i]
    acc = 1.0
    for i in range(flat.size - 1, -1, -1):
        out[i] *= acc
        acc *= flat[i]
    return out.reshape(x.shape)


@jit
def prod_axis(x, axis, out_shape):
    """``np.prod(x, axis)``, reshaped to ``out_shape`` (Numba has no axis argument)."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.ones((pre, post), dtype=x.dtype)
    for a in range(pre):
        for j in range(n):
            for b in range(post):
                out[a, b] *= xc[a, j, b]
    return out.reshape(out_shape)


@jit
def prod_others_axis(x, axis):
    """Each entry's product of the other entries along ``axis`` (the adjoint of
    ``np.prod(x, axis)``, exact at zeros): the product before it times the product after it."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.empty((pre, n, post), float_dtype(x))
    for a in range(pre):
        for b in range(post):
            acc = 1.0
            for j in range(n):
                out[a, j, b] = acc
                acc *= xc[a, j, b]
            acc = 1.0
            for j in range(n - 1, -1, -1):
                out[a, j, b] *= acc
                acc *= xc[a, j, b]
    return out.reshape(x.shape)


@jit
def cumsum_axis(x, axis):
    """``np.cumsum(x, axis)`` (Numba's np.cumsum takes no axis)."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.empty((pre, n, post), dtype=xc.dtype)
    for a in range(pre):
        for b in range(post):
            acc = xc[a, 0, b] - xc[a, 0, b]
            for j in range(n):
                acc += xc[a, j, b]
                out[a, j, b] = acc
    return out.reshape(x.shape)


# The primitives' own loops (one copy of the numbers: the interpreter runs the same functions).
cumprod_grad = jit(reductions.cumprod_grad_loop)
cumprod_jvp = jit(reductions.cumprod_jvp_loop)
prod_others_jvp = jit(reductions.prod_others_jvp_loop)
