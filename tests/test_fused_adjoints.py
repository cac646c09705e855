"""Adjoints that stay in the backend's loop nests (issue #45: NPBench's softmax and stencils),
each gradient compiled and checked against central finite differences and JAX.

* max and min share their gradient among tied entries by elementwise operations and a sum
  (`prims.reductions._chooser_vjp`), written into the adjoint's nests: no array of shares.
  Ties split the gradient equally (JAX's rule); a row whose maximum is nan gives it to no one.
* An array the forward pass only reads entry by entry, made by cheap elementwise arithmetic of
  arrays the adjoint reads anyway, is made again in the adjoint's nest (`saving.Saver.
  elementwise_again`): softmax's ``e / s`` is neither stored nor (under ``grad``) computed in
  the forward pass.
* An adjoint handed on from a temporary (``_b_x = _b_t1``) is added into in place
  (`in_place.adds_in_place`).
* A 2-D stencil's adjoint adds into several parts of one array in one nest
  (`emit_fused.NestWriter.fusable_run`): no temporaries and no ``_rt.add_into`` passes.
"""

from __future__ import annotations

import numpy as np
import pytest

import jitgrad
from tests.fd import check_against, numeric_grad

rng = np.random.default_rng(4545)
X = rng.standard_normal((3, 4, 6))
C = rng.standard_normal((3, 4, 6))
TIES = np.round(rng.standard_normal((5, 4)) * 2.0) / 2.0  # rows and columns with tied extremes
V = rng.standard_normal(5)
N = 7
A0 = rng.standard_normal((N, N))
B0 = rng.standard_normal((N, N))


def softmax_loss(x, c):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    s = np.sum(e, axis=-1, keepdims=True)
    return np.sum(e / s * c)


def softmax_loss_jax(jnp, x, c):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return jnp.sum(e / jnp.sum(e, axis=-1, keepdims=True) * c)


def extremes(t, v):
    return (np.sum(np.max(t, axis=0) ** 2) + np.min(t, axis=1) @ v + np.max(t) * 3.0
            + np.sum(np.min(t * t, axis=0, keepdims=True)))


def extremes_jax(jnp, t, v):
    return (jnp.sum(jnp.max(t, axis=0) ** 2) + jnp.min(t, axis=1) @ v + jnp.max(t) * 3.0
            + jnp.sum(jnp.min(t * t, axis=0, keepdims=True)))


def stencil(steps, a, b):
    a = a.copy()
    b = b.copy()
    for _ in range(1, steps):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1]
                               + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1]
                               + b[:-2, 1:-1])
    return np.sum(a * a) + np.sum(np.sin(b))


def stencil_jax(jnp, steps, a, b):
    for _ in range(1, steps):
        b = b.at[1:-1, 1:-1].set(0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
                                        + a[2:, 1:-1] + a[:-2, 1:-1]))
        a = a.at[1:-1, 1:-1].set(0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:]
                                        + b[2:, 1:-1] + b[:-2, 1:-1]))
    return jnp.sum(a * a) + jnp.sum(jnp.sin(b))


CASES = {
    "softmax": (softmax_loss, softmax_loss_jax, (X, C), (0, 1)),
    "extremes": (extremes, extremes_jax, (TIES, V), (0, 1)),
    "stencil": (stencil, stencil_jax, (4, A0, B0), (1, 2)),
}


GRADS = {name: jitgrad.grad(fn, wrt=wrt) for name, (fn, _, _, wrt) in CASES.items()}


@pytest.fixture(scope="module")
def jax_numpy():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return jax, jnp


@pytest.mark.parametrize("name", list(CASES))
def test_gradients_match_finite_differences_and_jax(name, jax_numpy):
    jax, jnp = jax_numpy
    fn, fn_jax, args, wrt = CASES[name]
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    jax_args = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    want = jax.grad(lambda *a: fn_jax(jnp, *a), argnums=wrt)(*jax_args)
    if name == "extremes":  # ties: no derivative for differences to see; JAX's rule alone
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for got, ref in zip(grads, want):
            np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grads[1], numeric_grad(fn, args, 1), rtol=1e-6)
        return
    check_against(fn, args, wrt, value, grads, want)
    plain = GRADS[name](*args)  # (the forward pass without the value)
    for got, ref in zip(plain, grads):
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-15)


def test_hessian_vector_product_through_max(jax_numpy):
    jax, jnp = jax_numpy
    t = rng.standard_normal(X.shape)
    got = jitgrad.hvp(softmax_loss, wrt=0)(X, C, t)
    want = jax.jvp(jax.grad(lambda x: softmax_loss_jax(jnp, x, jnp.asarray(C))),
                   (jnp.asarray(X),), (jnp.asarray(t),))[1]
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-11)


def test_a_nan_maximum_gives_its_row_no_gradient():
    x = X.copy()
    x[1, 2, 3] = np.nan
    g = jitgrad.grad(lambda x: np.sum(np.max(x, axis=-1) * 2.0))(x)
    assert np.all(g[1, 2] == 0.0)
    rest = np.ones(x.shape[:2], bool)
    rest[1, 2] = False
    assert np.all(np.sum(g, axis=-1)[rest] == 2.0)


def test_generated_code_keeps_the_adjoints_in_their_nests():
    g = GRADS["softmax"]
    g(X, C)
    src = g.source()
    forward = src.split("# -- adjoint pass")[0]
    assert "choose_share" not in src and "_b_x_1" not in src
    assert " / tmp_sum" not in forward.split("def ")[-1]  # e / s: made in the adjoint only
    g = GRADS["stencil"]
    g(4, A0, B0)
    assert "_rt.add_into" not in g.source()
