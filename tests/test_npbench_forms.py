"""The NumPy forms NPBench's kernels differentiate through (issue #45): ``np.ndarray(shape,
dtype)`` as an allocation (``vadv``, ``nbody``), ``np.histogram`` with ``range=``,
``weights=`` and ``density=`` (``azimint_hist``), ``np.cov`` with ``rowvar``, ``bias``,
``ddof``, ``y``, ``fweights`` and ``aweights`` (``covariance2``).

One compiled gradient holds them all; it is checked against central finite differences and
against JAX (``jnp.histogram``, ``jnp.cov``; the allocations as JAX writes them). Refusals
(``np.cov``'s float frequency weights, a complex result) are checked while building, with no
compile.
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

# data away from every bin edge (central differences see counts that do not change); the
# extremes are unique, so the edges' derivative through min and max is defined
X = np.array([0.11, 0.93, 0.47, 0.28, 0.68, 0.35, 0.79, 0.55])
W = np.array([0.5, 1.5, -0.7, 2.0, 0.3, 1.1, -0.4, 0.9])
K = np.array([2, 1, 3, 1, 2])  # frequency weights of M's five observations
M = np.array([[0.3, -1.2, 0.8, 0.1, 0.5],
              [1.1, 0.4, -0.6, 0.9, -0.2],
              [-0.5, 0.7, 0.2, -1.0, 0.6]])


def binned(np_, x, w, m, k):
    """The histogram and covariance forms, in NumPy or jax.numpy (one of each path: the other
    options, ``rowvar``, ``y``, ``ddof``, are conformance rows, checked without compiling)."""
    # azimint_hist: weighted over plain counts, edges from the data's extremes
    plain = np_.histogram(x, 4)[0]
    weighted, edges = np_.histogram(x, 4, weights=w * x)
    s = np_.sum(weighted / plain) + np_.sum(edges * np_.arange(1.0, 6.0))
    # a fixed range (values outside it in no bin), weights and density together
    dens = np_.histogram(x, 3, range=(0.2, 0.8), weights=w, density=True)[0]
    s += np_.sum(dens * np_.arange(1.0, 4.0))
    # covariance2: np.cov of the transposed data; the weights (integer repeats, an argument,
    # and observation weights, differentiable)
    s += np_.sum(np_.cov(np_.transpose(m)) ** 2)
    s += np_.sum(np_.cov(m, fweights=k, aweights=w[3:] ** 2) ** 2)
    return s


def allocated(x, m):
    """vadv's ``np.ndarray((I, J, K), dtype=a.dtype)`` and nbody's ``np.ndarray(Nt + 1,
    dtype=np.float64)``: uninitialised arrays the kernel fills before reading."""
    rows, cols = m.shape[0], m.shape[1]
    col = np.ndarray((rows, cols, 2), dtype=m.dtype)
    col[:, :, 0] = m * 0.5
    for k in range(1, 2):
        col[:, :, k] = col[:, :, k - 1] * m + 1.0
    energy = np.ndarray(x.shape[0] + 1, dtype=np.float64)
    energy[0] = 0.0
    for i in range(x.shape[0]):
        energy[i + 1] = energy[i] + x[i] * x[i]
    return np.sum(col[:, :, 1] ** 2) + np.sum(energy)


def allocated_jax(jnp, x, m):
    col1 = (m * 0.5) * m + 1.0
    energy = jnp.concatenate((jnp.zeros(1), jnp.cumsum(x * x)))
    return jnp.sum(col1 ** 2) + jnp.sum(energy)


def loss(x, w, m, k):
    return binned(np, x, w, m, k) + allocated(x, m)


def test_gradient_matches_finite_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    g = jitgrad.value_and_grad(loss, wrt=(0, 1, 2))
    value, grads = g(X, W, M, K)
    assert value == pytest.approx(loss(X, W, M, K), rel=1e-12)
    for at, got in enumerate(grads):
        np.testing.assert_allclose(got, numeric_grad(loss, (X, W, M, K), at), rtol=1e-6,
                                   atol=1e-7)
    oracle = jax.jit(jax.grad(lambda x, w, m: binned(jnp, x, w, m, jnp.array(K))
                              + allocated_jax(jnp, x, m), argnums=(0, 1, 2)))
    want = oracle(jnp.array(X), jnp.array(W), jnp.array(M))
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-10, atol=1e-12)
    # the data's gradient is not zero only through the edges: the counts carry none
    assert np.count_nonzero(grads[0]) > 2


@pytest.mark.parametrize(("fn", "message"), [
    (lambda x: np.sum(np.cov(x, fweights=x * 2.0)),
     r"np\.cov with fweights other than a vector of integers"),
    (lambda x: np.sum(np.cov(x, aweights=np.outer(x, x))),
     r"np\.cov with aweights other than a vector"),
    (lambda x: np.sum(x + 1j * x[::-1]), r"returns a complex number"),
])
def test_refused_with_the_reason(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn)(X)
