"""float32 arguments computed in float32 (`calling.float32_build`, `Settings.float32`): a
gradient whose float array arguments are all float32 is built with float32 arrays inside (its
products in single-precision BLAS), returns float32 gradients, and agrees with central
differences in float64 and with the float64 gradient to float32's precision. A mix of float32
and float64 arrays is built in float64, as before; a float32 build that Numba refuses (a
float64 array the build makes meets a float32 one in a product) falls back to the float64
build, with the same result types.

Compiled: one program of products, a reduction and a loop, and the fallback. The breadth runs
as plain Python (`plain_python`, ``__main__``): each program's float32 gradient against its
float64 one and central differences."""

from __future__ import annotations

import numpy as np
from fd import numeric_grad

import jitgrad

RTOL = 1e-4  # float32's precision, after a few hundred operations


def layer_scan(W, b, X):
    """Products (sgemm: x @ W, and the adjoint's g @ W.T and x.T @ g), a bias broadcast, a sum
    along an axis and a loop carrying a number over a written array."""
    s = np.sum(np.tanh(X @ W + b), axis=1)
    out = np.zeros_like(s)
    acc = 0.0
    for i in range(s.shape[0]):
        acc = 0.5 * acc + s[i] * s[i]
        out[i] = acc
    return np.sum(out) + np.sum(W * W)


def layer_softmax(W, b, X, c):
    """A row softmax (max, exp, sum along an axis) after a layer, and a matrix-vector product."""
    h = np.tanh(X @ W + b)
    z = h - np.max(h, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return np.sum((p @ c) ** 2)


def counts_times(W):
    """np.arange's integers meet W in a product: as float64 (NumPy's cast), which Numba's
    product refuses beside a float32 W, so the float32 build falls back to float64."""
    v = np.arange(W.shape[0]) @ W
    return np.sum(v * v)


def row_norms(X, w):
    """A reduction along an axis and a product with a vector."""
    r = np.sqrt(np.sum(X * X, axis=1) + 1.0)
    return np.sum(r * (X @ w)) + np.prod(w[:2])


def cumulative(x):
    """np.cumsum and a loop reading back what it wrote."""
    y = np.cumsum(x)
    z = np.empty_like(x)
    z[0] = y[0]
    for i in range(1, x.shape[0]):
        z[i] = np.sin(z[i - 1]) + y[i]
    return np.sum(z * z)


def outer_eye(x, y):
    """np.outer and np.eye: float arrays the build makes of no argument's dtype."""
    m = np.outer(x, y) + np.eye(x.shape[0], y.shape[0])
    return np.sum(np.tanh(m) @ y)


def _args(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [(0.5 * rng.standard_normal(s)).astype(np.float32) for s in shapes]


PROGRAMS = [
    (layer_scan, _args((3, 4), (4,), (5, 3))),
    (layer_softmax, _args((3, 4), (4,), (5, 3), (4,))),
    (counts_times, _args((4, 3))),
    (row_norms, _args((5, 3), (3,))),
    (cumulative, _args((6,))),
    (outer_eye, _args((3,), (3,))),
]
ARGS = {fn: (fn, args) for fn, args in PROGRAMS}


def _check(fn, args32, compare_float64=True):
    """The float32 gradient of ``fn``: float32, within `RTOL` of central differences in
    float64 (and of jitgrad's float64 gradient)."""
    wrt = tuple(range(len(args32)))
    got = jitgrad.grad(fn, wrt=wrt)(*args32)
    args64 = [a.astype(np.float64) for a in args32]
    refs = [[numeric_grad(fn, args64, k) for k in wrt]]
    if compare_float64:
        refs.append(jitgrad.grad(fn, wrt=wrt)(*args64))
    for ref in refs:
        for g, want in zip(got, ref):
            assert g.dtype == np.float32 and g.shape == want.shape
            scale = max(1.0, float(np.max(np.abs(want))))
            np.testing.assert_allclose(g, want, rtol=RTOL, atol=RTOL * scale, err_msg=fn.__name__)
    return got


def test_products_reductions_and_a_loop_in_float32():
    fn, args = ARGS[layer_scan]
    g = jitgrad.grad(fn, wrt=(0, 1, 2))
    _check(fn, args, compare_float64=False)
    g(*args)
    assert g.specialisations.last.float32
    assert "runtime_float32 as _rt" in g.source() and "W: f32[:,:]" in g.source()
    assert "_rt.entry_of(s, " in g.source()  # the row sum held in a local (`accumulators`)


def test_a_float32_build_numba_refuses_falls_back_to_float64():
    fn, args = ARGS[counts_times]
    g = jitgrad.grad(fn)
    got = g(*args)
    assert got.dtype == np.float32 and not g.specialisations.last.float32
    np.testing.assert_allclose(got, numeric_grad(fn, [args[0].astype(np.float64)], 0),
                               rtol=1e-6, atol=1e-5)
    g(*args)  # the fallback is kept for this argument key
    assert not g.specialisations.last.float32


def _mixed(W, x):
    return np.sum(np.tanh(x @ W))


def test_mixed_dtypes_build_in_float64():
    W32, x64 = _args((3, 2))[0], np.ones(3)
    g = jitgrad.grad(_mixed, wrt=(0, 1))
    source = g.source(W32, x64)  # (the call: in plain Python, below)
    assert "numba.runtime as _rt" in source and "f32" not in source


def test_programs_run_as_plain_python():
    from plain_python import assert_runs_as_plain_python

    assert_runs_as_plain_python(__file__)


if __name__ == "__main__":
    for fn, args in PROGRAMS:
        _check(fn, args)
    gW, gx = jitgrad.grad(_mixed, wrt=(0, 1))(_args((3, 2))[0], np.ones(3))
    assert (gW.dtype, gx.dtype) == (np.float32, np.float64)
    print("ok")
