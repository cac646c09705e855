"""Containers and built-ins (issue #43): lists, dicts and sets known while building changed in
place (`frontend/build_containers.py`), heapq's functions, numba.typed containers, bytes and
array.array arguments (`core.pytree.plain`), map/filter in a ``for``, iter/next, strings.

One compiled gradient per group (each function uses several forms, one compile), checked
against central differences of the Python function itself (which runs the real heapq, sort,
sets) and, where the function is plain Python over numbers, JAX's gradient of that same
function; the values against the Python function's at several points.
"""

from __future__ import annotations

import array
import heapq
import math

import numpy as np
import pytest
from fd import numeric_grad
from numba import types as nbt
from numba.typed import Dict as TDict
from numba.typed import List as TList

import jitgrad

try:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
except ImportError:  # pragma: no cover
    jax = None


def list_dict_set_methods(x):
    lst = [x[0], x[1] * x[1], 3.0]
    lst[1] = lst[1] + x[2]
    lst[-1] *= x[3]
    lst.insert(1, x[3] * 2.0)
    lst.extend([x[0] * x[2], 1.5])
    last = lst.pop()
    first = lst.pop(0)
    lst.reverse()
    lst.sort()
    d = {}
    d["a"] = lst[0] * last
    d["b"] = first
    d["a"] += lst[-1]
    sq = {k: x[k] * x[k] for k in range(3)}
    mid = sq.pop(1)
    seen = {1, 2, 3}
    seen.add(2)
    seen.add(5)
    parity = {k % 2 for k in range(5)}
    it = iter(x)
    a = next(it)
    b = next(it)
    text = "abcdef"[1:4] + "ab" * 2
    bonus = 1.0 if "b" in text and 5 in seen else 0.0
    return (d["a"] * d["b"] + sum(lst) * len(seen) + mid * sq[2] + a * b * len(parity)
            + bonus * x[4] + len(text) * lst[1])


def heaps(x):
    h = [x[0], x[1], x[2], x[3], x[4]]
    heapq.heapify(h)
    a = heapq.heappop(h)
    heapq.heappush(h, x[5] * 0.5)
    b = heapq.heappushpop(h, x[1] * x[2])
    c = heapq.heapreplace(h, x[3] + 1.0)
    big = heapq.nlargest(2, [x[0], x[2], x[4], x[5]])
    small = heapq.nsmallest(2, [x[1], x[3], x[5]])
    return (a + 2.0 * b + 3.0 * c + h[0] * h[1] + 4.0 * h[2] + 5.0 * h[3]
            + big[0] * big[1] + small[1])


def _cube(t):
    return t * t * t


def _positive(t):
    return t > 0.2


def typed_buffers_and_builtins(x, weights, table, raw, arr):
    s = 0.0
    for v in map(_cube, x):
        s += v
    for v in filter(_positive, x):
        s += v * v
    doubled = TList()
    for v in x:
        doubled.append(v * 2.0)
    t = 0.0
    for k in range(len(weights)):
        t += weights[k] * x[k]
    rows = [[x[i] * j for j in range(3)] for i in range(x.shape[0])]
    r = np.sum(np.sin(np.array([[a * b for a in x] for b in x])))
    for row in rows:
        for v in row:
            r += v * v
    cubes = TDict.empty(key_type=nbt.int64, value_type=nbt.float64)  # keys 0..n-1: a list
    for i in range(x.shape[0]):
        cubes[i] = x[i] ** 3
    for k, v in cubes.items():
        r += (k + 1.0) * v + cubes[len(cubes) - 1 - k]
    parts = []  # arrays of other lengths: the loop unrolled, a list of them
    for i in range(2):
        parts.append(x[i:] * (i + 1.0))
    r += np.sum(np.concatenate(parts) ** 2) * len(parts)
    acc = [0.0, 0.0]  # written in a loop: the array of its items
    for i in range(x.size):
        acc[i % 2] = acc[i % 2] + x[i] ** 2
    scale = len(raw) + raw[0] + arr[1] + (ord(chr(66)) - 65)
    return (s + t * table["w"] + math.fsum([x[0] * x[1], doubled[1], 1.0]) * scale + r
            + acc[0] * acc[1])


def _points(seed, n, count):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, n) for _ in range(count)]


@pytest.mark.parametrize("fn", [list_dict_set_methods, heaps], ids=lambda f: f.__name__)
def test_lists_dicts_sets_heaps(fn):
    vg = jitgrad.value_and_grad(fn)
    xs = _points(3, 6, 12)
    for x in xs:  # orders of every kind: the heap's layout is CPython's
        value, g = vg(x)
        assert value == pytest.approx(fn(x), rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(g, numeric_grad(fn, (x,), 0), rtol=1e-6, atol=1e-7)
        if jax is not None and x is xs[0]:  # the same Python function, differentiated by JAX
            np.testing.assert_allclose(g, np.asarray(jax.grad(fn)(jnp.asarray(x))),
                                       rtol=1e-10, atol=1e-12)


def test_typed_containers_buffers_and_builtins():
    weights = TList([0.5, -1.0, 2.0, 0.25])
    table = TDict()
    table["w"] = 1.5
    raw, arr = b"\x03ab", array.array("d", [0.5, 2.0])
    f = jitgrad.value_and_grad(typed_buffers_and_builtins, wrt=(0, 1, 2))
    plain_args = ([0.5, -1.0, 2.0, 0.25], {"w": 1.5}, raw, arr)
    for x in _points(5, 4, 3):
        value, (gx, gw, gt) = f(x, weights, table, raw, arr)
        assert value == pytest.approx(typed_buffers_and_builtins(x, *plain_args), rel=1e-12)
        np.testing.assert_allclose(
            gx, numeric_grad(typed_buffers_and_builtins, (x, *plain_args), 0), rtol=1e-6,
            atol=1e-7)
        # a typed List's gradient is the list of its items' (a typed Dict's: the dict)
        np.testing.assert_allclose(gw, [x[k] * 1.5 for k in range(4)], rtol=1e-12)
        assert set(gt) == {"w"}
        assert gt["w"] == pytest.approx(sum(weights[k] * x[k] for k in range(4)), rel=1e-12)
