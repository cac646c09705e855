"""Programs for `test_function_forms`: functions, objects and control forms around numbers
(issue #43), several forms in each program so that each compiles once.

Not decorated: the tests differentiate them with jitgrad and compare against JAX versions
written the same way, and against central differences.
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial

import numpy as np
from numba import literal_unroll

# ---- generators, nonlocal, next ------------------------------------------------------


def _powers(t, n):
    p = 1.0
    for _ in range(n):
        yield p
        p = p * t


def _pair(a, b):
    yield a * b
    yield a + b


def _damped(t, n):
    if n <= 0:
        return t
    return 0.5 * np.sin(_damped(t, n - 1)) + t


def generators_and_nonlocal(x, n):
    """A generator consumed by a for loop (its count a run-time argument), one taken with
    next() and one summed; a nested function accumulating with nonlocal in a loop;
    recursion whose depth is that run-time argument."""
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    for i in range(x.shape[0]):
        s = 0.0
        for p in _powers(x[i], n):
            s += p
        add(s * s)
    g = _pair(x[0], x[1])
    first = next(g)
    second = next(g)
    return total + first * second + sum(_pair(x[2], 0.5)) + _damped(x[3], n)


# ---- functions, objects and *args as arguments -----------------------------------------


@dataclasses.dataclass
class Affine:
    w: np.ndarray
    b: float

    def apply(self, x):
        return self.w * x + self.b


def _scaled(act, v, c):
    return act(v) * c


def arguments_as_values(x, act, layer, *scales):
    """A function argument (a ufunc), a dataclass argument whose method is called, *args,
    and functools.partial of a function with the argument bound."""
    h = layer.apply(x)
    f = partial(_scaled, act)
    s = 0.0
    for k in scales:
        s = s + k * np.sum(f(h, 2.0))
    return s


# ---- recursion, sorted(key=), index tuples, literal_unroll, try/except -----------------


def _horner(c, t, i):
    if i == len(c) - 1:
        return c[i]
    return c[i] + t * _horner(c, t, i + 1)


def recursion_and_try(x):
    """Recursion over a tuple's length, sorted with a key lambda, a tuple of a slice and an
    integer as an index, literal_unroll, and a try whose handler takes math.sqrt's domain
    error (and whose division would raise at a zero)."""
    pairs = sorted([(2, 0.5), (0, 1.5), (1, -0.7)], key=lambda p: p[0])
    c = (pairs[0][1], pairs[1][1], pairs[2][1])
    idx = (slice(None), 1)
    y = _horner(c, x[0, 0], 0) - 2.0 + np.sum(x[idx] ** 2)
    for v in literal_unroll((x[0, 2], 2.0)):
        y = y + 0.1 * v
    try:
        r = math.sqrt(y)
        q = 1.0 / (1.0 + y)
    except ValueError:
        r = -y * y
        q = 0.5
    return r + q + x[1, 2] * r
