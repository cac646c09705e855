"""NumPy's functions that make arrays or move their entries, written with the primitives:
``np.eye`` with a column count, a diagonal or a dtype, the windows (``bartlett``, ``blackman``,
``hamming``, ``hanning``: their closed forms, ``kaiser``: NumPy's own), ``vander``,
``trim_zeros``, ``resize``, ``insert``, ``delete``, ``block`` and ``np.ndarray(shape, dtype)`` as an
allocation (``np.empty``).

Windows and identities are made from sizes: no derivative. The others move entries, and their
derivative is that of the slices, gathers and joins they are made of (an entry's gradient goes
back to where it came from; an inserted value gets the gradient of its place).

Takes values of the graph (`Sym`) or constants (a call on constants only is NumPy's own);
fills `symbolic.NUMPY` when imported (by ``jitgrad.lang``).
"""

from __future__ import annotations

import math

import numpy as np

from jitgrad.core.errors import ShapeError, UnsupportedError
from jitgrad.lang import complex_pairs
from jitgrad.lang.numpy_api import norm_axis, np_eye, np_where
from jitgrad.lang.numpy_args import as_array
from jitgrad.lang.symbolic import (
    NUMPY,
    all_known,
    loc_of,
    ndim_of,
    numpy_handler,
    record,
    records,
)

_np = numpy_handler  # a NumPy function's handler, for the compositions below


def _kind(dtype, loc) -> str:
    kind = {"u": "i"}.get(np.dtype(dtype).kind, np.dtype(dtype).kind)
    if kind not in "fib":
        raise UnsupportedError(f"an array of dtype {np.dtype(dtype)} (jitgrad's arrays are "
                               "float, integer or bool)", loc)
    return kind


def _size(name, n):
    """A size: an integer known while building, or an integer computed at run time."""
    if records(n) and (n.ndim or n.dtype.kind != "i") or not records(n) and (
            isinstance(n, bool) or not isinstance(n, (int, np.integer))):
        raise UnsupportedError(f"np.{name} takes an integer size", loc_of(n))
    return n


# ---- from sizes ------------------------------------------------------------------------------


def eye(N, M=None, k=0, dtype=float, order="C", *, like=None):
    """Ones where the column is the row plus ``k``, zeros elsewhere (N rows, M columns)."""
    if M is None and k == 0 and np.dtype(dtype).kind == "f":
        return np_eye(N)
    if np.dtype(dtype) == np.complex128:  # QuTiP's U = np.eye(d, dtype=complex): its
        return complex_pairs.lift(eye(N, M, k))  # real part, imaginary part 0
    kind = _kind(dtype, loc_of(N, M, k))
    M = N if M is None else M
    rows = _np(np.expand_dims)(_np(np.arange)(_size("eye", N)), 1)
    diagonal = (_np(np.arange)(_size("eye", M)) - rows) == k
    return record("cast", diagonal, kind=kind)


def _window(name, formula):
    """NumPy's window of M points: ``formula(n, M - 1)`` at n = 1 - M, 3 - M, ..., M - 1 (as
    floats), one point of 1 when M == 1, none below."""
    fn = getattr(np, name)

    def window(M):
        if all_known(M):
            return fn(M)
        M = _size(name, M)
        n = record("cast", _np(np.arange)(1 - M, M, 2), kind="f")
        gaps = record("cast", record("maximum", M - 1, 1), kind="f")  # (M == 1: not used)
        return np_where(M == 1, 1.0, formula(n, gaps))
    return window


def _cos(x):
    return record("cos", x)


_WINDOWS = {
    "bartlett": lambda n, g: np_where(n <= 0.0, 1.0 + n / g, 1.0 - n / g),
    "blackman": lambda n, g: 0.42 + 0.5 * _cos(math.pi * n / g)
    + 0.08 * _cos(2.0 * math.pi * n / g),
    "hamming": lambda n, g: 0.54 + 0.46 * _cos(math.pi * n / g),
    "hanning": lambda n, g: 0.5 + 0.5 * _cos(math.pi * n / g),
}


def kaiser(M, beta):
    if all_known(M, beta):
        return np.kaiser(M, beta)
    if records(beta):
        raise UnsupportedError("np.kaiser with a beta computed at run time (its derivative in "
                               "beta is not implemented): pass a number", loc_of(M, beta))
    return record("kaiser", _size("kaiser", M), beta=float(beta))


# ---- powers, trims, repeats ---------------------------------------------------------------------


