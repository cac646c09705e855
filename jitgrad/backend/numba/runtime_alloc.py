"""New arrays for generated code (``_rt.<name>``, re-exported by `runtime`): allocations,
``np.eye``, ``np.arange``, ``np.outer``, and a reshape of any layout.

Takes shapes (an int or a tuple of ints) and arrays; guarantees NumPy's results (float64 unless
a dtype is given). Why the backend has them: Numba compiles every inline ``np.empty``/
``np.zeros``/``np.zeros_like`` form anew in each process (30-250 ms each, a third of a small
gradient's compile) and NumPy's eye, arange and outer for 0.3-1.2 s; these compile once per
machine (`compile.jit`; `warming.warm` compiles the common shapes ahead of use). The generated
code names the allocations through `lowering.allocation`: ``_rt.<how>(shape[, np.int64 |
np.bool_])``.
"""

from __future__ import annotations

import numpy as np

from jitgrad.backend.numba.compile import jit
from jitgrad.backend.numba.runtime_loops import trip_count


@jit
def empty(shape, dtype=np.float64):
    """``np.empty(shape, dtype)``."""
    return np.empty(shape, dtype)


@jit
def zeros(shape, dtype=np.float64):
    """``np.zeros(shape, dtype)``."""
    return np.zeros(shape, dtype)


@jit
def ones(shape, dtype=np.float64):
    """``np.ones(shape, dtype)``."""
    return np.ones(shape, dtype)


@jit
def full(shape, value):
    """``np.full(shape, value)`` (float64)."""
    return np.full(shape, value)


@jit
def eye(n):
    """``np.eye(n)``; see the allocations above (Numba's own took 0.6 s in each process)."""
    out = np.zeros((n, n))
    for k in range(n):
        out[k, k] = 1.0
    return out


@jit
def arange(start, stop, step):
    """``np.arange(start, stop, step)`` of integers (0.3 s in each process as NumPy's)."""
    n = trip_count(start, stop, step)
    out = np.empty(n, np.int64)
    for k in range(n):
        out[k] = start + k * step
    return out


@jit
def outer(x, y):
    """``np.outer(x, y)`` of float vectors, as loops (NumPy's took 1.2 s in each process)."""
    xf = x.ravel()
    yf = y.ravel()
    out = np.empty((xf.size, yf.size))
    for i in range(xf.size):
        for j in range(yf.size):
            out[i, j] = xf[i] * yf[j]
    return out


@jit
def reshape(x, shape):
    """``x.reshape(shape)`` for any layout (Numba reshapes contiguous arrays only)."""
    return np.ascontiguousarray(x).reshape(shape)
