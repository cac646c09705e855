"""Indexing: basic reads and writes (``getitem``, ``setitem``, and ``add_at``, the adjoint of a
read), reads of rows by an integer vector (``take``, and ``take_add``, its adjoint), and the
positions that NumPy's advanced indices name (``index_positions``: the rows of ``x[idx]``, the
entries of ``x[mask]``, of ``a[rows, cols]`` and of ``np.take_along_axis``), checked and
counted from the front, which reads (a ``take``) and writes (a loop of ``setitem``) index by.

An index is an ``index_spec`` parameter plus atoms: items ``'i'`` (an integer atom), ``':'``
and ``('s', has_start, has_stop, has_step)`` (a slice whose present parts are atoms), the
atoms following the array operands (`core.ops.Flags.index_from`). `index_value` turns a spec
and its atoms into a NumPy index, `index_source` into the Python text ``x[...]``. Index atoms
take no gradient (``None`` in the rules). The adjoint of a read adds ``g`` into the entries
read (the reverse transform does so in place, into an adjoint array it owns; the rules below
are what the tape runs); a write's adjoint sends the written entries' gradient to the value
written and none to the entries it replaced.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.types import Type
from jitgrad.prims.primitive import defjvp, defvjp, primitive, same_type, unbroadcast


def index_source(x: str, spec: tuple, args: list[str]) -> str:
    """``x[...]`` for an index spec: items 'i' (an atom), 's' + 3 flags (slice parts), ':'."""
    parts, k = [], 0
    for item in spec:
        if item == "i":
            parts.append(args[k])
            k += 1
        elif item == ":":
            parts.append(":")
        else:
            _, has_start, has_stop, has_step = item
            bits = []
            for present in (has_start, has_stop, has_step):
                if present:
                    bits.append(args[k])
                    k += 1
                else:
                    bits.append("")
            s = f"{bits[0]}:{bits[1]}" + (f":{bits[2]}" if has_step else "")
            parts.append(s)
    return f"{x}[{', '.join(parts)}]"


def index_value(spec, vals):
    out, k = [], 0
    for item in spec:
        if item == "i":
            out.append(int(vals[k]))
            k += 1
        elif item == ":":
            out.append(slice(None))
        else:
            parts = []
            for present in item[1:]:
                parts.append(int(vals[k]) if present else None)
                k += int(present)
            out.append(slice(*parts))
    return tuple(out)


def _getitem_type(ts, p):
    spec = p["index_spec"]
    ints = sum(1 for s in spec if s == "i")
    return Type(ts[0].kind, ts[0].ndim - ints)


# A full-array result of basic indexing is a view: callers that keep it get a copy only where
# the analysis in reverse.py says the storage is written later.
getitem = primitive("getitem", lambda x, *idx, index_spec: x[index_value(index_spec, idx)],
                    _getitem_type, view=True, index_from=1, recomputable=True)


def _setitem_impl(x, v, *idx, index_spec, fits=False):
    x = np.array(x, dtype=float)
    x[index_value(index_spec, idx)] = v
    return x


# ``setitem`` returns the array it wrote into (same storage): ``y[i] = v`` becomes
# ``y_1 = setitem(y, v, i)`` in the IR and ``y[i] = v`` in the generated source. ``fits``: the
# builder assumed, and checks, that ``v`` has the slot's sizes (`build_writes.write_fits`), so
# the slot's adjoint is ``v``'s as it is.
setitem = primitive("setitem", _setitem_impl, lambda ts, p: ts[0],
                    writes_into_first=True, effects=True, index_from=2, same_shape_as=0)

# ``add_at`` is the adjoint of a read: ``g_x[idx] += v`` on an adjoint array jitgrad owns.
add_at = primitive("add_at", lambda x, v, *idx, index_spec: np.add.at(
    x, index_value(index_spec, idx), v) or x, lambda ts, p: ts[0], differentiable=False,
    writes_into_first=True, effects=True, accumulates=True, adds_into=True, index_from=2)


def _getitem_vjp(g, ans, x, *idx, index_spec):
    out = np.zeros(np.shape(x))
    return add_at(out, g, *idx, index_spec=index_spec)


def _setitem_x_vjp(g, ans, x, v, *idx, index_spec, fits=False):
    out = np.array(g, dtype=float)
    out[index_value(index_spec, idx)] = 0.0
    return out


def _setitem_v_vjp(g, ans, x, v, *idx, index_spec, fits=False):
    slot = getitem(g, *idx, index_spec=index_spec)
    return slot if fits else unbroadcast(slot, v)


defvjp("getitem", _getitem_vjp, *([None] * 8))
defvjp("setitem", _setitem_x_vjp, _setitem_v_vjp, *([None] * 8))
defjvp("getitem", lambda t, ans, x, *idx, index_spec: getitem(t, *idx, index_spec=index_spec),
       *([None] * 8))

# ----------------------------------------------------------------------------- rows by index

# ``x[idx]`` with a 1-D integer array: the rows of x at idx (Numba allows one such index).
take = primitive("take", lambda x, idx: x[np.asarray(idx)], same_type)


def _take_add_impl(g, idx, n):
    g = np.asarray(g)
    out = np.zeros((int(n),) + g.shape[1:], dtype=g.dtype)
    np.add.at(out, np.asarray(idx), g)  # repeated rows add up; negative ones count from the end
    return out


# The adjoint of ``take``: zeros of n rows, with row k of g added at row idx[k] (a scatter-add,
# O(len(idx)) work; negative indices count from the end and repeated ones add up, as x[idx]
# reads them).
take_add = primitive("take_add", _take_add_impl, same_type)


def _take_vjp(g, ans, x, idx):
    """x[idx] read rows of x: each row's gradient is the sum of g's rows that read it
    (repeated indices add up; a negative index is the row it reads, counted from the end)."""
    return take_add(g, idx, np.shape(x)[0])


defvjp("take", _take_vjp, None)
defvjp("take_add", lambda g, ans, rows, idx, n: take(g, idx), None, None)
defjvp("take", lambda t, ans, x, idx: take(t, idx), None)
defjvp("take_add", lambda t, ans, g, idx, n: take_add(t, idx, n), None, None)


# ----------------------------------------------------------------------------- counts by index


def _bincount_impl(idx, n, w=None):
    return np.bincount(np.asarray(idx), weights=w, minlength=int(n))


# ``np.bincount(idx, weights, minlength=n)``: entry k is the count of idx's entries equal to k
# (integers, no derivative), or with weights the sum of the weights at those entries, a
# scatter-add: its adjoint reads g at idx (a gather), its tangent is the bincount of the
# tangents. Its length, max(idx) + 1 or n, is known at run time only; idx must be nonnegative
# and as long as the weights (NumPy's and Numba's own checks).
bincount = primitive("bincount", _bincount_impl,
                     lambda ts, p: Type("f" if len(ts) > 2 else "i", 1))
defvjp("bincount", None, None, lambda g, ans, idx, n, w: take(g, idx))
defjvp("bincount", None, None, lambda t, ans, idx, n, w: bincount(idx, n, t))

# ----------------------------------------------------------------------------- advanced indices


def _rows_at(idx, n):
    idx = np.asarray(idx, dtype=np.int64)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError("index out of bounds")
    return np.where(idx < 0, idx + n, idx)


def _positions_impl(*ins, kind, axis=0):
    """The positions an advanced index names (a 1-D int64 array, counted from the front):
    ``rows``: (idx, x) the rows x[idx] reads; ``mask``: (mask, x) the flat positions of the
    entries x[mask] reads (mask of x's shape), ``mask_rows``: (mask, x) the rows (a 1-D mask
    over x's rows); ``pairs``: (rows, cols, x) the flat positions of x[rows, cols] in x's first
    two axes; ``along``: (idx, x) the flat positions np.take_along_axis(x, idx, axis) reads,
    in idx's order, or (idx, values, x), checking that values has idx's shape. An index out of bounds raises IndexError, shapes that differ IndexError
    (masks) or ValueError, as NumPy does."""
    *idx, x = ins
    shape = np.shape(x)
    if kind == "rows":
        return _rows_at(idx[0], shape[0])
    if kind in ("mask", "mask_rows"):
        mask = np.asarray(idx[0])
        want = shape if kind == "mask" else shape[:1]
        if mask.shape != want:
            raise IndexError("boolean index did not match indexed array")
        return np.flatnonzero(mask)
    if kind == "pairs":
        rows, cols = (np.asarray(i) for i in idx)
        if rows.shape != cols.shape:
            raise ValueError("shape mismatch: indexing arrays could not be broadcast together")
        return _rows_at(rows, shape[0]) * shape[1] + _rows_at(cols, shape[1])
    if len(idx) == 2 and np.shape(idx[1]) != np.shape(idx[0]):  # along, with the values
        raise ValueError("np.put_along_axis: the values must have the index's shape")
    idx = np.asarray(idx[0])  # along
    if idx.ndim != len(shape) or any(idx.shape[d] != shape[d] for d in range(len(shape))
                                     if d != axis):
        raise ValueError("np.take_along_axis: the index must have the array's shape except "
                         "along the axis")
    coords = list(np.indices(idx.shape))
    coords[axis] = _rows_at(idx, shape[axis])
    return np.ravel_multi_index(tuple(c.ravel() for c in coords), shape)


# Integers to index with: no derivative. ``x``, the last input, is read for its shape alone;
# ``shape_only`` names positions, so it says {2}: x of the three-input forms, (rows, cols, x)
# and (idx, values, x) (`values` is read for its shape too, but counting it read costs
# nothing). In the two-input forms x is input 1 and counts as read, which only keeps more;
# {1, 2} left the pairs' `cols` unfilled (the contents pass made it `empty`).
index_positions = primitive("index_positions", _positions_impl, lambda ts, p: Type("i", 1),
                            differentiable=False, zero_tangent=True, shape_only={2})


def strided_positions_impl(x, *sizes, ndim, distinct=False):
    """The flat positions (C order) in ``x``'s memory of the entries of
    ``np.lib.stride_tricks.as_strided(x, shape, strides)``, ``sizes`` the ``ndim`` sizes then
    the ``ndim`` strides in bytes. Checked as NumPy cannot check them: ``x`` C-contiguous, each
    stride a whole number of entries, every position inside ``x`` (else ValueError or
    IndexError); ``distinct``: for a write through the view, no two entries at one position
    (overlapping windows: ValueError). The backend's helper is `runtime_index.strided_positions`."""
    x = np.asarray(x)
    shape, strides = sizes[:ndim], sizes[ndim:]
    if not x.flags.c_contiguous:
        raise ValueError("as_strided of an array that is not C-contiguous")
    steps = []
    for s in strides:
        if s % x.itemsize:
            raise ValueError("as_strided: a stride that is not a whole number of entries")
        steps.append(s // x.itemsize)
    out = np.zeros(shape, dtype=np.int64)
    for k in range(ndim):
        out += np.arange(shape[k]).reshape((-1,) + (1,) * (ndim - 1 - k)) * steps[k]
    out = out.ravel()
    if out.size and (out.min() < 0 or out.max() >= x.size):
        raise IndexError("as_strided: the shape and strides reach outside the array")
    if distinct and np.unique(out).size != out.size:
        raise ValueError("writing through an as_strided view whose entries overlap (two of "
                         "them at one place in memory) is not supported")
    return out


# ``as_strided(x, shape, strides)``: integers to read ``x``'s flattened entries at (a gather,
# `lang.numpy_sorting.as_strided`); no derivative.
strided_positions = primitive("strided_positions", strided_positions_impl,
                              lambda ts, p: Type("i", 1), differentiable=False,
                              zero_tangent=True)
