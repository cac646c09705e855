"""The NumPy, `math` and builtin surface that user code calls on symbolic values.

`NUMPY` maps a NumPy function or ufunc to its handler, `MATH` maps a `math` function to the
primitive it records, `CONSTANTS` names the module constants. A handler normalises NumPy's
arguments (axes, shapes, dtypes, keywords) and records primitives of `primitives.py` through
`_apply`; a function NumPy has that maps onto existing primitives (``log2(x) = log(x) / log(2)``)
is written here rather than given a primitive of its own.

The same handlers serve `tape.py`: there ``records(x)`` is true of a `tape.Tensor`, and
`_apply` runs the primitive's NumPy ``impl``.

Guarantees: a keyword or form outside what a handler understands raises `UnsupportedError`
with the user's line, never a silently different result.
"""

from __future__ import annotations

import math

import numpy as np

from . import primitives as P
from .errors import ShapeError, UnsupportedError
from .symbolic import (
    _CURRENT,
    Sym,
    _apply,
    _builder_of,
    _dims,
    _loc,
    ndim_of,
    records,
)
from .types import Type


def _norm_axis(axis, ndim, loc):
    if axis is None:
        return None
    if isinstance(axis, Sym):
        raise UnsupportedError("the axis must be a constant integer", loc)
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(_norm_axis(a, ndim, loc) for a in axis))
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise UnsupportedError(f"the axis must be an integer, not {axis!r}", loc)
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"axis {axis} is out of bounds for an array of dimension {ndim}", loc)
    return axis % ndim


def np_reduce(op, x, axis=None, keepdims=False, **unsupported):
    if unsupported:
        raise UnsupportedError(f"np.{op}(..., {', '.join(unsupported)}=) is not supported",
                               _loc(x))
    if not records(x):
        return getattr(np, op)(x, axis=axis, keepdims=keepdims)
    axis = _norm_axis(axis, x.ndim, _loc(x))
    if x.ndim == 0:
        return x
    if isinstance(axis, tuple):  # several axes: one at a time, highest first
        for a in sorted(axis, reverse=True):
            x = _apply(op, x, axis=a, keepdims=bool(keepdims))
        return x
    return _apply(op, x, axis=axis, keepdims=bool(keepdims))


def np_sum(x, axis=None, keepdims=False, **kw):
    return np_reduce("sum", x, axis, keepdims, **kw)


def np_mean(x, axis=None, keepdims=False, **kw):
    if not records(x):
        return np.mean(x, axis=axis, keepdims=keepdims)
    total = np_sum(x, axis, keepdims, **kw)
    if x.ndim == 0:
        return total
    axis = _norm_axis(axis, x.ndim, _loc(x))
    if axis is None:
        count = x.size
    else:
        count = 1
        for a in axis if isinstance(axis, tuple) else (axis,):
            count = count * x.shape[a]
    return total / count


def _matmul(a, b):
    na, nb = ndim_of(a), ndim_of(b)
    if na == 0 or nb == 0 or na > 2 or nb > 2:
        raise UnsupportedError(f"matrix product of operands of rank {na} and {nb} (jitgrad "
                               "supports 1-D and 2-D operands)", _loc(a, b))
    return _apply("matmul", a, b)


def np_transpose(x, axes=None):
    if axes is not None:
        axes = tuple(int(a) for a in axes)
        if axes == tuple(range(len(axes))):
            return x
        if ndim_of(x) == 2 or axes == tuple(reversed(range(len(axes)))):
            axes = None
    return _apply("transpose", x, axes=axes)


