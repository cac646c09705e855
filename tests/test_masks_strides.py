"""Boolean masks beside other index items, and np.lib.stride_tricks.as_strided (issue #43).

A mask over the leading axes with integers and slices after it (``x[mask, 0]``,
``t[mask2d, 1:]``), a 1-D mask among slices (``x[:, mask]``), writes through both
(``out[mask, 1] = v``, ``t[mask2d, 0] = v``); as_strided of a whole array read (a diagonal,
overlapping windows) and written through (a diagonal set). Compiled as users run them, against
central differences and JAX, where the masks are NumPy's (computed before, they are not
differentiated) and the strided reads are gathers at positions written out: one function by
default, the rest ``heavy`` (their forms run by default as conformance rows, in plain Python);
the refusals that stay.
"""

from __future__ import annotations

import numpy as np
import pytest
from fd import numeric_grad
from numpy.lib.stride_tricks import as_strided

import jitgrad
from jitgrad.prims.indexing import strided_positions_impl


def masked_and_strided(x, w):
    """A mask beside an integer, read and written; a diagonal set through as_strided;
    overlapping windows read."""
    n = x.shape[0]
    out = np.zeros_like(x)
    m = x[:, 0] > 0.3
    out[m, 1] = x[m, 2] * w[m] + 1.0
    r2 = x @ x.T + 1.0  # n by n
    as_strided(r2, shape=(n,), strides=((n + 1) * r2.itemsize,))[:] = 0.0  # its diagonal
    win = as_strided(w, shape=(n - 1, 2), strides=(w.itemsize, w.itemsize))  # overlapping
    return np.sum(out * x) + np.sum(r2 ** 2) * 0.1 + np.sum(win[:, 0] * win[:, 1] ** 2)


def more_masks(x, w):
    """A mask among slices, over two leading axes beside a slice (read and written), an
    augmented write beside an integer."""
    out = x * 0.5
    m = x[:, 0] > 0.3
    out[m, 2] += x[m, 0] ** 2
    cols = x[:, m[:3]]
    t = np.stack((x, x * 2.0))
    k = t[:, :, 0] > 0.6
    z = t[k, 1:]
    t[k, 0] = 7.0 * w[0]
    return np.sum(out * x) + np.sum(cols ** 2) + np.sum(np.sin(z)) + np.sum(t * t)


def masked_and_strided_jax(x, w, xv):
    """`masked_and_strided` in JAX: the mask from NumPy's ``xv`` (x's values: a constant),
    the strided reads as gathers at positions written out here."""
    import jax.numpy as jnp

    n = xv.shape[0]
    m = xv[:, 0] > 0.3
    out = jnp.zeros_like(x).at[m, 1].set(x[m, 2] * w[m] + 1.0)
    r2 = x @ x.T + 1.0
    r2 = r2.at[np.arange(n), np.arange(n)].set(0.0)
    starts = np.arange(n - 1)
    win = jnp.stack((w[starts], w[starts + 1]), axis=1)
    return jnp.sum(out * x) + jnp.sum(r2 ** 2) * 0.1 + jnp.sum(win[:, 0] * win[:, 1] ** 2)


def more_masks_jax(x, w, xv):
    """`more_masks` in JAX, the masks from NumPy's ``xv``."""
    import jax.numpy as jnp

    m = xv[:, 0] > 0.3
    out = (x * 0.5).at[m, 2].add(x[m, 0] ** 2)
    cols = x[:, m[:3]]
    t = jnp.stack((x, x * 2.0))
    k = np.stack((xv, xv * 2.0))[:, :, 0] > 0.6
    z = t[k, 1:]
    t = t.at[k, 0].set(7.0 * w[0])
    return jnp.sum(out * x) + jnp.sum(cols ** 2) + jnp.sum(jnp.sin(z)) + jnp.sum(t * t)


X = np.random.RandomState(3).rand(5, 3)
W = np.array([0.4, -0.9, 1.3, 0.25, 0.8])


def _check(fn, oracle):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    value, grads = jitgrad.value_and_grad(fn, wrt=(0, 1))(X, W)
    np.testing.assert_allclose(value, fn(X, W), rtol=1e-14)
    want = jax.jit(jax.grad(lambda x, w: oracle(x, w, X), argnums=(0, 1)))(X, W)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, numeric_grad(fn, (X, W), k), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g, np.asarray(want[k]), rtol=1e-12, atol=1e-13)


def test_masks_and_strides_compiled_against_differences_and_jax():
    _check(masked_and_strided, masked_and_strided_jax)


@pytest.mark.heavy  # (the table's rows nnp-mask-columns, nnp-mask-leading-axes run by default)
def test_more_masks_compiled_against_differences_and_jax():
    _check(more_masks, more_masks_jax)


def mask_beside_an_index_array(x):
    return np.sum(x[x[:, 0] > 0.0, np.array([0, 1])])


def strided_of_a_view(a):
    return np.sum(as_strided(a[1:], shape=(2,), strides=(16,)))


def strided_without_strides(a):
    return np.sum(as_strided(a, shape=(2,)))


@pytest.mark.parametrize("fn, message", [
    (mask_beside_an_index_array, r"boolean mask beside an index array .*np\.where"),
    (strided_of_a_view, r"as_strided of a view .* on the whole array"),
    (strided_without_strides, r"shape= and strides= both given"),
])
def test_what_stays_refused(fn, message):
    with pytest.raises(jitgrad.UnsupportedError, match=message):
        jitgrad.grad(fn)(np.ones((4, 2)) if fn is mask_beside_an_index_array else np.ones(6))


def test_strided_positions_are_checked():
    x = np.zeros((3, 3))
    assert list(strided_positions_impl(x, 3, 32, ndim=1)) == [0, 4, 8]
    with pytest.raises(ValueError, match="overlap"):
        strided_positions_impl(x, 3, 2, 8, 8, ndim=2, distinct=True)
    with pytest.raises(IndexError, match="outside"):
        strided_positions_impl(x, 4, 32, ndim=1)
    with pytest.raises(ValueError, match="whole number"):
        strided_positions_impl(x, 2, 12, ndim=1)
    with pytest.raises(ValueError, match="C-contiguous"):
        strided_positions_impl(x.T[:2], 2, 8, ndim=1)
