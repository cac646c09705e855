"""Whole-array gradients at the cost of their primal (issue #45): what `jitgrad.grad` leaves
out and rewrites, checked compiled against central differences and JAX.

* The value is not computed under ``grad`` beyond what the adjoint reads: ``np.sum((A @ x) @
  A)`` runs neither product forwards (`optimise.optimise`, ``value_needed``).
* A whole-array write into an array nothing reads afterwards goes with what it writes
  (`optimise.dead_writes`): ``C[:] = alpha * A @ B + beta * C`` then ``np.sum(C)``.
* A matrix product by the cotangent of ``np.sum`` (an array of ones) is a sum of the other
  operand (`transforms.filled`): gemm's adjoint, a transposed operand (``A.T @ A``), a
  scaled sum, a matrix filled with a variable times a vector (``np.outer``'s adjoint, its
  cotangent ``np.sum(x * x)``), and one scaled by a number (``np.cov``'s: ones over ``n - 1``).

One compiled function holds them all (one compile); the generated source is checked for what
it no longer holds.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import jitgrad

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad


def whole(A, B, C, x, u, alpha):
    C = C.copy()
    C[:] = alpha * A @ B + 0.5 * C  # NPBench's gemm
    total = np.sum(C)
    total += np.sum((A @ x) @ A)  # atax
    total += 3.0 * np.sum(A.T @ A)  # a scaled cotangent, transposed operands
    total += np.sum(np.outer(u, x)) * np.sum(x * x)  # ones (m, k) @ a vector
    total += np.sum(np.cov(A))  # ones / (k - 1): a filled matrix scaled by a number
    return total


def whole_jax(jnp, A, B, C, x, u, alpha):
    C = alpha * A @ B + 0.5 * C
    return (jnp.sum(C) + jnp.sum((A @ x) @ A) + 3.0 * jnp.sum(A.T @ A)
            + jnp.sum(jnp.outer(u, x)) * jnp.sum(x * x) + jnp.sum(jnp.cov(A)))


def _data():
    r = np.random.default_rng(45)
    m, k, n = 5, 4, 6
    return (r.normal(size=(m, k)), r.normal(size=(k, n)), r.normal(size=(m, n)),
            r.normal(size=k), r.normal(size=m), 1.3)


def test_gradients_against_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    args = _data()
    wrt = (0, 1, 2, 3, 4, 5)
    g = jitgrad.grad(whole, wrt=wrt)
    got = g(*args)
    oracle = jax.grad(lambda *a: whole_jax(jnp, *a), argnums=wrt)(*args)
    for k, (mine, theirs) in enumerate(zip(got, oracle)):
        np.testing.assert_allclose(mine, np.asarray(theirs), rtol=1e-12, atol=1e-12)
        fd = numeric_grad(whole, args, k)
        np.testing.assert_allclose(mine, fd, rtol=1e-6, atol=1e-6)
    source = g.source()
    forward, adjoint = source.split("# -- adjoint pass")
    # forwards, only A @ x, which the adjoint of (A @ x) @ A reads: no gemm, no A.T @ A
    assert forward.count("_rt.matmul(") == 1, source
    # backwards, only the two products of atax's cotangent (a vector of ones: one pass over
    # A either way); no product by a matrix of ones, of np.sum(x * x) or of 1 / (k - 1)
    assert adjoint.count("_rt.matmul(") == 2, source


def trace_shift(a):  # NPBench's go_fast, summed
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return np.sum(a + trace)


def test_a_sum_of_ones_is_a_size_and_an_owned_adjoint_is_not_copied():
    """The cotangent of ``np.sum(a + trace)`` summed back to ``trace`` is ``a.size`` (no array
    of ones summed: `filled`'s sums), and the adjoint of ``a`` it then owns alone is added
    into without a copy (`optimise.copies_of_unread`). Against central differences and JAX."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    a = np.random.default_rng(5).normal(size=(4, 4))
    g = jitgrad.grad(trace_shift)
    got = g(a)
    want = jax.grad(lambda a: jnp.sum(a + jnp.sum(jnp.tanh(jnp.diag(a)))))(a)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, numeric_grad(trace_shift, (a,), 0), rtol=1e-6, atol=1e-6)
    source = g.source()
    assert ".copy()" not in source and "sum_all" not in source and ".size" in source, source
