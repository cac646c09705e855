"""NumPy functions whose work depends on lengths known only at run time, and pass-through
facts of arrays, inside a gradient (issue #43): polynomials (Horner's rule and long division:
loops jitgrad writes in Python), nan-reductions, np.gradient, kron, sorting along an axis and
in place, fancy indexing beside slices, sliding windows, mirrored pads, np.random
permutations, shuffles and choices (the positions replayed, the rows gathered),
np.ndenumerate, ``v in x``, x.nbytes and np.float32.

Two functions, each compiled once, with several of these: their gradients checked against
central finite differences and an oracle written in jax.numpy, their values against NumPy's.
The rest of each feature (polysub, polyint, nanpercentile, np.gradient of a matrix, ...) is
in the conformance table, run as plain Python.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad

P = np.polynomial.polynomial
C = np.array([0.9, -0.4, 1.3, 0.6, 1.1])
X = np.array([0.35, 0.72, 0.46, 0.91, 0.13, 0.58])
M = np.array([[0.35, 0.72, 0.46], [0.91, 0.63, 0.28], [0.55, 0.82, 0.17], [0.4, 0.1, 0.77]])
W = np.arange(12.0).reshape(4, 3)
IDX = np.array([2, 0, 2])


def series(c, x, m):
    """Polynomials of run-time lengths, a nan-reduction, np.gradient, kron, sorts."""
    q, r = P.polydiv(c, x[:2])
    v = P.polyval(x, P.polyadd(q, c[:2]))
    z = c.copy()
    z[1] = np.nan
    y = c.copy()
    y.sort()
    total = np.sum(v * v) + np.sum(r) + np.sum(np.gradient(x, 0.3, edge_order=2) ** 2)
    total += np.nanmedian(z) * 2.0 + np.sum(np.kron(c[:2], m) ** 2)
    total += np.sum(np.sort(m, axis=0) * W) + np.sum(y * np.arange(c.size))
    return total + float(np.float32(x[0])) * 3.0


def reordered(x, m, idx):
    """Random reorderings replayed, gathers beside slices, windows, pads, pass-throughs."""
    rng = np.random.default_rng(5)
    p = rng.permutation(x)
    rows = m.copy()
    rng.shuffle(rows)
    picked = rng.choice(x, 3)
    windows = np.lib.stride_tricks.sliding_window_view(x, 3)
    total = np.sum(p * np.arange(x.size)) + np.sum(rows * W) + np.sum(picked ** 2)
    total += np.sum(windows * windows * np.arange(3.0)) + np.sum(m[:, idx] ** 3)
    total += np.sum(x[np.array([[0, 1], [5, 5]])] * np.array([[1.0, 2.0], [3.0, 4.0]]))
    total += np.sum(np.pad(x, 2, mode="reflect") * np.arange(x.size + 4.0))
    for at, v in np.ndenumerate(m):
        total += v * v * (at[0] + 1)
    if 0.5 not in x:  # (no entry is 0.5, perturbed or not)
        total += x[1] * (x.nbytes // x.itemsize)
    return total


CASES = {"series": (series, (C, X, M), (0, 1, 2)), "reordered": (reordered, (X, M, IDX), (0, 1))}


@pytest.fixture(scope="module")
def compiled():
    """Each function's value and gradient, compiled once for the tests below."""
    return {name: jitgrad.value_and_grad(fn, wrt=wrt)(*args)
            for name, (fn, args, wrt) in CASES.items()}


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_finite_differences(compiled, name):
    fn, args, wrt = CASES[name]
    value, grads = compiled[name]
    assert value == pytest.approx(fn(*args), rel=1e-12)
    # (series rounds to float32: a wider step, a looser tolerance)
    eps, rtol = (1e-3, 1e-4) if fn is series else (1e-6, 1e-6)
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, numeric_grad(fn, args, k, eps=eps), rtol=rtol,
                                   atol=1e-6)


# ----------------------------------------------------------------------------- JAX


@pytest.fixture(scope="module")
def jnp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return jnp


def _series_jax(jnp, c, x, m):
    """`series` in jax.numpy: its polynomials highest power first, np.gradient's second
    order ends written out (jnp.gradient has first order ends only)."""
    lq, lr = jnp.polydiv(c[::-1], x[:2][::-1])
    q, r = lq[::-1], lr[::-1][:1]
    v = jnp.polyval((q + jnp.concatenate([c[:2], jnp.zeros(q.size - 2)]))[::-1], x)
    h = 0.3
    g2 = jnp.concatenate([((-3.0 * x[0] + 4.0 * x[1] - x[2]) / (2 * h))[None],
                          (x[2:] - x[:-2]) / (2 * h),
                          ((3.0 * x[-1] - 4.0 * x[-2] + x[-3]) / (2 * h))[None]])
    z = c.at[1].set(jnp.nan)
    total = jnp.sum(v * v) + jnp.sum(r) + jnp.sum(g2 ** 2)
    total += jnp.nanmedian(z) * 2.0 + jnp.sum(jnp.kron(c[:2], m) ** 2)
    total += jnp.sum(jnp.sort(m, axis=0) * W) + jnp.sum(jnp.sort(c) * jnp.arange(c.size))
    return total + x[0].astype(jnp.float32) * 3.0


def _reordered_jax(jnp, x, m, idx):
    """`reordered` in jax.numpy, with the positions NumPy's generator gives drawn here."""
    rng = np.random.default_rng(5)
    p, rows, picked = rng.permutation(x.size), rng.permutation(m.shape[0]), rng.choice(6, 3)
    windows = x[np.arange(4)[:, None] + np.arange(3)]
    mirrored = x[np.array([2, 1, 0, 1, 2, 3, 4, 5, 4, 3])]
    total = jnp.sum(x[p] * jnp.arange(x.size)) + jnp.sum(m[rows] * W)
    total += jnp.sum(x[picked] ** 2) + jnp.sum(windows * windows * jnp.arange(3.0))
    total += jnp.sum(m[:, idx] ** 3)
    total += jnp.sum(x[np.array([[0, 1], [5, 5]])] * jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    total += jnp.sum(mirrored * jnp.arange(x.size + 4.0))
    total += jnp.sum(m * m * jnp.arange(1.0, 5.0)[:, None]) + x[1] * x.size
    return total


@pytest.mark.parametrize("name", CASES)
def test_against_jax(compiled, jnp, name):
    import jax

    _, args, wrt = CASES[name]
    oracle = {"series": _series_jax, "reordered": _reordered_jax}[name]
    want = jax.grad(lambda *a: oracle(jnp, *a), argnums=wrt)(*(jnp.array(a) for a in args))
    for got, w in zip(compiled[name][1], want):
        np.testing.assert_allclose(got, np.asarray(w), rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("fn", "message"), [
    (lambda x: np.sum(np.lib.stride_tricks.as_strided(x[1:], shape=(2, 2), strides=(8, 8))),
     r"as_strided of a view .* sliding_window_view"),
    (lambda x: np.sum(x.view(np.int64)), r"reinterprets their bits"),
    (lambda x: np.sum(P.polyint(x, 1, lbnd=1.0)), r"lbnd= other than 0"),
    (lambda x: np.sum(np.gradient(x, x, edge_order=2)), r"np\.diff\(f\) / np\.diff\(x\)"),
])
def test_refused_with_the_reason(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn)(X)
