"""NumPy's sorting and order statistics, and its sliding windows, written with existing
primitives: `sort` and `argsort` along any axis (through the sorting permutation; ties keep
their order), `median`, `percentile`/`quantile` at constant q (linear interpolation), their
nan-versions (NaNs sort last: the order statistics of the numbers), and
``sliding_window_view`` (a gather; ``as_strided`` is refused, naming what to write).

Takes values of the graph (`Sym`) or constants; fills `symbolic.NUMPY` when imported (by
``jitgrad.lang``). No derivative rule of its own: the gathers' and sums' rules give it.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang.numpy_api import (
    norm_axis,
    np_ravel,
    np_reshape,
    np_reshape_like,
    np_transpose,
)
from jitgrad.lang.numpy_args import as_array
from jitgrad.lang.numpy_shape import np_moveaxis
from jitgrad.lang.symbolic import NUMPY, all_known, loc_of, ndim_of, record, records, smaller


def np_sort(x, axis=-1, kind=None, order=None):
    """A vector's entries in order: the entries at the sorting permutation (its gradient goes
    back through the permutation; tied entries keep their order)."""
    if all_known(x):
        return np.sort(x, axis=axis)
    if order is not None or x.ndim == 0 and axis is not None:
        raise UnsupportedError("np.sort of an array (order= is for structured arrays, which "
                               "jitgrad does not take)", loc_of(x))
    if axis is None or x.ndim == 1:
        flat = np_ravel(x) if x.ndim != 1 else x
        if axis is not None:
            norm_axis(axis, 1, loc_of(x))
        return record("take", flat, record("argsort", flat))
    axis = norm_axis(axis, x.ndim, loc_of(x))
    return np_moveaxis(_sort_last(np_moveaxis(x, axis, -1)), -1, axis)


def _sort_last(x):
    """Each row along the last axis sorted: the flat entries in the order of a stable sort
    by value, then a stable sort of that order by row (so each row's entries stay in value
    order), gathered (the gradient goes back through the permutation)."""
    flat = np_ravel(x)
    n = x.shape[-1]
    by_value = record("argsort", flat)
    rows = record("take", NUMPY[np.arange](flat.shape[0]) // n, by_value)
    order = record("take", by_value, record("argsort", rows))
    return np_reshape_like(record("take", flat, order), x)


def np_argsort(x, axis=-1, kind=None, order=None):
    """The order that sorts a vector (stable: tied entries keep their order), to index with;
    of an array along an axis, each line's order (the flat order of `_sort_last`, as
    positions within the line), as POT's ``np.argsort(u_values, 0)`` of projections."""
    if all_known(x):
        return np.argsort(x, axis=axis, kind=kind)
    if order is not None or axis is None or x.ndim == 0:
        raise UnsupportedError("np.argsort along an axis of an array (no order=, no "
                               "axis=None: ravel first)", loc_of(x))
    if x.ndim == 1:
        norm_axis(axis, 1, loc_of(x))
        return record("argsort", x)
    axis = norm_axis(axis, x.ndim, loc_of(x))
    moved = np_moveaxis(x, axis, -1)
    flat = np_ravel(moved)
    n = moved.shape[-1]
    by_value = record("argsort", flat)
    rows = record("take", NUMPY[np.arange](flat.shape[0]) // n, by_value)
    order = record("take", by_value, record("argsort", rows))
    return np_moveaxis(np_reshape_like(order % n, moved), -1, axis)


def np_median(x, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of all the entries, or along one axis (each line's sorted, the mean of its
    one or two middle entries)."""
    if all_known(x):
        return np.median(x, axis=axis, out=out, overwrite_input=overwrite_input,
                         keepdims=keepdims)
    if out is not None or isinstance(axis, tuple) or keepdims and axis is None:
        raise UnsupportedError("np.median of all the entries, or along one axis (no out=, "
                               "no tuple of axes; keepdims= with an axis)", loc_of(x))
    if axis is None or x.ndim == 1:
        if axis is not None:
            norm_axis(axis, 1, loc_of(x))
        s = np_sort(np_ravel(x) if x.ndim != 1 else x)
        middle = _middle(s, s.shape[0])
        return NUMPY[np.reshape](middle, (1,)) if keepdims else middle
    k = norm_axis(axis, x.ndim, loc_of(x))
    lines = np_moveaxis(_sort_last(np_moveaxis(x, k, -1)), -1, 0)  # each line sorted, first
    middle = _middle(lines, lines.shape[0])
    return NUMPY[np.expand_dims](middle, k) if keepdims else middle


def _middle(s, n):
    """The median of the first ``n`` entries of the sorted vector ``s``: the mean of its one
    or two middle entries."""
    lo = record("getitem", s, (n - 1) // 2, index_spec=("i",))
    hi = record("getitem", s, n // 2, index_spec=("i",))
    return (lo + hi) * 0.5


def np_percentile(x, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False):
    """The q-th percentiles of all the entries or along one axis, NumPy's default linear
    interpolation between the two order statistics around each q: ``q`` a constant number or
    a constant list of them (the result's first axis, as NumPy's). The derivative flows to
    those two entries of each line (the gathers' and the sort's rules)."""
    if all_known(x, q):
        return np.percentile(x, q, axis=axis, out=out, overwrite_input=overwrite_input,
                             method=method, keepdims=keepdims)
    if records(q) or any(records(v) for v in np.ravel(np.asarray(q, dtype=object))):
        raise UnsupportedError("np.percentile at a q known only at run time: q must be a "
                               "constant number or list of numbers", loc_of(x))
    qs = np.asarray(q, dtype=np.float64)
    if out is not None or method != "linear" or isinstance(axis, tuple) or qs.ndim > 1:
        raise UnsupportedError("np.percentile of all the entries or along one axis, at a "
                               "constant q or list of q, with the default linear method (no "
                               "out=, no tuple of axes)", loc_of(x))
    if axis is None or x.ndim == 1:
        if axis is not None:
            norm_axis(axis, 1, loc_of(x))
        lines = np_sort(np_ravel(x) if x.ndim != 1 else x)
        k = None
    else:
        k = norm_axis(axis, x.ndim, loc_of(x))
        lines = np_moveaxis(_sort_last(np_moveaxis(x, k, -1)), -1, 0)  # each line sorted
    ndim = x.ndim

    def at(qk):
        value = _interpolated(lines, float(qk))
        if not keepdims:
            return value
        return (NUMPY[np.reshape](value, (1,) * ndim) if k is None
                else NUMPY[np.expand_dims](value, k))
    if qs.ndim == 0:
        return at(qs)
    return NUMPY[np.stack]([at(qk) for qk in qs], 0)


def _interpolated(s, q):
    """The q-th percentile along the first axis of ``s``, whose lines are sorted: linear
    interpolation between the order statistics at floor and ceil of (n - 1) q / 100."""
    pos = (s.shape[0] - 1) * (q / 100.0)
    lo = record("cast", record("floor", pos), kind="i")
    hi = smaller(lo + 1, s.shape[0] - 1)
    frac = pos - lo
    below = record("getitem", s, lo, index_spec=("i",))
    above = record("getitem", s, hi, index_spec=("i",))
    return below + (above - below) * frac


def np_quantile(x, q, axis=None, **kw):
    if all_known(x, q):
        return np.quantile(x, q, axis=axis, **kw)
    if records(q) or any(records(v) for v in np.ravel(np.asarray(q, dtype=object))):
        raise UnsupportedError("np.quantile at a q known only at run time: q must be a "
                               "constant number or list of numbers", loc_of(x))
    return np_percentile(x, np.asarray(q, dtype=np.float64) * 100.0, axis, **kw)


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """The windows of ``window_shape`` entries along ``axis`` (one axis), as new trailing
    axes: a gather of the rows at ``start + offset`` (its adjoint adds up the entries the
    windows share). NumPy's result is a read-only view; this one is a copy, which reads the
    same and which jitgrad's in-place writes never reach (NumPy refuses writes into it)."""
    if all_known(x):
        return np.lib.stride_tricks.sliding_window_view(x, window_shape, axis, subok=subok,
                                                         writeable=writeable)
    x = as_array(x)
    loc = loc_of(x)
    shape = window_shape if isinstance(window_shape, tuple) else (window_shape,)
    axes = tuple(range(x.ndim)) if axis is None else axis if isinstance(axis, tuple) \
        else (axis,)
    if writeable or len(shape) != 1 or len(axes) != 1 or records(shape[0]) \
            or not isinstance(shape[0], int) or shape[0] < 1:
        raise UnsupportedError("sliding_window_view with one window size known while "
                               "building, along one axis (axis= for an array of rank 2 or "
                               "more), read only", loc)
    w, k = shape[0], norm_axis(axes[0], x.ndim, loc)
    moved = np_moveaxis(x, k, 0) if k else x
    n = moved.shape[0]
    starts = NUMPY[np.arange](n - w + 1)
    positions = np_ravel(np_reshape(starts, (-1, 1)) + NUMPY[np.arange](w))
    rows = np_reshape(moved, (n, -1)) if moved.ndim != 2 else moved
    taken = record("take", rows, record("index_positions", positions, rows, kind="rows")) \
        if moved.ndim > 1 else record("take", moved, record("index_positions", positions,
                                                              moved, kind="rows"))
    rest = tuple(moved.shape[1:])
    out = np_reshape(taken, (n - w + 1, w) + rest)  # (starts, window, other axes)
    r = len(rest)  # to NumPy's order: the other axes around the starts, the window last
    order = tuple(range(2, 2 + k)) + (0,) + tuple(range(2 + k, 2 + r)) + (1,)
    return np_transpose(out, order) if order != tuple(range(2 + r)) else out


def _integer(v, x, how):
    """A size or stride of as_strided: an integer, known while building or at run time."""
    if records(v) and v.ndim == 0 and v.type.kind == "i":
        return v
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    raise UnsupportedError("np.lib.stride_tricks.as_strided with a size or stride that is "
                           f"not an integer; {how}", loc_of(x))


def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """np.lib.stride_tricks.as_strided of a whole array (not a view), its shape and strides
    given: the entries at the flat positions sum_k i_k strides_k / itemsize of the array's
    memory (checked at run time: C-contiguous, whole entries, inside the array), a gather whose
    adjoint adds up the entries that share a position, so overlapping windows are right too.
    It shares the array's memory: a read after a write into the array is refused (stale), and
    a write through it is a write into the array (`build_stmts.write_strided`; refused at run
    time where two entries overlap)."""
    if all_known(x):
        return np.lib.stride_tricks.as_strided(x, shape, strides, subok, writeable)
    how = ("for windows, write sliding_window_view(x, w); for a repeat, np.broadcast_to; for "
           "a matrix's diagonal (strides (n + 1) * itemsize), np.diagonal to read it and "
           "np.fill_diagonal to write it")
    if not records(x) or x.ndim == 0 or not isinstance(shape, (tuple, list)) or not \
            isinstance(strides, (tuple, list)) or len(shape) != len(strides) or not shape:
        raise UnsupportedError("np.lib.stride_tricks.as_strided is supported of an array "
                               "with shape= and strides= both given, of the same length "
                               f"(tuples of integers); {how}", loc_of(x))
    gb = x.builder
    if x.atom in gb.views:
        raise UnsupportedError("np.lib.stride_tricks.as_strided of a view (a slice, a "
                               ".T, a reshape) reads memory beyond the view, which jitgrad "
                               "does not follow: call it on the whole array, with the view's "
                               f"offset in the strides, or {how}", loc_of(x))
    sizes = [_integer(v, x, how) for v in (*shape, *strides)]
    positions = record("strided_positions", x, *sizes, ndim=len(shape))
    out = np_reshape(record("take", np_ravel(x), positions), tuple(sizes[:len(shape)]))
    gb.share_memory(out.atom, x.atom)
    gb.restamp(out.atom)
    gb.strided_of[out.atom] = (x.atom, tuple(sizes), len(shape))
    return out


def _sorted_numbers(x, what):
    """The entries of ``x`` in order, NaNs last (as NumPy and Numba sort them), and how many
    are not NaN (a run-time count)."""
    if x.ndim == 0:
        raise UnsupportedError(f"{what} of an array", loc_of(x))
    s = np_sort(np_ravel(x) if x.ndim != 1 else x)
    count = NUMPY[np.sum](record("logical_not", record("isnan", x)))
    return s, count


def np_nanmedian(a, axis=None, **kw):
    """The median of the entries that are not NaN: the middle of the first ``count`` sorted
    entries (NaN when every entry is, as NumPy gives)."""
    if all_known(a):
        return np.nanmedian(a, axis=axis, **kw)
    if kw or axis is not None and not (a.ndim == 1 and norm_axis(axis, 1, loc_of(a)) == 0):
        raise UnsupportedError("np.nanmedian of all the entries (no axis=)", loc_of(a))
    s, n = _sorted_numbers(a, "np.nanmedian")
    return _middle(s, n)


def np_nanpercentile(a, q, axis=None, **kw):
    """The q-th percentile of the entries that are not NaN (linear interpolation)."""
    if all_known(a, q):
        return np.nanpercentile(a, q, axis=axis, **kw)
    if kw or axis is not None or ndim_of(q) or records(q):
        raise UnsupportedError("np.nanpercentile of all the entries at one constant q",
                               loc_of(a))
    s, n = _sorted_numbers(a, "np.nanpercentile")
    pos = (n - 1) * (float(q) / 100.0)
    lo = record("cast", record("floor", pos), kind="i")
    hi = smaller(lo + 1, n - 1)
    frac = pos - lo
    below = record("getitem", s, lo, index_spec=("i",))
    above = record("getitem", s, hi, index_spec=("i",))
    return below + (above - below) * frac


def np_nanquantile(a, q, axis=None, **kw):
    if all_known(a, q):
        return np.nanquantile(a, q, axis=axis, **kw)
    if ndim_of(q) or records(q):
        raise UnsupportedError("np.nanquantile of all the entries at one constant q",
                               loc_of(a))
    return np_nanpercentile(a, float(q) * 100.0, axis, **kw)


NUMPY.update({
    np.sort: np_sort, np.argsort: np_argsort, np.median: np_median,
    np.percentile: np_percentile, np.quantile: np_quantile,
    np.nanmedian: np_nanmedian, np.nanpercentile: np_nanpercentile,
    np.nanquantile: np_nanquantile,
    np.lib.stride_tricks.sliding_window_view: sliding_window_view,
    np.lib.stride_tricks.as_strided: as_strided,
})