def np_reshape(x, shape):
    if not isinstance(shape, tuple):
        shape = (shape,)
    if any(isinstance(d, int) and d == -1 for d in shape):
        known = 1
        for d in shape:
            if not (isinstance(d, int) and d == -1):
                known = known * d
        shape = tuple(x.size // known if (isinstance(d, int) and d == -1) else d for d in shape)
    return _apply("reshape", x, *shape)


def np_reshape_like(x, like):
    return _apply("reshape_like", x, like)


def np_cast(x, dtype):
    kind = np.dtype(dtype).kind
    kind = {"u": "i"}.get(kind, kind)
    if kind not in "fib":
        raise UnsupportedError(f"conversion to {dtype}", _loc(x))
    return _apply("cast", x, kind=kind)


def _alloc(name):
    def alloc(shape, dtype=float, **kw):
        if kw:
            raise UnsupportedError(f"np.{name}(..., {', '.join(kw)}=) is not supported")
        dims = shape if isinstance(shape, (tuple, list)) else (shape,)
        kind = np.dtype(dtype).kind
        return _apply_alloc(name, dims, kind)
    return alloc


def _apply_alloc(name, dims, kind, fill=None):
    builder = _builder_of(*dims, fill)
    if builder is None:
        builder = _CURRENT[-1]
    atoms = [builder.atom(d) for d in dims]
    if any(a.type.kind != "i" or a.type.ndim for a in atoms):
        raise UnsupportedError("array sizes must be integers", builder.loc)
    if fill is not None:
        name, atoms, params = "full", [builder.atom(fill)] + atoms, {}
        out = builder.emit(name, atoms, params, Type(atoms[0].type.kind, len(dims)))
    else:
        params = {"kind": kind}
        out = builder.emit(name, atoms, params, Type(kind, len(dims)))
    out.dims = _dims(P.PRIMITIVES[name], atoms, params, out.type)
    return builder.sym(out)


def np_full(shape, fill_value, dtype=None):
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if dtype is not None:
        fill_value = float(fill_value) if np.dtype(dtype).kind == "f" else fill_value
    return _apply_alloc("full", dims, "f", fill=fill_value)


def _like(name):
    def like(x, dtype=None):
        if dtype is not None and np.dtype(dtype).kind != "f":
            raise UnsupportedError(f"np.{name} with a non-float dtype", _loc(x))
        if not records(x) or x.ndim == 0:
            return 0.0 if name == "zeros_like" else 1.0
        return _apply(name, x)
    return like


def np_copy(x):
    return _apply("copy", x) if records(x) else np.array(x, copy=True)


def np_where(cond, a, b):
    return _apply("where", cond, a, b)


def np_expand_dims(x, axis):
    axis = int(axis)
    axis = axis % (ndim_of(x) + 1)
    return _apply("expand_dims", x, axis=axis)


def np_clip(x, lo, hi):
    return _apply("minimum", _apply("maximum", x, lo), hi)


def np_power(x, y):
    if not records(y) and isinstance(y, (int, float)) and not isinstance(y, bool) and y == 2:
        return _apply("square", x)  # x * x: cheaper than pow, and so is its derivative
    return _apply("pow", x, y)


def _unary(name):
    return lambda x: _apply(name, x)


def _binary(name):
    return lambda x, y: _apply(name, x, y)


NUMPY: dict = {
    np.add: _binary("add"), np.subtract: _binary("sub"), np.multiply: _binary("mul"),
    np.divide: _binary("div"), np.true_divide: _binary("div"), np.power: np_power,
    np.negative: _unary("neg"), np.floor_divide: _binary("floordiv"), np.mod: _binary("mod"),
    np.maximum: _binary("maximum"), np.minimum: _binary("minimum"),
    np.less: _binary("lt"), np.less_equal: _binary("le"), np.greater: _binary("gt"),
    np.greater_equal: _binary("ge"), np.equal: _binary("eq"), np.not_equal: _binary("ne"),
    np.logical_and: _binary("logical_and"), np.logical_or: _binary("logical_or"),
    np.logical_not: _unary("logical_not"),
    np.abs: _unary("abs"), np.absolute: _unary("abs"), np.fabs: _unary("abs"),
    np.sign: _unary("sign"), np.floor: _unary("floor"), np.ceil: _unary("ceil"),
    np.isnan: _unary("isnan"), np.square: _unary("square"),
    np.sum: np_sum, np.mean: np_mean,
    np.max: lambda x, axis=None, keepdims=False, **kw: np_reduce("max", x, axis, keepdims, **kw),
    np.min: lambda x, axis=None, keepdims=False, **kw: np_reduce("min", x, axis, keepdims, **kw),
    np.amax: lambda x, axis=None, keepdims=False: np_reduce("max", x, axis, keepdims),
    np.amin: lambda x, axis=None, keepdims=False: np_reduce("min", x, axis, keepdims),
    np.matmul: _matmul, np.dot: _matmul, np.outer: _binary("outer"),
    np.transpose: np_transpose, np.reshape: np_reshape, np.expand_dims: np_expand_dims,
    np.where: np_where, np.clip: np_clip,
    np.zeros: _alloc("zeros"), np.ones: _alloc("ones"), np.empty: _alloc("empty"),
    np.full: np_full, np.zeros_like: _like("zeros_like"), np.ones_like: _like("ones_like"),
    np.copy: np_copy, np.ndim: ndim_of, np.shape: lambda x: x.shape,
}
for _name in ("exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "arctan",
              "arcsin", "arccos", "sinh", "cosh", "arcsinh"):
    NUMPY[getattr(np, _name)] = _unary(_name)

# The math module and builtins on scalars map to the same primitives.
MATH: dict = {
    math.exp: "exp", math.log: "log", math.log1p: "log1p", math.expm1: "expm1",
    math.sqrt: "sqrt", math.sin: "sin", math.cos: "cos", math.tan: "tan", math.tanh: "tanh",
    math.atan: "arctan", math.asin: "arcsin", math.acos: "arccos", math.sinh: "sinh",
    math.cosh: "cosh", math.asinh: "arcsinh", math.fabs: "abs", math.floor: "floor",
    math.ceil: "ceil", math.isnan: "isnan",
}

CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


def scalar_only(name, x, loc):
    if isinstance(x, Sym) and x.ndim:
        raise UnsupportedError(f"{name} of an array (use the np. function)", loc)

