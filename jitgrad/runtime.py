"""Small array helpers that generated code calls as ``_rt.<name>``.

Written as plain loops so that Numba compiles them in a fraction of a second (``np.sum(axis=)``
takes seconds) and so that they cover what Numba rejects (``keepdims=``, ``np.max(axis=)``).
Each is compiled with `compile.jit` (``numba.njit(cache=True)``, or left as plain Python under
``JITGRAD_DISABLE_JIT=1``).

Each takes arrays of any rank; where a result's shape cannot be computed inside Numba, the
generated code passes it in (``out_shape``), since it knows every rank.
"""

from __future__ import annotations

import numpy as np

from .compile import jit


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
def max_axis(x, axis, out_shape):
    """``np.max(x, axis)``; NaN propagates as in NumPy."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.empty((pre, post), dtype=x.dtype)
    for a in range(pre):
        for b in range(post):
            out[a, b] = xc[a, 0, b]
        for j in range(1, n):
            for b in range(post):
                v = xc[a, j, b]
                if v > out[a, b] or v != v:
                    out[a, b] = v
    return out.reshape(out_shape)


@jit
def min_axis(x, axis, out_shape):
    """``np.min(x, axis)``; NaN propagates as in NumPy."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.empty((pre, post), dtype=x.dtype)
    for a in range(pre):
        for b in range(post):
            out[a, b] = xc[a, 0, b]
        for j in range(1, n):
            for b in range(post):
                v = xc[a, j, b]
                if v < out[a, b] or v != v:
                    out[a, b] = v
    return out.reshape(out_shape)


@jit
def sum_to(c, like):
    """Sum ``c`` over the axes where ``like`` (of the same rank) has size 1 but ``c`` has not:
    the adjoint of NumPy broadcasting. Returns ``c`` itself (contiguous) when shapes agree."""
    if c.shape == like.shape:
        return np.ascontiguousarray(c)
    out = np.zeros(like.shape)
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
def broadcast_like(g, like):
    """``g`` broadcast to the shape of ``like``, as a new array."""
    return np.zeros(like.shape) + g


@jit
def reshape(x, shape):
    """``x.reshape(shape)`` for any layout (Numba reshapes contiguous arrays only)."""
    return np.ascontiguousarray(x).reshape(shape)


@jit
def trip_count(start, stop, step):
    """``len(range(start, stop, step))``."""
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // (-step))


@jit
def push(tape, n, value):
    """Append ``value`` to the stack ``tape`` holding ``n`` items; grow it when full."""
    if n == tape.shape[0]:
        bigger = np.empty(max(16, 2 * n), dtype=tape.dtype)
        bigger[:n] = tape
        tape = bigger
    tape[n] = value
    return tape, n + 1