def vander(x, N=None, increasing=False):
    """The powers of a vector, one column per power (highest first, unless ``increasing``)."""
    if all_known(x, N):
        return np.vander(x, N, increasing)
    x = as_array(x)
    if ndim_of(x) != 1:
        raise ShapeError("np.vander of a vector", loc_of(x))
    N = x.shape[0] if N is None else _size("vander", N)
    return record("vander", x, N, increasing=bool(increasing))


def trim_zeros(filt, trim="fb", axis=None):
    """A vector without its leading (``f``) and trailing (``b``) zeros: a slice of it (empty
    if every entry is zero)."""
    if all_known(filt):
        return np.trim_zeros(filt, trim) if axis is None else np.trim_zeros(filt, trim, axis)
    trim = str(trim).lower()
    if ndim_of(filt) != 1 or trim not in ("fb", "bf", "f", "b") or axis not in (None, 0, -1):
        raise UnsupportedError("np.trim_zeros of a vector (trim 'f', 'b' or 'fb')",
                               loc_of(filt))
    nonzero = record("cast", record("ne", filt, 0), kind="i")
    n = filt.shape[0]
    some = _np(np.any)(nonzero)
    start = record("argmax", nonzero) if "f" in trim else 0
    stop = n - record("argmax", _np(np.flip)(nonzero)) if "b" in trim else n
    start, stop = np_where(some, start, 0), np_where(some, stop, 0)
    return record("getitem", filt, start, stop, index_spec=(("s", True, True, False),))


def resize(a, new_shape):
    """The entries of ``a`` (flattened) repeated as often as ``new_shape`` needs: a gather."""
    if all_known(a, *(new_shape if isinstance(new_shape, (tuple, list)) else (new_shape,))):
        return np.resize(a, new_shape)
    shape = tuple(new_shape) if isinstance(new_shape, (tuple, list)) else (new_shape,)
    flat = _np(np.ravel)(as_array(a))
    total = 1
    for d in shape:
        total = total * _size("resize", d)
    # (an empty array has no entry to repeat: the read of the first one raises IndexError)
    at = _np(np.arange)(total) % record("maximum", flat.shape[0], 1)
    out = record("take", flat, record("index_positions", at, flat, kind="rows"))
    return out if len(shape) == 1 else _np(np.reshape)(out, shape)


# ---- insert, delete --------------------------------------------------------------------------


def _position(name, obj, n, inclusive):
    """The integer ``obj`` as a position among ``n`` (``n + 1`` for an insertion,
    ``inclusive``): counted from the front, one out of bounds an IndexError at run time."""
    if ndim_of(obj) or isinstance(obj, (bool, np.bool_, slice)) or not (
            records(obj) and obj.dtype.kind == "i" or isinstance(obj, (int, np.integer))):
        raise UnsupportedError(f"np.{name} at one integer position (for several, write "
                               "np.concatenate of the slices)", loc_of(obj))
    if inclusive:  # -n <= obj <= n: counted from n, a position below 0 made out of bounds
        obj = np_where(obj < 0, obj + n, obj) if records(obj) else obj + n if obj < 0 else obj
        obj = np_where(obj < 0, n + 1, obj) if records(obj) else obj
    like = _np(np.arange)(n + 1 if inclusive else n)  # read for its length alone
    rows = record("index_positions", _np(np.stack)([obj]), like, kind="rows")
    return record("getitem", rows, 0, index_spec=("i",))


def _slice_along(x, axis, start=None, stop=None):
    bounds = [b for b in (start, stop) if b is not None]
    spec = (":",) * axis + (("s", start is not None, stop is not None, False),)
    return record("getitem", x, *bounds, index_spec=spec)


def insert(arr, obj, values, axis=None):
    """``values`` inserted before position ``obj`` of a vector (of ``arr`` flattened, without
    ``axis``), in ``arr``'s dtype: the two slices and the values, joined."""
    if all_known(arr, obj, values):
        return np.insert(arr, obj, values, axis)
    arr = as_array(arr)
    if axis is None or ndim_of(arr) == 1:
        arr = _np(np.ravel)(arr) if ndim_of(arr) != 1 else arr
        norm_axis(0 if axis is None else axis, 1, loc_of(arr))
    else:
        raise UnsupportedError("np.insert into a vector (or, without axis=, the flattened "
                               "array)", loc_of(arr))
    at = _position("insert", obj, arr.shape[0], True)
    values = as_array(values)
    if ndim_of(values) == 0:
        values = _np(np.stack)([values])
    elif ndim_of(values) != 1:
        raise ShapeError("np.insert of a number or a vector of values", loc_of(values))
    if not records(values) or values.dtype.kind != arr.dtype.kind:
        values = record("cast", values, kind=arr.dtype.kind)
    return record("concatenate", _slice_along(arr, 0, stop=at), values,
                  _slice_along(arr, 0, start=at), axis=0)


