"""NumPy's functions of positions, counts and membership: where the nonzero entries are
(``np.nonzero``, ``argwhere``, ``flatnonzero``, ``np.where`` of one argument, ``extract``), where
values fall (``searchsorted``, ``digitize``, ``histogram``), counts (``bincount``, ``unique``),
membership and equality (``isin``, ``array_equal``, ``array_equiv``), the indices of a
triangle (``tril_indices``, ``triu_indices``), the open mesh of ``np.ix_`` (an index the
frontend reads as a matrix's block), the set operations of vectors (``union1d``,
``intersect1d``, ``setdiff1d``, ``setxor1d``), ``argpartition`` and ``partition``.

Each is written with the primitives (`prims.indexing`'s ``index_positions`` finds the true
entries of a mask, whose number is known at run time only; ``searchsorted``, ``digitize`` and
``bincount`` are NumPy's and Numba's own). Their integer and boolean results carry no
derivative. Where a result holds the input's values, its derivative is that of the gather or
scatter-add it is, as in JAX: ``extract``, ``partition``, ``unique`` and the set operations
read entries (a tie in ``unique`` sends the gradient to the first of the equal entries),
``bincount`` with weights adds them up, ``histogram``'s edges follow the data's minimum and
maximum and its weighted counts the weights.

Takes values of the graph (`Sym`) or constants (a call on constants only is NumPy's own);
fills `symbolic.NUMPY` when imported (by ``jitgrad.lang``).
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import ShapeError, UnsupportedError
from jitgrad.lang.numpy_api import norm_axis, np_where
from jitgrad.lang.numpy_args import as_array
from jitgrad.lang.symbolic import (
    NUMPY,
    all_known,
    builder_of,
    loc_of,
    ndim_of,
    numpy_handler,
    record,
    records,
)

_np = numpy_handler  # a NumPy function's handler, for the compositions below


def _truth(x):
    """Where ``x`` is nonzero (a mask of its shape)."""
    return x if x.dtype.kind == "b" else record("ne", x, 0)


def _true_positions(mask):
    """The flat positions of the true entries of ``mask`` (C order), an int vector whose
    length is known at run time only."""
    return record("index_positions", mask, mask, kind="mask")


def _checked_rows(idx, x):
    """``idx`` (a number or an int vector) as rows of ``x``: counted from the front, an index
    out of bounds an IndexError at run time."""
    one = ndim_of(idx) == 0
    rows = record("index_positions", _np(np.stack)([idx]) if one else idx, x, kind="rows")
    return record("getitem", rows, 0, index_spec=("i",)) if one else rows


def _unravel(flat, shape):
    """The index along each axis of the flat (C order) positions ``flat`` in ``shape``."""
    out = []
    for n in reversed(shape[1:]):
        out.append(record("mod", flat, n))
        flat = record("floordiv", flat, n)
    return (flat, *reversed(out))


def _at_least_1d(name, x):
    if ndim_of(x) == 0:
        raise UnsupportedError(f"np.{name} of a number (NumPy refuses it: index an array)",
                               loc_of(x))
    return x


# ---- where the nonzero entries are ---------------------------------------------------------


def np_nonzero(a):
    """The indices of the nonzero entries, one int vector per axis."""
    if all_known(a):
        return np.nonzero(a)
    a = _at_least_1d("nonzero", a)
    return _unravel(_true_positions(_truth(a)), a.shape)


def np_flatnonzero(a):
    if all_known(a):
        return np.flatnonzero(a)
    return _true_positions(_truth(_np(np.ravel)(a) if a.ndim != 1 else a))


def np_argwhere(a):
    """The indices of the nonzero entries, one row per entry (one column per axis)."""
    if all_known(a):
        return np.argwhere(a)
    a = _at_least_1d("argwhere", a)
    flat = _true_positions(_truth(a))
    if a.ndim == 1:
        return _np(np.reshape)(flat, (flat.shape[0], 1))
    return _np(np.stack)(_unravel(flat, a.shape), axis=1)


def where(condition, x=None, y=None):
    """``np.where(c, x, y)`` picks entries; ``np.where(c)`` is ``np.nonzero(c)``."""
    if x is None and y is None:
        return np_nonzero(condition)
    if x is None or y is None:
        raise UnsupportedError("np.where takes one argument or three", loc_of(condition))
    return np_where(condition, x, y)


def np_extract(condition, arr):
    """The entries of ``arr`` where ``condition`` is nonzero (both flattened): a gather."""
    if all_known(condition, arr):
        return np.extract(condition, arr)
    flat = _np(np.ravel)(as_array(arr))
    return record("take", flat, _checked_rows(np_flatnonzero(as_array(condition)), flat))


# ---- where values fall -------------------------------------------------------------------


def np_searchsorted(a, v, side="left", sorter=None):
    if all_known(a, v, sorter):
        return np.searchsorted(a, v, side=side, sorter=sorter)
    a = as_array(a)
    if side not in ("left", "right"):
        raise UnsupportedError(f"np.searchsorted with side={side!r}", loc_of(a, v))
    if ndim_of(a) != 1:
        raise ShapeError("np.searchsorted: the sorted array must be a vector", loc_of(a, v))
    if sorter is not None:
        a = record("take", a, _checked_rows(as_array(sorter), a))
    return record("searchsorted", a, as_array(v), side=side)


def np_digitize(x, bins, right=False):
    if all_known(x, bins):
        return np.digitize(x, bins, right)
    bins = as_array(bins)
    if ndim_of(bins) != 1:
        raise ShapeError("np.digitize: the bins must be a vector", loc_of(x, bins))
    x = as_array(x)
    if ndim_of(x) == 0:  # Numba's takes arrays: a vector of one
        return record("getitem", record("digitize", _np(np.stack)([x]), bins,
                                        right=bool(right)), 0, index_spec=("i",))
    return record("digitize", x, bins, right=bool(right))


def _int_vector(name, x):
    x = as_array(x)
    if not records(x):
        x = np.asarray(x)
    if ndim_of(x) != 1 or x.dtype.kind not in "iub":
        raise UnsupportedError(f"np.{name} of a vector of nonnegative integers", loc_of(x))
    return x if x.dtype.kind != "b" else record("cast", x, kind="i")


def np_bincount(x, weights=None, minlength=0):
    """Counts of each nonnegative integer in ``x``; with weights, the sum of the weights at
    its entries (a scatter-add, differentiable in the weights)."""
    if all_known(x, weights, minlength):
        return np.bincount(x, weights, minlength)
    x = _int_vector("bincount", x)
    if weights is None:
        return record("bincount", x, minlength)
    weights = as_array(weights)
    if ndim_of(weights) != 1:
        raise ShapeError("np.bincount: the weights must be a vector", loc_of(x, weights))
    if records(weights) and weights.dtype.kind != "f":
        weights = record("cast", weights, kind="f")
    return record("bincount", x, minlength, weights)


def _float(x):
    return record("cast", x, kind="f") if records(x) and x.dtype.kind != "f" else x


def _edges(flat, bins, value_range):
    """NumPy's equal bins: ``bins + 1`` edges from the data's minimum to its maximum (or
    ``range``), half a unit either side of a single value; the last edge is the maximum
    itself, as np.linspace makes it. Differentiable in the data through its extremes."""
    if value_range is None:
        lo, hi = _np(np.min)(flat), _np(np.max)(flat)
    else:
        lo, hi = (_float(v) for v in value_range)
        if all_known(lo, hi) and lo > hi:
            raise UnsupportedError("np.histogram: max must be larger than min in range=",
                                   loc_of(flat))
    same = lo == hi
    lo = np_where(same, lo - 0.5, lo) if records(same) else (lo - 0.5 if same else lo)
    hi = np_where(same, hi + 0.5, hi) if records(same) else (hi + 0.5 if same else hi)
    k = _np(np.arange)(bins + 1)
    inner = record("cast", k, kind="f") * ((hi - lo) / bins) + lo
    return np_where(k == bins, hi, inner), lo, hi


def _equal_bins_at(flat, edges, lo, hi, count):
    """Each value's bin among ``count`` equal bins from ``lo`` to ``hi`` (``edges``), from 1
    (0: outside the edges, or NaN), computed as NumPy's histogram computes it: ``(x - lo)``
    times ``count / (hi - lo)``, then moved by one where that lands beside the edge it should
    (rounding), so the bin is the one the edges say, as a binary search would find it, in a
    few operations per value instead of one branch per halving."""
    at = (flat - lo) * (count / (hi - lo))
    at = np_where(at >= 0.0, at, 0.0)  # below lo, and NaN: bin 0 (dropped below)
    at = record("cast", np_where(at < count, at, count - 1.0), kind="i")
    at = np_where(flat < record("take", edges, at), at - 1, at)
    above = record("logical_and", flat >= record("take", edges, at + 1), at != count - 1)
    at = np_where(above, at + 1, at)
    inside = record("logical_and", flat >= lo, flat <= hi)
    return np_where(inside, at + 1, 0)


def np_histogram(a, bins=10, range=None, density=None, weights=None):
    """Counts of the data in each bin (integers: no derivative, as in JAX) and the edges; with
    weights, the weights' sums (differentiable in the weights); with ``density``, the counts
    over the bins' widths, summing to one. A value equal to the last edge is in the last
    bin; values outside the edges (with ``range``) in none."""
    if all_known(a, bins, range, weights):
        return np.histogram(a, bins, range, density, weights)
    loc = loc_of(a, bins, weights)
    if isinstance(bins, str):
        raise UnsupportedError(f"np.histogram with bins={bins!r} (give a number of bins or "
                               "the edges)", loc)
    flat = _float(_np(np.ravel)(as_array(a)))
    if ndim_of(bins) == 0:
        if not (records(bins) and bins.dtype.kind == "i" or isinstance(bins, (int, np.integer))
                and not isinstance(bins, bool) and bins >= 1):
            raise UnsupportedError("np.histogram: bins must be a positive integer or the "
                                   "edges", loc)
        edges, lo, hi = _edges(flat, bins, range)
        count = bins
        at = _equal_bins_at(flat, edges, lo, hi, count)
    else:
        edges = _float(as_array(bins))
        if not records(edges) and np.any(np.diff(edges) < 0):
            raise UnsupportedError("np.histogram: bins must increase monotonically", loc)
        count = edges.shape[0] - 1 if records(edges) else len(edges) - 1
        # each value's bin, from 1 (0: below the first edge, count + 1: above the last)
        at = np_digitize(flat, edges)
        last = (edges[-1] if not records(edges)
                else record("getitem", edges, -1, index_spec=("i",)))
        at = np_where(flat == last, count, at)
    if weights is not None:
        weights = _float(_np(np.ravel)(as_array(weights)))
    full = np_bincount(at, weights, count + 2)
    hist = record("getitem", full, 1, count + 1, index_spec=(("s", True, True, False),))
    if density:
        widths = _np(np.diff)(edges)
        hist = _float(hist) / widths / _np(np.sum)(hist)
    return hist, edges


# ---- counts of distinct values -----------------------------------------------------------------


def np_unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
              *, equal_nan=True):
    """The distinct values in order: the sorted entries at the first of each run of equal
    ones (NaNs one value, with ``equal_nan``). Of floats, a gather: each value's gradient goes
    to the first of the entries equal to it."""
    if all_known(ar):
        return np.unique(ar, return_index, return_inverse, return_counts, axis,
                         equal_nan=equal_nan)
    if return_inverse or axis is not None:
        raise UnsupportedError("np.unique with return_inverse= or axis=", loc_of(ar))
    flat = _np(np.ravel)(ar) if ar.ndim != 1 else ar
    order = record("argsort", flat if flat.dtype.kind != "b" else record("cast", flat, kind="i"))
    ordered = record("take", flat, order)
    n = ordered.shape[0]
    previous = record("roll", ordered, 1)
    starts = record("logical_or", _np(np.arange)(n) == 0, record("ne", ordered, previous))
    if ordered.dtype.kind == "f" and equal_nan:  # a NaN after a NaN starts nothing
        both = record("logical_and", record("isnan", ordered), record("isnan", previous))
        starts = record("logical_and", starts, record("logical_or", record(
            "logical_not", both), _np(np.arange)(n) == 0))
    first = _true_positions(starts)
    values = record("take", ordered, first)
    if not (return_index or return_counts):
        return values
    out = [values]
    if return_index:
        out.append(record("take", order, first))
    if return_counts:
        ends = _np(np.concatenate)([first, _np(np.stack)([n])])
        out.append(_np(np.diff)(ends))
    return tuple(out)


# ---- membership and equality ---------------------------------------------------------------


def np_isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each entry of ``element`` equals some entry of ``test_elements``."""
    if all_known(element, test_elements):
        return np.isin(element, test_elements, assume_unique=assume_unique, invert=invert)
    element, tests = as_array(element), _np(np.ravel)(as_array(test_elements))
    if ndim_of(element) == 0:
        hit = _np(np.any)(element == tests)
    else:
        hit = _np(np.any)(_np(np.expand_dims)(element, -1) == tests, axis=-1)
    return _np(np.logical_not)(hit) if invert else hit


