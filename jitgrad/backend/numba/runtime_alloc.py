"""New arrays for generated code (``_rt.<name>``, re-exported by `runtime`): allocations,
``np.eye``, ``np.arange``, ``np.outer``, and a reshape of any layout.

Takes shapes (an int or a tuple of ints) and arrays; guarantees NumPy's results (float64 unless
a dtype is given). Why the backend has them: Numba compiles every inline ``np.empty``/
``np.zeros``/``np.zeros_like`` form anew in each process (30-250 ms each, a third of a small
gradient's compile) and NumPy's eye, arange and outer for 0.3-1.2 s; these compile once per
machine (`compile.jit`; `warming.warm` compiles the common shapes ahead of use). The generated
code names the allocations through `lowering.allocation`: ``_rt.<how>(shape[, np.int64 |
np.bool_])``.

Large arrays in transparent huge pages, as NumPy's: a new array of 4 MiB or more is advised
(``madvise(MADV_HUGEPAGE)``, Linux, before its first write, `_huge_pages`), so its first
write faults once per 2 MiB instead of once per 4 KiB. NumPy does this for every array it
allocates; Numba's allocator does not, and a gradient writing a new 160 MB adjoint spent 2/3
of that loop in page faults (atax at NPBench's preset S: 113 ms to fill it, 34 ms advised).
"""

from __future__ import annotations

import sys

import numpy as np
from numba import types
from numba.extending import overload

from jitgrad.backend.numba.compile import DISABLE_JIT, jit, link_libc_function
from jitgrad.backend.numba.runtime_loops import trip_count

_HUGE_BYTES = 1 << 22  # NumPy's threshold for the advice (numpy/_core/src/multiarray/alloc.c)
_PAGE = 4096
_MADV_HUGEPAGE = 14  # Linux's value
_ADVISE = sys.platform.startswith("linux")
if _ADVISE and not DISABLE_JIT:
    madvise = link_libc_function("madvise", types.int32(types.uintp, types.uintp, types.int32))


def _huge_pages(a):
    """Advise the kernel to back ``a``'s memory with huge pages when it is large (see the
    module's docstring); nothing in plain Python (NumPy's arrays are advised by NumPy)."""


@overload(_huge_pages, jit_options={"error_model": "numpy"})
def _huge_pages_compiled(a):
    if not _ADVISE:
        return lambda a: None

    def advise(a):
        size = a.size * a.itemsize
        if size >= _HUGE_BYTES:
            address = a.ctypes.data
            start = (address + (_PAGE - 1)) // _PAGE * _PAGE  # the first whole page
            madvise(start, size - (start - address), _MADV_HUGEPAGE)  # a hint: result unused
    return advise


@jit
def empty(shape, dtype=np.float64):
    """``np.empty(shape, dtype)``."""
    out = np.empty(shape, dtype)
    _huge_pages(out)
    return out


@jit
def zeros(shape, dtype=np.float64):
    """``np.zeros(shape, dtype)``."""
    out = np.empty(shape, dtype)
    _huge_pages(out)
    out[...] = 0
    return out


@jit
def ones(shape, dtype=np.float64):
    """``np.ones(shape, dtype)``."""
    out = np.empty(shape, dtype)
    _huge_pages(out)
    out[...] = 1
    return out


@jit
def full(shape, value):
    """``np.full(shape, value)`` (float64)."""
    out = np.empty(shape)
    _huge_pages(out)
    out[...] = value
    return out


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