def delete(arr, obj, axis=None):
    """``arr`` (flattened, without ``axis``) without its entries (or slices along ``axis``) at
    the integer ``obj``, or at the integers of the vector ``obj``."""
    if all_known(arr, obj):
        return np.delete(arr, obj, axis)
    arr = as_array(arr)
    if axis is None:
        arr, axis = (_np(np.ravel)(arr) if ndim_of(arr) != 1 else arr), 0
    axis = norm_axis(axis, ndim_of(arr), loc_of(arr))
    n = arr.shape[axis]
    if ndim_of(obj) == 0 and not isinstance(obj, (list, tuple)):
        at = _position("delete", obj, n, False)
        return record("concatenate", _slice_along(arr, axis, stop=at),
                      _slice_along(arr, axis, start=at + 1), axis=axis)
    obj = as_array(obj)
    if ndim_of(obj) != 1 or (records(obj) and obj.dtype.kind != "i") or (
            not records(obj) and np.asarray(obj).dtype.kind not in "iu"):
        raise UnsupportedError("np.delete at a vector of integers", loc_of(arr, obj))
    if axis != 0:  # along another axis: that axis first, and back
        return _np(np.moveaxis)(delete(_np(np.moveaxis)(arr, axis, 0), obj, 0), 0, axis)
    gone = record("index_positions", obj, arr, kind="rows")
    kept = _np(np.logical_not)(_np(np.any)(
        _np(np.expand_dims)(_np(np.arange)(n), 1) == gone, axis=1))
    rows = record("index_positions", kept, arr, kind="mask_rows")
    if ndim_of(arr) == 1:
        return record("take", arr, rows)
    flat = _np(np.reshape)(arr, (n, arr.size // n))
    return _np(np.reshape)(record("take", flat, rows), (rows.shape[0], *arr.shape[1:]))


def block(arrays):
    """``np.block`` of nested lists of arrays and numbers (a stiffness matrix from its blocks,
    ``np.block([[k, -k], [-k, k]])``): each item given the result's rank by leading axes of 1,
    the innermost lists joined along the last axis, the ones around them along the axes
    before, as NumPy joins them."""
    def depth(x):
        if isinstance(x, (list, tuple)):
            if not x:
                raise ValueError("np.block: lists cannot be empty")
            depths = {depth(v) for v in x}
            if len(depths) != 1:
                raise ValueError("np.block: list depths are mismatched")
            return 1 + depths.pop()
        return 0
    levels = depth(arrays)
    if all_known(*_leaves(arrays)):
        return np.block(arrays)
    rank = max(levels, *(ndim_of(v) for v in _leaves(arrays)))

    def joined(x, level):
        if not isinstance(x, (list, tuple)):
            if not records(x):
                x = np.asarray(x, dtype=float)
                return x.reshape((1,) * (rank - x.ndim) + x.shape)
            return _np(np.reshape)(x, (1,) * (rank - ndim_of(x)) + tuple(x.shape)) \
                if ndim_of(x) < rank else x
        return _np(np.concatenate)([joined(v, level + 1) for v in x],
                                   axis=rank - levels + level)
    return joined(arrays, 0)


def _leaves(x) -> list:
    return [leaf for v in x for leaf in _leaves(v)] if isinstance(x, (list, tuple)) else [x]


def ndarray(shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
    """``np.ndarray(shape, dtype)`` as NumPy code allocates with it: ``np.empty``."""
    if buffer is not None or strides is not None or offset:
        raise UnsupportedError("np.ndarray with buffer=, offset= or strides= (jitgrad takes "
                               "np.ndarray(shape, dtype), an allocation like np.empty)",
                               loc_of(*(shape if isinstance(shape, tuple) else (shape,))))
    return _np(np.empty)(shape, dtype)


NUMPY.update({
    np.eye: eye, np.kaiser: kaiser, np.vander: vander, np.trim_zeros: trim_zeros,
    np.resize: resize, np.insert: insert, np.delete: delete, np.ndarray: ndarray,
    np.block: block,
})
NUMPY.update({getattr(np, name): _window(name, formula) for name, formula in _WINDOWS.items()})