def _shapes_agree(a, b, broadcast):
    """Whether the shapes of ``a`` and ``b`` are equal (or, with ``broadcast``, broadcast
    against each other): a bool known while building, or a run-time one."""
    sa, sb = np.shape(a) if not records(a) else a.shape, np.shape(b) if not records(b) \
        else b.shape
    if not broadcast and len(sa) != len(sb):
        return False
    ok = True
    for da, db in zip(reversed(sa), reversed(sb)):
        same = da == db
        if broadcast:
            same = _np(np.logical_or)(same, _np(np.logical_or)(da == 1, db == 1))
        if not records(same) and not same:
            return False
        if records(same):
            ok = same if ok is True else record("logical_and", ok, same)
    return ok


def _comparable(x, ok):
    """``x``, or where the shapes do not agree (``ok`` false at run time), at most one entry
    of it along each axis: comparing those never fails, and their result is not used."""
    if ok is True or ndim_of(x) == 0:
        return x
    x = as_array(x)
    stops = [np_where(ok, n, record("minimum", n, 1)) for n in (x.shape if records(x)
                                                                else np.shape(x))]
    return record("getitem", x, *stops, index_spec=(("s", False, True, False),) * len(stops))


def _all_equal(a, b, broadcast, equal_nan=False):
    ok = _shapes_agree(a, b, broadcast)
    if ok is False:
        return False
    a, b = _comparable(a, ok), _comparable(b, ok)
    same = a == b
    if equal_nan:
        same = _np(np.logical_or)(same, _np(np.logical_and)(_np(np.isnan)(_float(a)),
                                                            _np(np.isnan)(_float(b))))
    every = _np(np.all)(same)
    return every if ok is True else record("logical_and", ok, every)


