"""Runtime helpers for reads and writes through index arrays and masks (`_rt.<name>`, re-exported
by `runtime`): the positions a gather or scatter touches, checked as NumPy checks them (an
index out of bounds raises IndexError, a mask of another shape IndexError, index arrays of
different lengths ValueError; Numba itself checks nothing), and the scatter-adds of gathers'
adjoints. Compiled with `compile.jit`, once per machine. Why the backend has its own: the
primitives' implementations (`prims.indexing`) are NumPy's vectorised forms for the interpreter
(``np.add.at``, ``np.flatnonzero``, ``np.ravel_multi_index``), and Numba does not check the
entries of an index array; these loops read the same positions and raise NumPy's errors.
"""

from __future__ import annotations

import numpy as np

from jitgrad.backend.numba.compile import jit


@jit
def _row_at(i, n):
    """Row ``i`` of ``n`` as NumPy reads it: a negative index counts from the end."""
    if i < 0:
        i += n
    if i < 0 or i >= n:
        raise IndexError("index out of bounds")
    return i


@jit
def take_add_vector(g, idx, n):
    """The adjoint of ``x[idx]`` for a vector x of length n: g[k] added at idx[k]."""
    out = np.zeros(n, dtype=g.dtype)
    for k in range(idx.shape[0]):
        out[_row_at(idx[k], n)] += g[k]
    return out


@jit
def take_add_rows(g, idx, n):
    """The adjoint of ``x[idx]`` for a matrix x of n rows: row k of g added at row idx[k]."""
    out = np.zeros((n, g.shape[1]), dtype=g.dtype)
    for k in range(idx.shape[0]):
        row = _row_at(idx[k], n)
        for c in range(g.shape[1]):
            out[row, c] += g[k, c]
    return out


@jit
def rows_at(idx, n):
    """The rows ``x[idx]`` reads, for x of n rows: negative ones counted from the end, one out
    of bounds an IndexError (Numba does not check an index array)."""
    out = np.empty(idx.shape[0], dtype=np.int64)
    for k in range(idx.shape[0]):
        out[k] = _row_at(idx[k], n)
    return out


@jit
def _count_true(mask):
    count = 0
    for v in mask:
        if v:
            count += 1
    return count


@jit
def _true_positions(flat):
    out = np.empty(_count_true(flat), dtype=np.int64)
    j = 0
    for k in range(flat.shape[0]):
        if flat[k]:
            out[j] = k
            j += 1
    return out


@jit
def mask_positions(mask, x):
    """The flat positions of the entries ``x[mask]`` reads (mask of x's shape)."""
    if mask.shape != x.shape:
        raise IndexError("boolean index did not match indexed array")
    return _true_positions(mask.ravel())


@jit
def mask_rows(mask, n):
    """The rows ``x[mask]`` reads, for a 1-D mask over x's n rows."""
    if mask.shape[0] != n:
        raise IndexError("boolean index did not match indexed array")
    return _true_positions(mask)


@jit
def pair_positions(rows, cols, n, m):
    """The flat positions ``x[rows, cols]`` reads in x's first two axes (n by m)."""
    if rows.shape[0] != cols.shape[0]:
        raise ValueError("shape mismatch: indexing arrays could not be broadcast together")
    out = np.empty(rows.shape[0], dtype=np.int64)
    for k in range(rows.shape[0]):
        out[k] = _row_at(rows[k], n) * m + _row_at(cols[k], m)
    return out


@jit
def same_shape(values, idx, x):
    """``x``, once ``values`` is checked to have ``idx``'s shape (np.put_along_axis)."""
    if values.shape != idx.shape:
        raise ValueError("np.put_along_axis: the values must have the index's shape")
    return x


@jit
def along_positions(idx, x, axis):
    """The flat positions ``np.take_along_axis(x, idx, axis)`` reads, in idx's (C) order."""
    if idx.ndim != x.ndim:
        raise ValueError("np.take_along_axis: the index must have the array's rank")
    for d in range(x.ndim):
        if d != axis and idx.shape[d] != x.shape[d]:
            raise ValueError("np.take_along_axis: the index must have the array's shape "
                             "except along the axis")
    flat = idx.ravel()
    out = np.empty(flat.shape[0], dtype=np.int64)
    for k in range(flat.shape[0]):
        rest = k
        pos = 0
        stride = 1
        for d in range(x.ndim - 1, -1, -1):
            c = rest % idx.shape[d]
            rest //= idx.shape[d]
            if d == axis:
                c = _row_at(flat[k], x.shape[axis])
            pos += c * stride
            stride *= x.shape[d]
        out[k] = pos
    return out


@jit
def unpack_count(n, k):
    """``a, b, c = x``: k, once x's n rows are checked to be k (as Python and Numba check)."""
    if n != k:
        raise ValueError("cannot unpack an array into a different number of names")
    return k


@jit
def squeezed_size(n):
    """``np.squeeze(x)``: the size n of an axis known only at run time, checked not to be 1
    (`prims.shape.squeezed_size`)."""
    if n == 1:
        raise ValueError("jitgrad: np.squeeze(x) without axis=: an axis of x whose size jitgrad's build "
                         "does not know is taken as not 1, and here it is 1 (the result's rank "
                         "would change); name the axes to drop (np.squeeze(x, axis=k)) or "
                         "index the entry")
    return n


@jit
def strided_positions(x, shape, strides, distinct):
    """`prims.indexing.strided_positions_impl` compiled: the flat positions in ``x``'s memory
    of as_strided(x, shape, strides)'s entries, in C order, checked (x C-contiguous, strides
    whole entries, positions inside x; ``distinct``: no two alike)."""
    if not x.flags.c_contiguous:
        raise ValueError("as_strided of an array that is not C-contiguous")
    n = len(shape)
    steps = np.empty(n, dtype=np.int64)
    count = 1
    for k in range(n):
        if strides[k] % x.itemsize != 0:
            raise ValueError("as_strided: a stride that is not a whole number of entries")
        steps[k] = strides[k] // x.itemsize
        count *= shape[k]
    out = np.empty(count, dtype=np.int64)
    at = np.zeros(n, dtype=np.int64)
    for j in range(count):
        pos = 0
        for k in range(n):
            pos += at[k] * steps[k]
        if pos < 0 or pos >= x.size:
            raise IndexError("as_strided: the shape and strides reach outside the array")
        out[j] = pos
        k = n - 1
        while k >= 0:  # the next index, last axis fastest
            at[k] += 1
            if at[k] < shape[k]:
                break
            at[k] = 0
            k -= 1
    if distinct and count > 1:
        seen = np.sort(out)
        for j in range(1, count):
            if seen[j] == seen[j - 1]:
                raise ValueError("writing through an as_strided view whose entries overlap "
                                 "(two of them at one place in memory) is not supported")
    return out
