"""How NumPy takes its functions' arguments, for the handlers of `numpy_api` and
`numpy_shape` and for the frontend: array_like values, ``dtype`` and ``out``, and the order of
the parameters.

Guarantees: a list or tuple where NumPy takes an array is the array ``np.array`` makes of it
(`as_array`, `array_like`); a reduction's positional arguments reach the parameters NumPy
binds them to (`numpy_order`), a float ``dtype`` making the values float and another dtype or
``out=`` refused (`float_dtype_only`); a module's list or tuple of numbers is read as nested
tuples (`constant_tuples`); a ufunc's method is refused with what to write
(`refuse_ufunc_method`).
"""

from __future__ import annotations

import functools

import numpy as np

from jitgrad.core.errors import INSTEAD, UnsupportedError, refused
from jitgrad.lang.symbolic import NUMPY, loc_of, python_scalar, record, records


def records_inside(x) -> bool:
    """Whether the list or tuple ``x`` holds a value that records operations."""
    return isinstance(x, (list, tuple)) and any(records(v) or records_inside(v) for v in x)


def known_array(x):
    """``x``'s values as a float array if known while building (a number, an array, or a
    constant of the graph: a global array read, a design such as ``butter(4, 0.1)`` of
    numbers), else None."""
    if not records(x):
        return np.asarray(x, dtype=float)
    gb = x.builder
    if x.atom in gb.known_values and not gb.is_stale(x.atom):
        return np.asarray(gb.known_values[x.atom], dtype=float)
    return None


def as_array(x):
    """``x`` as NumPy takes an array_like: a list or tuple (of numbers, values or arrays) is
    the array it makes (``np.cross([0, 0, 1], h)``); anything else is itself."""
    return NUMPY[np.array](x) if isinstance(x, (list, tuple)) else x


def array_like(handler, *positions):
    """``handler``, with its positional arguments at ``positions`` taken `as_array`."""
    @functools.wraps(handler)
    def taking_arrays(*args, **kwargs):
        return handler(*(as_array(a) if k in positions else a for k, a in enumerate(args)),
                       **kwargs)
    return taking_arrays


def float_dtype_only(name, a, dtype=None, out=None):
    """``a`` for np.<name>'s ``dtype`` and ``out`` parameters: a float dtype makes its values
    float first (as NumPy computes in it); another dtype, and ``out``, are refused. A list
    holding recorded values (``np.mean([a, b])``) is taken `as_array` first."""
    a = as_array(a) if records_inside(a) else a
    if out is not None:
        raise UnsupportedError(f"np.{name}(..., out=) is not supported: use the value it "
                               "returns", loc_of(a))
    if dtype is None:
        return a
    if np.dtype(dtype).kind != "f":
        raise UnsupportedError(f"np.{name} with dtype {np.dtype(dtype)} (a float dtype is "
                               "supported)", loc_of(a))
    if not records(a):
        return np.asarray(a, dtype=np.float64)
    return a if a.dtype.kind == "f" else record("cast", a, kind="f")


def numpy_order(name, reduce, dtype: bool):
    """np.<name> with NumPy's parameters in NumPy's order, so that a positional argument means
    what it means there: ``(a, axis, dtype, out, keepdims)`` (sum, prod, mean) or ``(a, axis,
    out, keepdims)`` (max, min, any, all). ``reduce(a, axis, keepdims, **rest)`` does the
    work; `float_dtype_only` takes ``dtype`` and ``out``."""
    if dtype:
        def with_dtype(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
            return reduce(float_dtype_only(name, a, dtype, out), axis, keepdims, **kw)
        return with_dtype

    def without_dtype(a, axis=None, out=None, keepdims=False, **kw):
        return reduce(float_dtype_only(name, a, None, out), axis, keepdims, **kw)
    return without_dtype


def constant_tuples(value):
    """A list or tuple (nested) of numbers as nested tuples of Python numbers, as the frontend
    reads tuples (``[(0, 1), (1, 0)]``, a constellation ``[1 + 1j, -1 + 1j]``); None for
    anything else."""
    if isinstance(value, (list, tuple)):
        items = [constant_tuples(v) for v in value]
        return None if any(v is None for v in items) else tuple(items)
    if isinstance(value, (complex, np.complexfloating)):
        return complex(value)
    if isinstance(value, (bool, int, float, np.number)):
        return python_scalar(value)
    return None


def refuse_ufunc_method(ufunc, method: str, loc) -> None:
    """Refuse ``np.<ufunc>.<method>`` (``np.add.at``) with what to write instead, where
    `INSTEAD` has it."""
    if f"ufunc.{method}" in INSTEAD:
        raise refused(f"np.{ufunc.__name__}.{method}", f"ufunc.{method}", loc)