def np_array_equal(a1, a2, equal_nan=False):
    if all_known(a1, a2):
        return np.array_equal(a1, a2, equal_nan)
    return _all_equal(as_array(a1), as_array(a2), False, equal_nan)


def np_array_equiv(a1, a2):
    if all_known(a1, a2):
        return np.array_equiv(a1, a2)
    return _all_equal(as_array(a1), as_array(a2), True)


def _in_graph(x, *others):
    """``x``, a NumPy array made a constant of the graph that ``others`` are built in (to be
    joined with its values)."""
    builder = builder_of(*others)
    if records(x) or builder is None:
        return x
    return builder.sym(builder.constant_array(np.asarray(x)))


def _set_operation(name, combine):
    """``np.union1d``, ``intersect1d``, ``setdiff1d``, ``setxor1d`` of two vectors (flattened):
    ``combine(first, second)``, NumPy's own formula on them (NaNs compare as NumPy compares
    them); values read from the entries (a gather, as `np_unique`)."""
    fn = getattr(np, name)

    def f(ar1, ar2, *args, **kwargs):
        if all_known(ar1, ar2):
            return fn(ar1, ar2, *args, **kwargs)
        if args or any(kwargs.values()):
            raise UnsupportedError(f"np.{name} with {', '.join(kwargs) or 'more arguments'}",
                                   loc_of(ar1, ar2))
        ar1, ar2 = (_np(np.ravel)(_in_graph(as_array(a), ar1, ar2)) for a in (ar1, ar2))
        if ar1.dtype.kind != ar2.dtype.kind:
            ar1, ar2 = _float(ar1), _float(ar2)
        return combine(ar1, ar2)
    return f


