"""`warm`: the runtime's common signatures compiled (or loaded from Numba's disk cache) ahead
of a first gradient, once per machine (``python -m jitgrad warm``; the demo runs it).

Takes nothing; guarantees that every helper call below is compiled for its argument types and
in Numba's cache, so a new gradient's first call compiles only its own function.
"""

from __future__ import annotations

import time

import numpy as np

from jitgrad.backend.numba import runtime
from jitgrad.backend.numba.runtime import (
    add_into,
    arange,
    broadcast_like,
    cholesky,
    chunk_count,
    copy_into,
    det,
    dft,
    dot,
    eye,
    grow,
    inv,
    larger,
    logabsdet,
    matmul,
    max_axis,
    nonnegative,
    outer,
    put_part,
    reserve,
    reshape,
    signdet,
    solve,
    sum_axis,
    sum_to,
    trip_count,
    where,
)

# What `warm` compiles: the argument types generated code passes most (float64 arrays of rank
# 1 and 2, C order; int64 sizes and shape tuples). A signature not here is compiled on its
# first use and then cached like these.

def _warm_examples():
    f1, f2 = np.ones(2), np.ones((2, 2))
    i1 = np.ones(2, np.int64)
    # the allocations (empty, zeros, ones, full), sum_all, tanh_scalar and the checks
    # (same_size, size_at_least, broadcast_size, nonempty) are intrinsics: nothing of theirs
    # to compile
    calls = [(larger, (1, 2)), (nonnegative, (1,)), (trip_count, (0, 2, 1)),
             (reserve, (f1, 1, 1)), (reserve, (i1, 1, 1)), (grow, (f1,)), (grow, (i1,)),
             (reshape, (f2, (4,))), (reshape, (f1, (2, 1))),
              (sum_to, (f2, np.ones((1, 2)))), (sum_to, (f2, f2)), (sum_to, (f1, f1)),
              (broadcast_like, (f1, f2)), (broadcast_like, (1.0, f1)),
              (broadcast_like, (1.0, f2)), (sum_axis, (f2, 0, (2,))),
              (sum_axis, (f2, 1, (2,))), (max_axis, (f2, 1, (2,))),
              # a parallel loop's chunks, and a chunk's partial gradient of a vector or a
              # matrix (parallel=True)
              (chunk_count, (1, 1, 1)),
              (put_part, (np.zeros((2, 2)), 1, f1)), (put_part, (np.zeros((2, 2, 2)), 1, f2))]
    # the LAPACK helpers: one signature for every layout (`compile.jit`'s ``any_layout``)
    for fn in (inv, det, cholesky, logabsdet, signdet):
        calls.append((fn, (f2 + np.eye(2),)))
    calls += [(solve, (f2 + np.eye(2), f1)), (solve, (f2 + np.eye(2), f2)), (eye, (2,)),
              (arange, (0, 2, 1)), (outer, (f1, f1)), (dot, (f1, f1)),
              (dft, (np.ones((2, 1, 2)), -1))]
    fortran = np.asfortranarray(f2 + np.eye(2))  # a transpose's layout
    for a in (f2, fortran):  # C-ordered arrays and transposes (F-ordered views)
        calls += [(matmul, (a, f2)), (matmul, (f2, a)), (matmul, (a, f1)), (matmul, (f1, a))]
    s2 = np.ones((2, 2), np.float32)  # a float32 build's layer: x @ W, g @ W.T, x.T @ g
    calls += [(matmul, (s2, s2)), (matmul, (s2, s2.T)), (matmul, (s2.T, s2))]
    for fn in _UNARY:
        calls += [(fn, (f1,)), (fn, (f2,))]
    for fn in _BINARY:
        calls += [(fn, (f1, f1)), (fn, (f2, f2)), (fn, (1.0, f1)), (fn, (f1, 1.0)),
                  (fn, (1.0, f2)), (fn, (f2, 1.0)), (fn, (f2, f1))]
    calls += [(where, (f1 > 0, f1, 1.0)), (where, (f2 > 0, f2, 1.0)),
              (where, (f2 > 0, f2, f2))]
    # writes into a region: a slice of a vector, a matrix or a rank-3 array (a view, 'A'
    # layout), or a whole array or a row (C order), from an array of its shape or a number
    for c in (np.ones(3), np.ones((3, 3)), np.ones((3, 3, 3))):
        view = c[(slice(1, None),) * c.ndim]
        calls += [(add_into, (view, view.copy())), (add_into, (view, view)),
                  (copy_into, (view, view.copy())), (copy_into, (view, view)),
                  (copy_into, (view, 0.0)), (add_into, (c, c)), (copy_into, (c, c))]
    return calls


# The runtime's elementwise helpers generated code calls most (on arrays).
_UNARY = (runtime.neg, runtime.exp, runtime.log, runtime.sqrt, runtime.tanh, runtime.sin,
          runtime.cos, runtime.abs, runtime.square, runtime.log1p)
_BINARY = (runtime.add, runtime.sub, runtime.mul, runtime.div, runtime.pow, runtime.maximum,
           runtime.minimum, runtime.gt, runtime.lt)


def warm(report=None) -> int:
    """Compile the helpers for the argument types generated code passes most, or load them
    from Numba's disk cache: a machine pays this once (``python -m jitgrad warm``, and the
    demo, run it), so a new gradient's first call compiles only its own code. Returns how
    many signatures it made ready; ``report(name, seconds)`` hears of each."""
    n = 0
    for fn, args in _warm_examples():
        start = time.perf_counter()
        fn(*args)
        n += 1
        if report is not None:
            report(getattr(fn, "__name__", str(fn)), time.perf_counter() - start)
    return n
