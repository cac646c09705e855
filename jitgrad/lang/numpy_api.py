"""The NumPy, `math` and builtin surface that user code calls on symbolic values.

It fills `symbolic.NUMPY` (a NumPy function or ufunc -> its handler) and `symbolic.METHODS`,
and holds `MATH` (a `math` function -> the primitive it records). A handler normalises NumPy's
arguments (axes, shapes, dtypes, keywords) and records primitives of `jitgrad.prims` through
`record`; a function NumPy has that maps onto existing primitives (``log2(x) = log(x) / log(2)``)
is written here rather than given a primitive of its own.

The same handlers serve `jitgrad.tape`: there ``records(x)`` is true of a `tape.Tensor`, and
`record` runs the primitive's NumPy ``impl``.

Guarantees: a keyword or form outside what a handler understands raises `UnsupportedError`
with the user's line, never a silently different result.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator

import numpy as np

from jitgrad.core.errors import ShapeError, UnsupportedError
from jitgrad.core.ir import dims_of
from jitgrad.core.types import Type
from jitgrad.lang import complex_pairs, numpy_written
from jitgrad.lang.numpy_args import numpy_order, records_inside
from jitgrad.lang.symbolic import (
    METHODS,
    NUMPY,
    Sym,
    builder_of,
    current_builder,
    loc_of,
    ndim_of,
    record,
    records,
    result_dims,
    written,
)
from jitgrad.prims import primitives
from jitgrad.prims.primitives import MAX_STACK


def norm_axis(axis, ndim, loc):
    if axis is None:
        return None
    if isinstance(axis, Sym):
        raise UnsupportedError("the axis must be a constant integer", loc)
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(norm_axis(a, ndim, loc) for a in axis))
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise UnsupportedError(f"the axis must be an integer, not {axis!r}", loc)
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"axis {axis} is out of bounds for an array of dimension {ndim}", loc)
    return axis % ndim


def np_reduce(op, x, axis=None, keepdims=False, **unsupported):
    if unsupported:
        raise UnsupportedError(f"np.{op}(..., {', '.join(unsupported)}=) is not supported",
                               loc_of(x))
    if not records(x):
        return getattr(np, op)(x, axis=axis, keepdims=keepdims)
    axis = norm_axis(axis, x.ndim, loc_of(x))
    if x.ndim == 0:
        return x
    if axis is not None and set(axis if isinstance(axis, tuple) else (axis,)) == set(
            range(x.ndim)):
        axis = None  # every axis (np.sum(x, axis=0) of a vector): one reduction to a scalar
    if isinstance(axis, tuple):  # several axes: one at a time, highest first
        for a in sorted(axis, reverse=True):
            x = record(op, x, axis=a, keepdims=bool(keepdims))
        return x
    return record(op, x, axis=axis, keepdims=bool(keepdims))


def np_sum(x, axis=None, keepdims=False, **kw):
    return np_reduce("sum", x, axis, keepdims, **kw)


def np_mean(x, axis=None, keepdims=False, **kw):
    if not records(x):
        return np.mean(x, axis=axis, keepdims=keepdims)
    total = np_sum(x, axis, keepdims, **kw)
    if x.ndim == 0:
        return total
    axis = norm_axis(axis, x.ndim, loc_of(x))
    if axis is None:
        count = x.size
    else:
        count = 1
        for a in axis if isinstance(axis, tuple) else (axis,):
            count = count * x.shape[a]
    return total / count


def matmul(a, b):
    na, nb = ndim_of(a), ndim_of(b)
    if na > 2 and nb == 2:
        # a stack of matrices times one matrix is one matrix product (one BLAS call, as is
        # its adjoint): the stack's rows (every axis but the last) times b, reshaped back
        rows = a.shape[:-1]
        flat = record("matmul", np_reshape(a, (-1, a.shape[-1])), b)
        return np_reshape(flat, rows + (b.shape[-1],))
    if na >= 2 and nb >= 2 and max(na, nb) > 2:
        # stacks of matrices, broadcast over the leading axes: sum_k a[..., i, k, None] *
        # b[..., None, k, j] (Numba's @ takes 2-D operands only)
        terms = np_expand_dims(a, -1) * np_expand_dims(b, -3)
        return np_sum(terms, axis=-2)
    if na == 1 and nb > 2:  # a vector times a stack: sum_k a[k, None] * b[..., k, j]
        return np_sum(np_expand_dims(a, -1) * b, axis=-2)
    if nb == 1 and na > 2:  # a stack times a vector: sum_k a[..., i, k] * b[k]
        return np_sum(a * b, axis=-1)
    if na == 0 or nb == 0 or na > 2 or nb > 2:
        raise UnsupportedError(f"matrix product of operands of rank {na} and {nb} (jitgrad "
                               "supports 1-D and 2-D operands, and stacks of matrices)",
                               loc_of(a, b))
    return record("matmul", a, b)


def np_transpose(x, axes=None):
    if axes is not None:
        axes = tuple(int(a) for a in axes)
        if axes == tuple(range(len(axes))):
            return x
        if ndim_of(x) == 2 or axes == tuple(reversed(range(len(axes)))):
            axes = None
    return record("transpose", x, axes=axes)


def np_reshape(x, shape, order="C"):
    if order == "F":  # Fortran order: the C-order reshape of the axes reversed, reversed back
        shape = shape if isinstance(shape, tuple) else (shape,)
        return np_transpose(np_reshape(np_transpose(x), tuple(reversed(shape))))
    if order != "C":
        raise UnsupportedError(f"np.reshape with order={order!r} (C or F)", loc_of(x))
    if isinstance(shape, list):
        shape = tuple(shape)
    elif not isinstance(shape, tuple) and ndim_of(shape) == 1:
        # sizes held in an integer array (`s = np.asarray(a.shape); s[0] = 1`): its entries
        n = builder_of(shape).size_class(dims_of(shape.atom)[0]) if records(shape) else \
            len(shape)
        if not isinstance(n, int):
            raise UnsupportedError("np.reshape to sizes held in an array whose length is known "
                                   "only at run time: pass a tuple of sizes", loc_of(x, shape))
        shape = tuple(record("getitem", shape, i, index_spec=("i",)) for i in range(n))
    if not isinstance(shape, tuple):
        shape = (shape,)
    if any(isinstance(d, int) and d == -1 for d in shape):
        known = 1
        for d in shape:
            if not (isinstance(d, int) and d == -1):
                known = d if isinstance(known, int) and known == 1 else known * d
        shape = tuple(x.size // known if (isinstance(d, int) and d == -1) else d for d in shape)
    return record("reshape", x, *shape)


def np_reshape_like(x, like):
    return record("reshape_like", x, like)


def np_cast(x, dtype):
    kind = np.dtype(dtype).kind
    kind = {"u": "i"}.get(kind, kind)
    if kind == "c" and np.dtype(dtype) == np.complex128:  # h.astype(complex): a new array,
        return complex_pairs.pair(record("cast", x, kind="f"), 0.0)  # its imaginary part 0
    if kind not in "fib":
        raise UnsupportedError(f"conversion to {dtype}", loc_of(x))
    return record("cast", x, kind=kind)


def _alloc(name):
    def alloc(shape, dtype=float, order="C", **kw):
        if order not in ("C", "F", "A", "K"):  # (the layout: the same values either way)
            raise UnsupportedError(f"np.{name}(..., order={order!r}) is not an order")
        if kw:
            raise UnsupportedError(f"np.{name}(..., {', '.join(kw)}=) is not supported")
        dims = shape if isinstance(shape, (tuple, list)) else (shape,)
        kind = np.dtype(dtype).kind
        if kind == "c":  # a complex array: its two float parts (`complex_pairs`), which
            # a write ``z[i] = w`` writes each (`frontend.build_writes.write_complex`)
            return complex_pairs.Complex(apply_alloc(name, dims, "f"), apply_alloc(
                "empty" if name == "empty" else "zeros", dims, "f"))
        return apply_alloc(name, dims, kind)
    return alloc


def apply_alloc(name, dims, kind, fill=None):
    if not dims:  # np.ones(x.shape) of a number x: a number, as jitgrad holds a 0-d array
        value = fill if fill is not None else {"ones": 1}.get(name, 0)
        return value if records(value) else {"f": float, "i": int, "b": bool}[kind](value)
    builder = builder_of(*dims, fill) or current_builder()
    atoms = [builder.atom(d) for d in dims]
    if any(a.type.kind != "i" or a.type.ndim for a in atoms):
        raise UnsupportedError("array sizes must be integers", builder.loc)
    if fill is not None:
        name, atoms, params = "full", [builder.atom(fill)] + atoms, {}
        out = builder.emit(name, atoms, params, Type(atoms[0].type.kind, len(dims)))
    else:
        params = {"kind": kind}
        out = builder.emit(name, atoms, params, Type(kind, len(dims)))
    dims = result_dims(primitives.PRIMITIVES[name], atoms, params, out.type)
    out.dims = tuple((out, k) if t is None else t for k, t in enumerate(dims))  # (own sizes)
    return builder.sym(out)


def np_full(shape, fill_value, dtype=None):
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if dtype is not None and np.dtype(dtype).kind == "f":
        if not records(fill_value):
            fill_value = float(fill_value)
        elif fill_value.type.kind != "f":  # a run-time integer, as a float
            fill_value = np_cast(fill_value, float)
    return apply_alloc("full", dims, "f", fill=fill_value)


def _kind_of(dtype, x) -> str:
    kind = {"u": "i"}.get(np.dtype(dtype).kind, np.dtype(dtype).kind)
    if kind not in "fib":
        raise UnsupportedError(f"an array of dtype {np.dtype(dtype)} (jitgrad's arrays are "
                               "float, integer or bool)", loc_of(x))
    return kind


def _like(name):
    def like(x, dtype=None, order="K", subok=True, shape=None):
        if shape is not None:  # astropy's np.empty_like(a, shape=x.shape, dtype=x.dtype)
            if dtype is None:
                dtype = x.dtype if records(x) else np.asarray(x).dtype
            return NUMPY[np.ones if name == "ones_like" else np.zeros](shape, dtype=dtype)
        if dtype is not None and np.dtype(dtype).kind == "c" and records(x):  # (a complex
            return NUMPY[getattr(np, name[:-5])](tuple(x.shape), dtype=complex)  # array)
        if dtype is not None and np.dtype(dtype).kind != "f":  # zeros (ones) of x's shape
            kind = _kind_of(dtype, x)
            if not records(x):
                return getattr(np, name)(x, dtype=dtype)
            return apply_alloc(name.removesuffix("_like"), tuple(x.shape), kind) if x.ndim \
                else {"i": 0, "b": False}[kind] + (name == "ones_like")
        if not records(x) or x.ndim == 0:
            return 0.0 if name == "zeros_like" else 1.0
        return record(name, x)
    return like


def np_copy(x):
    return record("copy", x) if records(x) else np.array(x, copy=True)


def np_where(condition, x, y):
    return record("where", condition, x, y)


def np_expand_dims(x, axis):
    axis = int(axis)
    axis = axis % (ndim_of(x) + 1)
    return record("expand_dims", x, axis=axis)


def np_clip(x, a_min=None, a_max=None, **kw):
    lo, hi = kw.pop("min", a_min), kw.pop("max", a_max)
    if kw:
        raise UnsupportedError(f"np.clip(..., {', '.join(kw)}=) is not supported", loc_of(x))
    if lo is not None:
        x = record("maximum", x, lo)
    return x if hi is None else record("minimum", x, hi)


def np_power(x, y):
    if not records(y) and isinstance(y, (int, float)) and not isinstance(y, bool) and y == 2:
        return record("square", x)  # x * x: cheaper than pow, and so is its derivative
    return record("pow", x, y)


def record_even_on_numbers(name, *args, **params):
    """Apply a primitive that creates an array even when no argument is symbolic
    (``np.arange(5)``): it is recorded in the current graph, not computed while building."""
    if any(records(a) for a in args) or current_builder() is None:
        return record(name, *args, **params)
    return current_builder().apply(primitives.PRIMITIVES[name], list(args), params)


def as_float(x):
    if records(x):
        return x if x.dtype.kind == "f" else record("cast", x, kind="f")
    return float(x)


# -- construction ------------------------------------------------------------------------


def np_empty_like(x, dtype=None, order="K", subok=True, shape=None):
    return _like("zeros_like")(x, dtype, shape=shape)  # any contents will do: zeros


def np_full_like(x, fill_value, dtype=None):
    if dtype is not None and np.dtype(dtype).kind != "f":
        kind = _kind_of(dtype, x)
        if records(fill_value) or not records(x) or not x.ndim:
            raise UnsupportedError("np.full_like with a non-float dtype, of an array, with a "
                                   "constant fill", loc_of(x))
        fill = {"i": int, "b": bool}[kind](fill_value)
        return apply_alloc("full", tuple(x.shape), kind, fill=fill)
    if not records(x):
        return np.full_like(x, fill_value, dtype=float)
    fill = as_float(fill_value)
    if x.ndim == 0:
        return fill
    return np_full(x.shape, fill) if isinstance(x, Sym) else np.full(x.shape, fill)


def _holds(obj, kinds) -> bool:
    return isinstance(obj, kinds) or isinstance(obj, (list, tuple)) and any(
        _holds(v, kinds) for v in obj)


def _holds_complex(obj) -> bool:
    return _holds(obj, (complex, np.complexfloating))


def _holds_recorded(obj) -> bool:
    return records(obj) or isinstance(obj, (list, tuple)) and any(map(_holds_recorded, obj))


def np_array(obj, dtype=None, *, copy=True, **kw):
    # (copy: the result is always new memory, as with copy=True; copy=None or False allow it)
    if kw.get("order", "K") in ("C", "K", "A"):  # memory order: the values are the same
        kw.pop("order", None)  # (QuantEcon's np.array(A, dtype=float, copy=..., order='C'))
    if not kw and dtype is not None and np.dtype(dtype).kind in "iub":
        # np.array([1, 3], dtype=np.int32): integers or booleans (of 64 bits, as jitgrad's)
        if not _holds_recorded(obj):
            return np.array(obj, dtype=np.int64 if np.dtype(dtype).kind in "iu" else bool)
        return np_cast(np_array(obj), dtype)
    if not kw and dtype is not None and np.dtype(dtype) == np.complex128:
        # np.asarray(H, dtype=complex) (QuTiP's Qobj): of numbers known while building,
        # NumPy's; else the real values as complex ones, imaginary part 0 (`complex_pairs`)
        if not _holds_recorded(obj):
            return np.array(obj, dtype=complex)
        return complex_pairs.array(obj, dtype)
    if kw or (dtype is not None and np.dtype(dtype).kind != "f"):
        raise UnsupportedError("np.array() with arguments other than a float dtype",
                               loc_of(obj))
    if records(obj) and obj.dtype.kind == "b" and dtype is None:
        return np_copy(obj) if obj.ndim else obj  # a mask stays one (MetPy's np.array(x <= 0))
    if records(obj):
        return as_float(np_copy(obj)) if obj.ndim else as_float(obj)
    if not isinstance(obj, (list, tuple)):
        return np.array(obj, dtype=float) if dtype is not None else np.array(obj)
    if not obj:  # np.asarray([]): an empty vector of floats, as NumPy's
        return np.zeros(0)
    if not _holds_recorded(obj) and _holds_complex(obj):  # tmm's array([1, 2.2 + 0.01j]):
        return np.array(obj, dtype=dtype)  # NumPy's complex array, known while building
    if _holds(obj, str):
        raise UnsupportedError("np.array of strings (jitgrad's arrays hold numbers: map the "
                               "letters to numbers first, {'A': 0, 'C': 1, ...}[ch])",
                               loc_of(obj))
    stacked = np_stack([np_array(v) if isinstance(v, (list, tuple)) else v for v in obj])
    return stacked if dtype is None else as_float(stacked)  # a float dtype, as NumPy's


def _is_int(a) -> bool:
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


def np_stack(arrays, axis=0):
    arrays = list(arrays)
    loc = loc_of(*arrays)
    if axis != 0:
        raise UnsupportedError("np.stack along an axis other than 0", loc)
    if not arrays or len(arrays) > MAX_STACK:
        raise UnsupportedError(f"np.array/np.stack of 1 to {MAX_STACK} entries", loc)
    if len({ndim_of(a) for a in arrays}) != 1:
        raise UnsupportedError("np.array/np.stack of entries of different ranks", loc)
    out = record_even_on_numbers("stack", *(a if records(a) or ndim_of(a) or _is_int(a)
                                             else float(a) for a in arrays))
    if isinstance(out, Sym) and not any(records(a) for a in arrays):
        out.builder.known_values[out.atom] = np.array(arrays)  # np.array([1.0, 2.0])
    return out


def np_eye(n, M=None, k=0, dtype=float):
    if M is not None or k != 0 or np.dtype(dtype).kind != "f":
        raise UnsupportedError("np.eye with arguments other than N", loc_of(n))
    return record_even_on_numbers("eye", n)


# -- elementwise functions written with other primitives ------------------------------------


def _through(np_fn, build):
    """``np_fn`` on plain values, ``build(x)`` (existing primitives) on recorded ones and on
    lists or tuples that hold some (``np.radians([alpha, beta, gamma])``: their array)."""
    return lambda x: build(x) if records(x) else \
        build(NUMPY[np.array](x)) if records_inside(x) else np_fn(x)


_LOG2, _LOG10 = math.log(2.0), math.log(10.0)
np_log2 = _through(np.log2, lambda x: record("log", x) / _LOG2)
np_log10 = _through(np.log10, lambda x: record("log", x) / _LOG10)
np_exp2 = _through(np.exp2, lambda x: record("exp", x * _LOG2))
np_reciprocal = _through(np.reciprocal, lambda x: 1.0 / x)
np_deg2rad = _through(np.deg2rad, lambda x: x * (math.pi / 180.0))
np_rad2deg = _through(np.rad2deg, lambda x: x * (180.0 / math.pi))


def _nan_ignoring(name):
    """fmax/fmin: maximum/minimum, except that a NaN loses to a number."""
    def f(x, y):
        if not (records(x) or records(y)):
            return getattr(np, "f" + name[:3])(x, y)
        both = record(name, x, y)
        return np_where(record("isnan", y), x, np_where(record("isnan", x), y, both))
    return f


def np_float_power(x, y):
    return record("pow", as_float(x), y)


def _scalar_fn(name, fn):
    """A `math` function that needs more than one primitive: scalars only."""
    def f(*args):
        for a in args:
            scalar_only(name, a, loc_of(*args))
        return fn(*args)
    return f


# -- shape and data movement ----------------------------------------------------------------


def _reversed_axes(x, axes):
    spec = tuple(("s", False, False, True) if k in axes else ":" for k in range(x.ndim))
    return record("getitem", x, *([-1] * len(axes)), index_spec=spec)


def np_flip(x, axis=None):
    if not records(x):
        return np.flip(x, axis)
    axis = norm_axis(axis, x.ndim, loc_of(x))
    axes = range(x.ndim) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    return _reversed_axes(x, set(axes)) if x.ndim else x


def np_roll(x, shift, axis=None):
    if not records(x):
        return np.roll(x, shift, axis)
    if ndim_of(shift) or not (records(shift) and shift.type.kind == "i" or isinstance(
            shift, (int, np.integer)) and not isinstance(shift, bool)):
        raise UnsupportedError("np.roll needs one integer shift", loc_of(x))
    if axis is None or x.ndim == 1:
        if axis is not None:
            norm_axis(axis, 1, loc_of(x))
        return record("roll", x, shift)
    # along one axis: the last `shift` entries, then the others (two slices joined)
    k = norm_axis(axis, x.ndim, loc_of(x))
    if isinstance(k, tuple):
        raise UnsupportedError("np.roll along several axes", loc_of(x))
    n = x.shape[k]
    cut = n - shift % n
    spec = (":",) * k + (("s", True, True, False),)
    head = record("getitem", x, cut, n, index_spec=spec)
    tail = record("getitem", x, 0, cut, index_spec=spec)
    return np_concatenate([head, tail], axis=k)


def np_diff(x, n=1, axis=-1):
    if not records(x):
        return np.diff(x, n, axis)
    k = norm_axis(axis, x.ndim, loc_of(x))
    for _ in range(n):
        upper = tuple(("s", True, False, False) if j == k else ":" for j in range(x.ndim))
        lower = tuple(("s", False, True, False) if j == k else ":" for j in range(x.ndim))
        x = record("getitem", x, 1, index_spec=upper) - record("getitem", x, -1,
                                                                index_spec=lower)
    return x


def np_ravel(x, order="C"):
    if not records(x):
        return np.ravel(x, order=order)
    return np_reshape(x, (-1,), order=order)


def np_result_type(*arrays_and_dtypes):
    """The dtype NumPy's rules give, from each array's dtype (a value known while
    building)."""
    return np.result_type(*(a.dtype if records(a) else a for a in arrays_and_dtypes))


def array_view(x, dtype=None, type=None):
    """``x.view()``, ``x.view(dtype)`` of the array's own kind: the same array (a write
    through either is seen by both, as NumPy's view), its dtype's width checked at run time
    (floats may be float32 or float64). A view as another kind reinterprets the bits, which
    has no derivative: refused."""
    if type is not None:
        raise UnsupportedError("x.view(type=...): jitgrad's arrays are ndarrays", loc_of(x))
    if dtype is None:
        return x
    want = np.dtype(dtype)
    if {"u": "u"}.get(want.kind, want.kind) != x.type.kind:
        kind = {"f": "floats", "i": "integers", "b": "booleans"}[x.type.kind]
        raise UnsupportedError(f".view({want.name}) of {kind} reinterprets their bits, which "
                               "has no derivative: compute what you read from them "
                               "(np.signbit, np.frexp, a comparison)", loc_of(x))
    return written(numpy_written.view_as, x, want.itemsize, want.name)


def np_asarray_chkfinite(a, dtype=None, order=None):
    """The array (no copy, as NumPy's of an ndarray), checked at run time to hold only
    finite entries."""
    if not records(a):
        return np.asarray_chkfinite(a, dtype, order)
    if dtype is not None:
        raise UnsupportedError("np.asarray_chkfinite with dtype=: convert with astype",
                               loc_of(a))
    return written(numpy_written.asarray_chkfinite, a)


def np_squeeze(x, axis=None):
    if not records(x):
        return np.squeeze(x, axis)
    if axis is None and x.ndim == 0:  # a number: itself
        return x
    if axis is None:  # the axes of size 1 known while building dropped; the others kept,
        gb = builder_of(x)  # each checked at run time not to be 1 (`squeezed_size`)
        for d in dims_of(x.atom):  # an argument's axis of size 1 in the example call: assumed
            if gb.example_sizes.get(gb.size_class(d)) == 1:  # 1 (checked first thing; a call
                gb.assume_same_size(d, 1)  # where it is not gets the general code)
        sizes = [gb.size_class(d) for d in dims_of(x.atom)]
        return np_reshape(x, tuple(
            x.shape[k] if isinstance(d, int) else record("squeezed_size", x.shape[k])
            for k, d in enumerate(sizes) if not (isinstance(d, int) and d == 1)))
    axes = norm_axis(axis, x.ndim, loc_of(x))
    axes = set(axes if isinstance(axes, tuple) else (axes,))
    return np_reshape(x, tuple(d for k, d in enumerate(x.shape) if k not in axes))


def _entries(arrays, what):
    """The arrays a join takes, each an array_like as NumPy reads it: an entry that is a list
    or tuple holding values of the graph is the array it makes (``np.vstack([(v,), (w,)])``
    stacks the rows ``[v]`` and ``[w]``), one of constants NumPy's array."""
    arrays = list(arrays)
    if not arrays or len(arrays) > MAX_STACK:
        raise UnsupportedError(f"{what} of 1 to {MAX_STACK} arrays", loc_of(*arrays))
    return [NUMPY[np.array](a) if records_inside(a) else np.asarray(a)
            if isinstance(a, (list, tuple)) else a for a in arrays]


np_zeros = _alloc("zeros")


def np_concatenate(arrays, axis=0):
    if isinstance(arrays, Sym) and arrays.ndim >= 2 and axis in (0, None):
        # one array (a list of arrays built in a loop, as an array of rows): its rows joined
        if axis is None:
            return np_ravel(arrays)
        return np_reshape(arrays, (arrays.shape[0] * arrays.shape[1], *arrays.shape[2:]))
    if isinstance(arrays, Sym) and arrays.ndim >= 2 and isinstance(axis, int):
        # its rows joined along their axis k: the rows' axis moved before it, the two merged
        k = norm_axis(axis, arrays.ndim - 1, loc_of(arrays))
        moved = np_transpose(arrays, (*range(1, k + 1), 0, *range(k + 1, arrays.ndim)))
        shape, d = arrays.shape, dims_of(arrays.atom)
        out = np_reshape(moved, (*shape[1:k + 1], shape[0] * shape[k + 1], *shape[k + 2:]))
        if isinstance(out, Sym):  # the rows' other axes keep their sizes (colour's tstack)
            out.atom.dims = (*d[1:k + 1], (out.atom, k), *d[k + 2:])
        return out
    arrays = _entries(arrays, "np.concatenate")
    # a list holding values of the graph (``[d[0] * 0.5]``, the LWR ghost cells): its array
    arrays = [NUMPY[np.array](a) if records_inside(a) else a for a in arrays]
    if not any(records(a) for a in arrays):
        return np.concatenate(arrays, axis=axis)
    loc = loc_of(*arrays)
    if axis is None:
        arrays, axis = [np_ravel(a) if records(a) else np.ravel(a) for a in arrays], 0
    ndims = {ndim_of(a) for a in arrays}
    if len(ndims) != 1 or 0 in ndims:
        raise ShapeError("np.concatenate needs arrays of one rank (not scalars)", loc)
    axis = norm_axis(axis, ndims.pop(), loc)
    if len(arrays) == 1:
        return np_copy(arrays[0])
    # a constant beside computed arrays (``np.concatenate(([0], t))``): a constant of the
    # graph (`GraphBuilder.apply`), of the float dtype where the dtypes differ
    arrays = [a if records(a) else np.asarray(a) for a in arrays]
    kinds = {a.dtype.kind for a in arrays}
    if len(kinds) > 1:  # one dtype, as Numba wants
        arrays = [as_float(a) if records(a) else a.astype(np.float64) for a in arrays]
    return record("concatenate", *arrays, axis=axis)


def np_hstack(tup):
    if isinstance(tup, Sym) and tup.ndim in (1, 2):  # one array: its rows, joined
        return np_copy(tup) if tup.ndim == 1 else np_ravel(tup)
    if isinstance(tup, Sym) and tup.ndim > 2:  # its rows (arrays) joined along their axis 1
        return np_concatenate(tup, axis=1)
    tup = _entries(tup, "np.hstack")
    if all(ndim_of(a) == 0 for a in tup):
        return np_stack(tup)
    tup = [NUMPY[np.atleast_1d](a) for a in tup]  # (a number beside vectors: one entry)
    return np_concatenate(tup, axis=0 if ndim_of(tup[0]) == 1 else 1)


def np_vstack(tup):
    if isinstance(tup, Sym) and tup.ndim in (1, 2):  # one array: its rows, stacked again
        return np_copy(tup) if tup.ndim == 2 else np_reshape(tup, (tup.shape[0], 1))
    if isinstance(tup, Sym) and tup.ndim > 2:  # its rows (arrays) joined along their first axis
        return np_concatenate(tup, axis=0)
    tup = _entries(tup, "np.vstack")
    if all(ndim_of(a) <= 1 for a in tup):
        return np_stack(tup)
    return np_concatenate([NUMPY[np.atleast_2d](a) for a in tup], axis=0)  # (a vector: a row)


def np_stack_axis(arrays, axis=0):
    if isinstance(arrays, Sym) and arrays.ndim:  # one array: its rows, stacked again
        axis = norm_axis(axis, arrays.ndim, loc_of(arrays))
        order = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, arrays.ndim))
        return np_copy(arrays) if axis == 0 else np_transpose(arrays, order)
    arrays = _entries(arrays, "np.stack")
    nd = ndim_of(arrays[0])
    axis = norm_axis(axis, nd + 1, loc_of(*arrays))
    out = np_stack(arrays)
    if axis == 0:
        return out
    return np_transpose(out, tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, nd + 1)))