def _after_first(x):
    return record("getitem", x, 1, index_spec=(("s", True, False, False),))


def _before_last(x):
    return record("getitem", x, -1, index_spec=(("s", False, True, False),))


def _sorted_uniques(ar1, ar2):
    both = _np(np.concatenate)([np_unique(ar1), np_unique(ar2)])
    return record("take", both, record("argsort", both))


def _intersect(ar1, ar2):
    """The values both hold: those equal to the next one, once both's are sorted together."""
    aux = _sorted_uniques(ar1, ar2)
    first = _before_last(aux)
    return record("take", first, _true_positions(record("eq", _after_first(aux), first)))


def _setxor(ar1, ar2):
    """The values one holds: those equal to neither neighbour, once sorted together."""
    aux = _sorted_uniques(ar1, ar2)
    k = _np(np.arange)(aux.shape[0])
    after = record("logical_or", k == 0, record("ne", aux, record("roll", aux, 1)))
    before = record("logical_or", k == aux.shape[0] - 1, record("ne", aux, record("roll", aux,
                                                                                  -1)))
    return record("take", aux, _true_positions(record("logical_and", after, before)))


def _setdiff(ar1, ar2):
    first = np_unique(ar1)
    return record("take", first, _true_positions(np_isin(first, ar2, invert=True)))


