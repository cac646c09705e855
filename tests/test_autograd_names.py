"""Code written for autograd (issue #43): ``autograd.numpy``, ``autograd.scipy`` and autograd's
``grad`` inside a function are read as NumPy, SciPy and jitgrad's grad
(`jitgrad.frontend.autograd_names`); ``np.linalg.eigh(a, "U")`` gives NumPy's eigenvectors,
signs included (LAPACK's upper path, `runtime_linalg._eigh_upper`); a list or tuple of
integers beside other items of an index is an index array, as in NumPy (autograd's
test_index_mixed); ``np.r_[...]`` and ``np.c_[...]`` join their items; ``sorted`` of a dict
is its keys.

One compiled gradient, checked against central differences, JAX and autograd itself.
"""

import numpy as np
import pytest

import jitgrad

anp = pytest.importorskip("autograd.numpy")
asp = pytest.importorskip("autograd.scipy.special")
autograd = pytest.importorskip("autograd")

from fd import numeric_grad

# eigh(X[:3] + 2 I, "U")'s first eigenvector has the other sign from LAPACK's lower path
X = np.array([[0.22, -0.37, -0.73], [-0.77, 0.5, 0.66], [0.17, 0.37, 0.07], [0.7, 0.51, -0.8]])
WEIGHTS = np.array([1.0, 2.0, 3.0])
PAIR = (1, 0)
R = np.arange(1.0, 10.0)


def inner(x):
    return anp.sum(anp.sin(x) ** 2)


D_INNER = autograd.grad(inner)  # made outside, called inside: jitgrad's grad of inner


def as_autograd_writes_it(x):
    """autograd's names: primitives (sin, tanh, eigh, gammaln), its own wrappers of NumPy's
    (concatenate is a lambda there; where, mean, std, stack, linalg.norm), its grad."""
    w, v = anp.linalg.eigh(x[:3] + 2.0 * anp.eye(3), "U")  # not symmetric: reads the upper
    s = anp.sum(v[:, 0] ** 3) + anp.sum(w * WEIGHTS)  # an odd power: the signs are NumPy's
    s += anp.sum(anp.concatenate([x[0], anp.tanh(x[1])]))
    s += anp.mean(anp.where(x > 0.3, x, 0.5 * x)) + anp.std(x)
    s += anp.linalg.norm(x) + anp.sum(asp.gammaln(x + 2.0))
    s += anp.sum(anp.stack([x[0], x[1]], axis=1) ** 2)
    t = anp.reshape(x, (2, 2, 3))  # a tuple or list beside other items is an index array
    s += anp.sum(t[PAIR, 0] * WEIGHTS) + anp.sum(t[1, 1:, [0, 2]] ** 3)
    s += anp.sum(anp.r_[x[0], x[1] ** 2, 3.0, 0:2] * R) + anp.sum(anp.c_[x[2], x[:3, :2]] ** 3)
    parts = {"b": x[0], "a": x[1] ** 2}  # sorted(d): its keys (autograd's test_dict)
    for i, k in enumerate(sorted(parts)):
        s += anp.sum(parts[k]) * (i + 2.0)
    return s + anp.sum(autograd.grad(inner)(x) * x) + anp.sum(D_INNER(x) ** 2)


def test_autograd_code_compiled():
    value, g = jitgrad.value_and_grad(as_autograd_writes_it)(X)
    assert value == pytest.approx(as_autograd_writes_it(X), rel=1e-12)  # NumPy's eigh signs
    np.testing.assert_allclose(g, numeric_grad(as_autograd_writes_it, (X,), 0), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(g, autograd.grad(as_autograd_writes_it)(X), rtol=1e-10,
                               atol=1e-12)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    def from_upper(a):  # JAX's eigh rule is for a symmetric matrix: made from the upper
        return jnp.triu(a) + jnp.triu(a, 1).T

    # JAX's eigenvectors may have other signs than NumPy's: fixed to NumPy's at X (constant
    # near it)
    upper = X[:3] + 2.0 * np.eye(3)
    v_np = np.linalg.eigh(upper, "U")[1]
    v_jax = np.asarray(jnp.linalg.eigh(from_upper(jnp.asarray(upper)))[1])
    signs = np.sign(np.sum(v_np * v_jax, axis=0))

    def oracle(x):
        w, v = jnp.linalg.eigh(from_upper(x[:3] + 2.0 * jnp.eye(3)))
        v = v * signs
        s = jnp.sum(v[:, 0] ** 3) + jnp.sum(w * WEIGHTS)
        s += jnp.sum(jnp.concatenate([x[0], jnp.tanh(x[1])]))
        s += jnp.mean(jnp.where(x > 0.3, x, 0.5 * x)) + jnp.std(x)
        s += jnp.linalg.norm(x) + jnp.sum(jax.scipy.special.gammaln(x + 2.0))
        s += jnp.sum(jnp.stack([x[0], x[1]], axis=1) ** 2)
        t = jnp.reshape(x, (2, 2, 3))
        s += jnp.sum(t[jnp.array(PAIR), 0] * WEIGHTS) + jnp.sum(t[1, 1:, jnp.array([0, 2])] ** 3)
        s += jnp.sum(jnp.r_[x[0], x[1] ** 2, 3.0, 0:2] * R) + jnp.sum(jnp.c_[x[2], x[:3, :2]] ** 3)
        s += jnp.sum(x[1] ** 2) * 2.0 + jnp.sum(x[0]) * 3.0
        d_inner = jax.grad(lambda y: jnp.sum(jnp.sin(y) ** 2))
        return s + jnp.sum(d_inner(x) * x) + jnp.sum(d_inner(x) ** 2)

    np.testing.assert_allclose(g, np.asarray(jax.grad(oracle)(jnp.asarray(X))), rtol=1e-10,
                               atol=1e-12)
