"""Whole-array gradients at the cost of their primal (issue #45): the memory mechanisms, in one
compiled gradient checked against central finite differences and JAX.

* A matrix read by two products (NPBench's mvt, ``A @ y1`` and ``y2 @ A``): its adjoint is
  one buffer the second outer product adds into in place (`in_place.adds_in_place`).
* Products of column slices in a loop (covariance's ``d[:, i] @ d[:, i:m]``): BLAS reads the
  strided views in place, transposed too; a reversed view is copied first
  (`runtime_linalg._strided_matrix_vector`).
* ``A`` is over 4 MiB, so its adjoint is allocated with the huge-page advice
  (`runtime_alloc._advise_huge_pages`).
* An adjoint two names share (``u + u``) is never added into in place.
* A matrix scaled by a number times a vector, on either side, scales the product instead
  (`optimise.scalars_out_of_products`).
"""

from __future__ import annotations

import numpy as np
import pytest

import jitgrad

rng = np.random.default_rng(45)
A = rng.standard_normal((800, 700))  # 4.48 MB
Y1 = rng.standard_normal(700)
Y2 = rng.standard_normal(800)
D = rng.standard_normal((30, 12))
X = rng.standard_normal(800)


def loss(a, y1, y2, d, x):
    x1 = x.copy()
    x1 += a @ y1
    x2 = y1 * 0.5
    x2 += y2 @ a
    s = np.sum(x1) + np.sum(x2)
    m = d.shape[1]
    cov = np.zeros((m, m))
    for i in range(m):
        cov[i:m, i] = cov[i, i:m] = d[:, i] @ d[:, i:m] / (d.shape[0] - 1.0)
    s += np.sum(cov * cov)
    s += np.sum(np.tanh(d[1:, 2:].T @ d[1:, 0]))
    s += np.sum(np.sin(d[2:, ::-1] @ y1[:12][::-1]))
    u = y1 * 2.0
    s += np.sum((u + u) * y1)
    s += np.sum(np.cos(0.5 * a @ y1)) + np.sum(np.cos(y2 @ (a * 0.25)))
    return s


def loss_jax(jnp, a, y1, y2, d, x):
    s = jnp.sum(x + a @ y1) + jnp.sum(y1 * 0.5 + y2 @ a)
    cov = d.T @ d / (d.shape[0] - 1.0)  # the loop writes both triangles of this product
    s += jnp.sum(cov * cov)
    s += jnp.sum(jnp.tanh(d[1:, 2:].T @ d[1:, 0]))
    s += jnp.sum(jnp.sin(d[2:, ::-1] @ y1[:12][::-1]))
    s += jnp.sum(jnp.cos(0.5 * a @ y1)) + jnp.sum(jnp.cos(y2 @ (a * 0.25)))
    return s + jnp.sum(4.0 * y1 * y1)


def test_products_and_accumulations_match_finite_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    args = (A, Y1, Y2, D, X)
    value, grads = jitgrad.value_and_grad(loss, wrt=(0, 1, 2, 3, 4))(*args)
    assert value == pytest.approx(loss(*args), rel=1e-12)
    for at, arg in enumerate(args):  # central differences at sampled entries (A is large)
        picks = rng.integers(0, arg.size, 6).tolist() + [0, arg.size - 1]
        for flat in picks:
            entry = np.unravel_index(flat, arg.shape)
            up, down = arg.copy(), arg.copy()
            up[entry] += 1e-6
            down[entry] -= 1e-6
            fd = ((loss(*args[:at], up, *args[at + 1:]) - loss(*args[:at], down, *args[at + 1:]))
                  / (up[entry] - down[entry]))
            assert grads[at][entry] == pytest.approx(fd, rel=1e-5, abs=1e-6), (at, entry)
    want = jax.jit(jax.grad(lambda *a: loss_jax(jnp, *a), argnums=(0, 1, 2, 3, 4)))(
        *(jnp.array(a) for a in args))
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-10, atol=1e-10)