def np_vdot(a, b):
    return np_sum(np_ravel(a) * np_ravel(b))


def split_handler(name, even):
    def f(x, sections, axis=0):
        if not records(x):
            return tuple(getattr(np, name)(x, sections, axis))
        axis = norm_axis(axis, x.ndim, loc_of(x))
        n = x.shape[axis]
        builder = getattr(x, "builder", None)  # (jitgrad.tape's arrays have none)
        if builder is not None:
            sections = builder.decided_size(sections)  # (len(x) // k: decided for the call)
        if isinstance(sections, (tuple, list)):
            bounds = [0, *sections, n]
        elif isinstance(sections, (int, np.integer)) and sections > 0 and even:
            # sections equal parts: a reshape, which fails (as np.split) unless they divide n
            shape = list(x.shape)
            shape[axis:axis + 1] = [sections, n // sections]
            parts = np_reshape(x, tuple(shape))
            spec = (":",) * axis + ("i",)
            return tuple(record("getitem", parts, i, index_spec=spec) for i in range(sections))
        elif isinstance(sections, (int, np.integer)) and sections > 0:
            q, r = n // sections, n % sections
            bounds = [0]
            for i in range(1, sections + 1):
                extra = record("minimum", i, r) if records(r) else min(i, r)
                bounds.append(q * i + extra)
        else:
            raise UnsupportedError(f"np.{name} needs a positive integer or a list of indices",
                                   loc_of(x))
        spec = (":",) * axis + (("s", True, True, False),)
        return tuple(record("getitem", x, a, b, index_spec=spec)
                     for a, b in itertools.pairwise(bounds))
    return f


def np_size(x, axis=None):
    """``np.size(x)``: the number of entries; with ``axis``, that axis's length."""
    if not records(x):
        return np.size(x, axis)
    if axis is None:
        return x.size
    return x.shape[norm_axis(axis, x.ndim, loc_of(x))]


def _any_all(which):
    """``np.any``/``np.all`` (and the methods) of a mask: a count of entries compared with
    zero (no derivative: the result is a bool)."""
    def f(x, axis=None, keepdims=False):
        if not records(x):
            return getattr(np, which)(x, axis=axis, keepdims=keepdims)
        if ndim_of(x) == 0:
            return x != 0  # a scalar: any and all are its truth
        truth = x if x.dtype.kind == "b" else record("ne", x, 0)
        if which == "all":
            truth = record("logical_not", truth)
        count = np_sum(record("cast", truth, kind="i"), axis, keepdims)
        return record("gt", count, 0) if which == "any" else record("eq", count, 0)
    return f


def _unary(name):
    return lambda x: record(name, x)


def _binary(name):
    return lambda x, y: record(name, x, y)


NUMPY.update({
    np.add: _binary("add"), np.subtract: _binary("sub"), np.multiply: _binary("mul"),
    np.divide: _binary("div"), np.true_divide: _binary("div"), np.power: np_power,
    np.negative: _unary("neg"), np.floor_divide: _binary("floordiv"), np.mod: _binary("mod"),
    np.maximum: _binary("maximum"), np.minimum: _binary("minimum"),
    np.less: _binary("lt"), np.less_equal: _binary("le"), np.greater: _binary("gt"),
    np.greater_equal: _binary("ge"), np.equal: _binary("eq"), np.not_equal: _binary("ne"),
    np.logical_and: _binary("logical_and"), np.logical_or: _binary("logical_or"),
    np.logical_not: _unary("logical_not"),
    # (np.bitwise_and, bitwise_or, bitwise_xor, invert: `numpy_discrete`, with the operators)
    np.abs: _unary("abs"), np.absolute: _unary("abs"), np.fabs: _unary("abs"),
    np.sign: _unary("sign"), np.floor: _unary("floor"), np.ceil: _unary("ceil"),
    np.isnan: _unary("isnan"), np.square: _unary("square"),
    np.sum: numpy_order("sum", np_sum, dtype=True),
    np.mean: numpy_order("mean", np_mean, dtype=True),
    np.max: numpy_order("max", functools.partial(np_reduce, "max"), dtype=False),
    np.min: numpy_order("min", functools.partial(np_reduce, "min"), dtype=False),
    np.amax: numpy_order("amax", functools.partial(np_reduce, "max"), dtype=False),
    np.amin: numpy_order("amin", functools.partial(np_reduce, "min"), dtype=False),
    np.matmul: matmul, np.outer: _binary("outer"),
    np.transpose: np_transpose, np.reshape: np_reshape, np.expand_dims: np_expand_dims,
    np.where: np_where, np.clip: np_clip,
    np.zeros: np_zeros, np.ones: _alloc("ones"), np.empty: _alloc("empty"),
    np.full: np_full, np.zeros_like: _like("zeros_like"), np.ones_like: _like("ones_like"),
    np.copy: np_copy, np.ndim: ndim_of, np.shape: lambda x: x.shape if records(x) else np.shape(x),
    np.empty_like: np_empty_like, np.full_like: np_full_like, np.array: np_array,
    np.asarray: lambda a, dtype=None: a if records(a) and dtype is None else np_array(a, dtype),
    np.asanyarray: lambda a, dtype=None: a if records(a) and dtype is None else np_array(a, dtype),
    np.stack: np_stack_axis,
    np.eye: np_eye, np.isfinite: _unary("isfinite"), np.isinf: _unary("isinf"),
    np.size: np_size, np.any: numpy_order("any", _any_all("any"), dtype=False),
    np.all: numpy_order("all", _any_all("all"), dtype=False),
    np.finfo: lambda dtype: np.finfo(dtype),  # its .eps, .tiny, .max: constants (build_exprs)
    np.cbrt: _unary("cbrt"),
    np.arctan2: _binary("arctan2"), np.hypot: _binary("hypot"),
    np.logaddexp: _binary("logaddexp"), np.logaddexp2: _binary("logaddexp2"),
    np.copysign: _binary("copysign"),
    np.log2: np_log2, np.log10: np_log10, np.exp2: np_exp2, np.reciprocal: np_reciprocal,
    np.deg2rad: np_deg2rad, np.radians: np_deg2rad, np.rad2deg: np_rad2deg,
    np.degrees: np_rad2deg, np.fmax: _nan_ignoring("maximum"),
    np.fmin: _nan_ignoring("minimum"), np.float_power: np_float_power,
    np.flip: np_flip, np.roll: np_roll, np.diff: np_diff, np.ravel: np_ravel,
    np.squeeze: np_squeeze, np.result_type: np_result_type,
    np.asarray_chkfinite: np_asarray_chkfinite, np.ndarray.view: array_view,
    np.concatenate: np_concatenate, np.hstack: np_hstack, np.vstack: np_vstack,
    np.vdot: np_vdot,
    np.split: split_handler("split", True), np.array_split: split_handler("array_split", False),
    # operator.add(a, b) and friends, as reduce-style code passes them
    operator.add: _binary("add"), operator.sub: _binary("sub"), operator.mul: _binary("mul"),
    operator.truediv: _binary("div"), operator.neg: _unary("neg"),
    operator.pow: lambda x, y: x ** y, operator.mod: _binary("mod"),
    operator.floordiv: _binary("floordiv"), operator.abs: _unary("abs"),
    operator.matmul: lambda a, b: a @ b, operator.pos: lambda x: +x,
    operator.lt: _binary("lt"), operator.le: _binary("le"), operator.gt: _binary("gt"),
    operator.ge: _binary("ge"), operator.eq: _binary("eq"), operator.ne: _binary("ne"),
    # math functions that need more than one primitive (scalars only)
    math.pow: _scalar_fn("math.pow", np_float_power),
    math.log2: _scalar_fn("math.log2", np_log2), math.log10: _scalar_fn("math.log10", np_log10),
    math.degrees: _scalar_fn("math.degrees", np_rad2deg),
    math.radians: _scalar_fn("math.radians", np_deg2rad),
})
for _name in primitives.TRANSCENDENTAL:
    NUMPY[getattr(np, _name)] = _unary(_name)

# The math module and builtins on scalars map to the same primitives.
MATH: dict = {
    math.exp: "exp", math.log: "log", math.log1p: "log1p", math.expm1: "expm1",
    math.sqrt: "sqrt", math.sin: "sin", math.cos: "cos", math.tan: "tan", math.tanh: "tanh",
    math.atan: "arctan", math.asin: "arcsin", math.acos: "arccos", math.sinh: "sinh",
    math.cosh: "cosh", math.asinh: "arcsinh", math.acosh: "arccosh", math.atanh: "arctanh",
    math.fabs: "abs", math.floor: "floor",
    math.ceil: "ceil", math.isnan: "isnan", math.isfinite: "isfinite", math.isinf: "isinf",
    math.erf: "erf",
    math.erfc: "erfc", math.hypot: "hypot", math.atan2: "arctan2", math.copysign: "copysign",
}
if hasattr(math, "cbrt"):  # Python 3.11+
    MATH[math.cbrt] = "cbrt"
MATH[math.lgamma] = "gammaln"  # their derivatives: digamma, written in `prims.elementwise`
MATH[math.gamma] = "gamma"

if hasattr(np, "row_stack"):
    NUMPY[np.row_stack] = np_vstack
METHODS.update({"any": NUMPY[np.any], "all": NUMPY[np.all], "astype": np_cast, "item": lambda x: np_reshape_like(x, 0.0)})
# Shape and data movement, products over axes, diagonals, norms: `numpy_shape.py`, which builds
# on the handlers above and adds its own to NUMPY.

def scalar_only(name, x, loc):
    if isinstance(x, Sym) and x.ndim:
        raise UnsupportedError(f"{name} of an array (use the np. function)", loc)