# ---- triangles, partitions -----------------------------------------------------------------


def _triangle_indices(name, lower):
    def f(n, k=0, m=None):
        if all_known(n, k, m):
            return getattr(np, name)(n, k, m)
        m = n if m is None else m
        rows = _np(np.expand_dims)(_np(np.arange)(n), 1)
        offset = _np(np.arange)(m) - rows  # column minus row: k on the k-th diagonal
        mask = offset <= k if lower else offset >= k
        flat = _true_positions(mask)
        return record("floordiv", flat, m), record("mod", flat, m)
    return f


def _triangle_indices_from(name):
    def f(arr, k=0):
        if ndim_of(arr) != 2:
            raise UnsupportedError(f"np.{name}_from of a matrix", loc_of(arr))
        if all_known(arr):
            return getattr(np, f"{name}_from")(arr, k)
        return NUMPY[getattr(np, name)](arr.shape[0], k, arr.shape[1])
    return f


def np_argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition a vector around its ``kth`` entries: the sorting order (stable)
    is one (NumPy leaves the order within each part unspecified)."""
    if all_known(a):
        return np.argpartition(a, kth, axis=axis, kind=kind, order=order)
    if ndim_of(a) != 1 or axis is None or norm_axis(axis, 1, loc_of(a)) != 0 or order:
        raise UnsupportedError("np.argpartition of a vector (axis=-1 or 0)", loc_of(a))
    return record("argsort", a)


def np_partition(a, kth, axis=-1, kind="introselect", order=None):
    """A vector partitioned around its ``kth`` entries: sorted is one such order (NumPy leaves
    the order within each part unspecified), a gather whose gradient goes back to each
    entry."""
    if all_known(a):
        return np.partition(a, kth, axis=axis, kind=kind, order=order)
    return record("take", a, np_argpartition(a, kth, axis, kind, order))


def np_diag_indices(n, ndim=2):
    """(arange(n),) * ndim: the main diagonal's positions, ``n`` known at run time too."""
    if all_known(n, ndim):
        return np.diag_indices(n, ndim)
    if not isinstance(ndim, int):
        raise UnsupportedError("np.diag_indices with ndim known while building", loc_of(n))
    return (_np(np.arange)(n),) * ndim


def np_diag_indices_from(arr):
    if all_known(arr):
        return np.diag_indices_from(arr)
    if ndim_of(arr) < 2:
        raise UnsupportedError("np.diag_indices_from of an array of two axes or more",
                               loc_of(arr))
    return np_diag_indices(arr.shape[0], ndim_of(arr))


