"""NumPy's reductions beyond `sum`/`mean`/`max`/`min` (those are `numpy_api`'s): ``prod``
over axes, ``var``/``std`` with ``ddof``, weighted ``average``, and ``cumsum``/``cumprod``
along an axis or flattened, each written with existing primitives (``prod``, ``prod_axis``,
``cumsum``, ``cumprod``, sums), so the derivative follows.

Takes values of the graph (`Sym`) or constants (NumPy's own); fills `symbolic.NUMPY` when
imported (by ``jitgrad.lang``). The tape's `Tensor` methods call these handlers too.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import ShapeError, UnsupportedError
from jitgrad.lang.numpy_api import norm_axis, np_expand_dims, np_mean, np_reshape, np_sum
from jitgrad.lang.numpy_args import as_array, float_dtype_only, numpy_order
from jitgrad.lang.symbolic import (
    NUMPY,
    loc_of,
    ndim_of,
    record,
    records,
)


def np_prod(x, axis=None, keepdims=False, **kw):
    if not records(x):
        return np.prod(x, axis=axis, keepdims=keepdims, **kw)
    if kw:
        raise UnsupportedError(f"np.prod(..., {', '.join(kw)}=) is not supported", loc_of(x))
    axis = norm_axis(axis, x.ndim, loc_of(x))
    if x.ndim == 0:
        return x
    axes = range(x.ndim) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    if set(axes) == set(range(x.ndim)) and not keepdims:
        return record("prod", x)
    for a in sorted(axes, reverse=True):  # one axis at a time, highest first
        x = record("prod_axis", x, axis=a, keepdims=bool(keepdims))
    return x


def _count(x, axis):
    axis = norm_axis(axis, x.ndim, loc_of(x))
    if axis is None:
        return x.size
    count = 1
    for a in axis if isinstance(axis, tuple) else (axis,):
        count = count * x.shape[a]
    return count


def np_var(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    if kw:
        raise UnsupportedError("np.var/np.std with where=", loc_of(x))
    x = float_dtype_only("var", x, dtype, out)
    if not records(x):
        return np.var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    if x.ndim == 0:
        return x * 0.0
    centred = x - np_mean(x, axis, keepdims=True)
    return np_sum(record("square", centred), axis, keepdims) / (_count(x, axis) - ddof)


def np_std(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    if isinstance(x, (list, tuple)):  # np.std([x, x + 2]): of the array of them, as np.var
        x = as_array(x)
    if not records(x):
        return np.std(x, axis=axis, ddof=ddof, keepdims=keepdims)
    return record("sqrt", np_var(x, axis, dtype, out, ddof, keepdims, **kw))


def np_average(a, axis=None, weights=None, returned=False, **kw):
    if returned or kw:
        raise UnsupportedError("np.average with returned= or keepdims=", loc_of(a))
    if weights is None:
        return np_mean(a, axis)
    if not (records(a) or records(weights)):
        return np.average(a, axis=axis, weights=weights)
    if ndim_of(weights) == ndim_of(a):  # weights of a's shape
        return np_sum(a * weights, axis) / np_sum(weights, axis)
    if ndim_of(weights) != 1 or axis is None or isinstance(axis, (tuple, list)):
        raise ShapeError("np.average: weights of another shape than the array's must be 1-D, "
                         "along one axis= of it", loc_of(a, weights))
    axis = norm_axis(axis, ndim_of(a), loc_of(a))
    w = weights
    for _ in range(ndim_of(a) - 1 - axis):
        w = np_expand_dims(w, -1)  # line w up with `axis` of a
    return np_sum(a * w, axis) / np_sum(weights)


def np_cumsum(x, axis=None, dtype=None, out=None, **kw):
    x = float_dtype_only("cumsum", x, dtype, out)
    if kw:
        raise UnsupportedError(f"np.cumsum(..., {', '.join(kw)}=) is not supported", loc_of(x))
    if not records(x):
        return np.cumsum(x, axis=axis)
    axis = norm_axis(axis, x.ndim, loc_of(x))
    if axis is not None and x.ndim > 1:
        return record("cumsum_axis", x, axis=axis)
    return record("cumsum", x if x.ndim == 1 else np_reshape(x, (-1,)))


def np_cumprod(x, axis=None, dtype=None, out=None, **kw):
    x = float_dtype_only("cumprod", x, dtype, out)
    if kw:
        raise UnsupportedError(f"np.cumprod(..., {', '.join(kw)}=) is not supported", loc_of(x))
    if not records(x):
        return np.cumprod(x, axis=axis)
    if axis is not None and not (x.ndim == 1 and norm_axis(axis, 1, loc_of(x)) == 0):
        raise UnsupportedError("np.cumprod along an axis of a matrix (jitgrad runs it over the "
                               "flattened array, as Numba does)", loc_of(x))
    return record("cumprod", x if x.ndim == 1 else np_reshape(x, (-1,)))


NUMPY.update({
    np.prod: numpy_order("prod", np_prod, dtype=True), np.var: np_var, np.std: np_std,
    np.average: np_average, np.cumsum: np_cumsum, np.cumprod: np_cumprod,
})
