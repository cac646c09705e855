"""Whole-array NumPy programs (issue #45's forms): what the generated code does with them, and
that their gradients are right, compiled as users run them.

One function puts three forms together (one compile):

* a stack of matrices times one matrix (NPBench's doitgen): one matrix product over the
  stack's rows, forward and adjoint, not a broadcast product summed;
* ``(A @ x) @ A`` (atax): the two rank-1 terms of ``dA`` are one loop nest (no ``outer``
  array, no sum of two matrices);
* a loop reading slices of an array written only before it (covariance): the slices are read
  again in the adjoint, not copied onto a tape every iteration, and the rank-1 adjoint of the
  slice is added into the slice of the gradient by one nest.

Checked against central differences and JAX's gradient of the same function.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import jitgrad

sys.path.insert(0, os.path.dirname(__file__))
from fd import numeric_grad


def array_forms(A, x, S, C, data):
    n, m, k = S.shape
    stacked = np.reshape(np.reshape(S, (n, m, 1, k)) @ C, (n, m, k))
    atax = (A @ x) @ A
    d = data.copy()
    d -= np.mean(d, axis=0)
    cols = d.shape[1]
    cov = np.zeros((cols, cols))
    for i in range(cols):
        cov[i:cols, i] = cov[i, i:cols] = d[:, i] @ d[:, i:cols] / (d.shape[0] - 1.0)
    return np.sum(np.sin(stacked)) + np.sum(atax * atax) + np.sum(cov * cov)


def _jax_forms(jnp, A, x, S, C, data):
    stacked = jnp.einsum("nmk,kj->nmj", S, C)
    atax = (A @ x) @ A
    d = data - jnp.mean(data, axis=0)
    cov = d.T @ d / (d.shape[0] - 1.0)
    return jnp.sum(jnp.sin(stacked)) + jnp.sum(atax * atax) + jnp.sum(cov * cov)


def _args():
    rng = np.random.default_rng(45)
    return (rng.standard_normal((4, 5)), rng.standard_normal(5), rng.standard_normal((2, 3, 4)),
            rng.standard_normal((4, 4)), rng.standard_normal((6, 4)))


@pytest.fixture(scope="module")
def built():
    g = jitgrad.grad(array_forms, wrt=(0, 1, 2, 3, 4))
    args = _args()
    return g, args, g(*args)


def test_gradients_against_differences_and_jax(built):
    _, args, got = built
    for k in range(5):
        want = numeric_grad(array_forms, args, k)
        np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-6)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    oracle = jax.grad(lambda *a: _jax_forms(jnp, *a), argnums=tuple(range(5)))(
        *(jnp.array(a) for a in args))
    for k in range(5):
        np.testing.assert_allclose(got[k], np.asarray(oracle[k]), rtol=1e-12, atol=1e-12)


def test_the_generated_code_has_no_temporaries_of_these_forms(built):
    g, args, _ = built
    src = g.source(*args)
    # atax's two rank-1 terms are entries of one nest; the loop's are batched into products
    # after it (`transforms.batched`)
    assert "_rt.outer(" not in src and "its products batched" in src
    assert "np.expand_dims" not in src  # the stack's product: no broadcast product
    # stack 1 + 2, atax 2 + 2, the loop's 1 forwards, and after it one product or two
    assert src.count("_rt.matmul(") == 11
    tapes = [line for line in src.splitlines() if ".append(" in line or "_tape_" in line
             and "] = " in line]
    # no tape: the row written has the slot's sizes (checked at the write), so no sum back
    # reads it for its shape; d's slices are read again
    assert not tapes, tapes