class OuterIndex(tuple):
    """``np.ix_(rows, cols)``: NumPy's two index arrays of shapes (n, 1) and (1, m), which
    index the block of a matrix at those rows and columns (``K[np.ix_(d, d)] += ke``); the
    build reads ``vectors``, the two integer vectors, for the block's gather or its write
    (`frontend.build_index`)."""

    vectors: tuple

    def __new__(cls, rows, cols):
        out = super().__new__(cls, (_np(np.expand_dims)(rows, 1), _np(np.expand_dims)(cols, 0))
                              if records(rows) or records(cols) else
                              (np.asarray(rows)[:, None], np.asarray(cols)[None, :]))
        out.vectors = (rows, cols)
        return out


def np_ix(*args):
    """``np.ix_`` of two integer or boolean vectors (a list, a tuple or an array each; a
    boolean one stands for the positions of its True entries, as NumPy's): an `OuterIndex`."""
    vectors = [as_array(a) for a in args]
    if len(vectors) != 2 or any(ndim_of(v) != 1 for v in vectors):
        raise UnsupportedError("np.ix_ of other than two vectors (the rows and columns of a "
                               "matrix's block are supported)", loc_of(*vectors))
    for k, v in enumerate(vectors):
        kind = v.type.kind if records(v) else np.asarray(v).dtype.kind
        if kind == "b":  # K[np.ix_(free, free)]: the free rows and columns
            vectors[k] = np_nonzero(v)[0]
        elif kind not in "iu":
            raise UnsupportedError("np.ix_ of a float vector (integer or boolean rows and "
                                   "columns are supported)", loc_of(*vectors))
    return OuterIndex(*vectors)


def np_compress(condition, a, axis=None):
    """``np.compress``: the slices of ``a`` along ``axis`` (its flattened entries without one)
    at the True entries of the vector ``condition`` (a shorter one leaves the rest out, as
    NumPy's), a gather at their positions."""
    if all_known(condition, a):
        return np.compress(condition, a, axis)
    if ndim_of(condition) != 1:
        raise UnsupportedError("np.compress with a condition other than a vector",
                               loc_of(condition, a))
    a = as_array(a)
    if axis is None:
        a, axis = (_np(np.ravel)(a) if ndim_of(a) != 1 else a), 0
    axis = norm_axis(axis, ndim_of(a), loc_of(a))
    moved = _np(np.moveaxis)(a, axis, 0) if axis else a
    at = np_nonzero(condition)[0]
    positions = record("index_positions", at if records(at) else as_array(at), moved,
                       kind="rows")  # (checked at run time: one past the axis raises)
    rest = tuple(moved.shape[1:])
    flat = _np(np.reshape)(moved, (moved.shape[0], -1)) if len(rest) > 1 else moved
    taken = record("take", flat, positions)
    if len(rest) > 1:
        taken = _np(np.reshape)(taken, (positions.shape[0], *rest))
    return _np(np.moveaxis)(taken, 0, axis) if axis else taken


def compress_method(a, condition, axis=None):
    """``a.compress(condition, axis)``: `np_compress`."""
    return np_compress(condition, a, axis)


NUMPY.update({
    np.compress: np_compress, np.ndarray.compress: compress_method,
    np.ix_: np_ix,
    np.diag_indices: np_diag_indices, np.diag_indices_from: np_diag_indices_from,
    np.nonzero: np_nonzero, np.flatnonzero: np_flatnonzero, np.argwhere: np_argwhere,
    np.where: where, np.extract: np_extract,
    np.searchsorted: np_searchsorted, np.digitize: np_digitize, np.bincount: np_bincount,
    np.histogram: np_histogram, np.unique: np_unique,
    np.isin: np_isin, np.array_equal: np_array_equal, np.array_equiv: np_array_equiv,
    np.tril_indices: _triangle_indices("tril_indices", True),
    np.triu_indices: _triangle_indices("triu_indices", False),
    np.tril_indices_from: _triangle_indices_from("tril_indices"),
    np.triu_indices_from: _triangle_indices_from("triu_indices"),
    np.argpartition: np_argpartition, np.partition: np_partition,
    np.union1d: _set_operation("union1d", lambda a, b: np_unique(_np(np.concatenate)([a, b]))),
    np.intersect1d: _set_operation("intersect1d", _intersect),
    np.setdiff1d: _set_operation("setdiff1d", _setdiff),
    np.setxor1d: _set_operation("setxor1d", _setxor),
})
