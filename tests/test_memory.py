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
