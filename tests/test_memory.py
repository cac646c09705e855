"""The tape of a long loop costs a few bytes per saved value, not a Python object per step."""

import math
import tracemalloc

import numpy as np

import jitgrad


def recurrence(w, x):
    h = 0.0
    total = 0.0
    for t in range(x.shape[0]):
        h = math.tanh(w * h + x[t])
        total += h * h
    return total


def test_million_step_recurrence_tape_is_compact():
    n = 1_000_000
    x = np.random.default_rng(0).normal(scale=0.5, size=n)
    grad = jitgrad.grad(recurrence, wrt=(0, 1))
    grad(0.5, x[:10])  # compile outside the measurement (same signature)
    tracemalloc.start()  # Numba allocates through Python's allocator: tracemalloc sees it
    try:
        dw, dx = grad(0.5, x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # One float saved per step (h) plus the gradient array itself: 16 bytes a step. A Python
    # float per saved value would be 24 bytes more, a list entry 8 more again.
    assert peak < 20 * n, f"peak {peak / n:.1f} bytes per step"
    assert dx.shape == (n,)
    assert math.isfinite(dw)


def rows_in_place(x, w):
    out = np.zeros(x.shape[1])
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[j] = x[i, j] * w[j]
        for j in range(x.shape[1]):
            total += out[j] * out[j]
    return total


def test_an_array_written_in_place_in_nested_loops_has_one_adjoint_array():
    """The inner loops' versions of ``out`` are one storage with it, so they share one adjoint
    array: nothing is allocated per outer iteration (it was a fresh zeros_like each time), in
    either kernel."""
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(50, 4)), rng.normal(size=4)
    grad = jitgrad.grad(rows_in_place, wrt=(0, 1))
    dx, dw = grad(x, w)
    np.testing.assert_allclose(dw, np.sum(2 * (x * w) * x, axis=0), rtol=1e-12)
    np.testing.assert_allclose(dx, 2 * (x * w) * w, rtol=1e-12)
    source = grad.source().splitlines()  # (the loop is fused: its adjoint is in the forward)
    allocations = [line for line in source if "_rt.zeros(" in line]
    assert all(line.startswith("    ") and not line.startswith("     ")  # top level only
               for line in allocations), allocations
    assert sum("_b_out" in line for line in allocations) == 1
