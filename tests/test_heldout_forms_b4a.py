"""Forms met in the fourth held-out batch of real code (issue #43, part hb4a), in functions of
our own: SciPy's array-API plumbing (``xp = array_namespace(x)``, ``xp_promote(...,
force_floating=True)``, ``xpx.atleast_nd``, ``xpx.apply_where(cond, args, f1, f2 or
fill_value)`` with a lambda, a nested function and ``operator.mul``, where the discarded
branch is NaN on some entries); SciPy names with a NumPy twin (``scipy.special.log1p``,
``scipy.linalg.inv``/``det``) or a short rule (``xlog1py``, ``cosm1``, ``poch``, ``i0e``);
``np.putmask``; ``np.percentile``/``np.quantile`` at a list of q along an axis.

One compiled gradient holds them all, checked against central finite differences and JAX
(the same computation written with jax.numpy). The refusals are checked while building.
"""

from __future__ import annotations

import operator
import os
import sys

import numpy as np
import pytest
import scipy._lib.array_api_extra as xpx
import scipy.linalg
import scipy.special as sc
from scipy._lib._array_api import array_namespace, xp_promote

import jitgrad
from jitgrad import UnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad

X = np.array([0.4, 1.3, 0.7, 2.2])
C = np.array([0.8, -0.5, 1.6, 0.3])  # log(c) is NaN at the negative entry
A = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, -0.4], [0.1, 0.5, 1.8]])
M = np.array([[0.3, 1.7, 0.9, 2.4, 1.1], [1.9, 0.2, 0.8, 0.5, 1.4], [0.6, 2.1, 1.2, 0.1, 0.7]])


def scaled_log(x, c):
    xp = array_namespace(x, c)
    x, c = xp_promote(x, c, force_floating=True, xp=xp)
    x = xpx.atleast_nd(x, ndim=1, xp=xp)

    def outside(x, c):
        return x * x - c

    inside = xpx.apply_where(c > 0, (x, c), lambda x, c: np.log(c) * x, fill_value=0.0)
    both = xpx.apply_where(c > 0, (x, c), lambda x, c: np.sqrt(c) * x, outside)
    return xp.sum(inside + both * xpx.apply_where(x > 1.0, (x, c), operator.mul,
                                                    fill_value=1.0))


def loss(x, c, a, m):
    total = scaled_log(x, c)
    total = total + np.sum(sc.log1p(x) + sc.xlog1py(c, x) + sc.cosm1(x) * 3.0)
    total = total + np.sum(sc.poch(x + 0.5, 0.5) + sc.i0e(c))
    total = total + np.sum(scipy.linalg.inv(a) @ x[:3]) + scipy.linalg.det(a)
    lo, hi = np.percentile(m, [25, 75], axis=1)
    total = total + np.sum((hi - lo) * x[:3])
    q = np.quantile(m, [0.1, 0.5, 0.9], axis=0, keepdims=True)
    total = total + np.sum(q * q) + np.percentile(m, 40.0)
    y = m * 2.0
    np.putmask(y, m > 1.0, 1.0)
    return total + np.sum(y * y)


def loss_jax(jnp, jsp, x, c, a, m):
    safe_c = jnp.where(c > 0, c, 1.0)
    inside = jnp.where(c > 0, jnp.log(safe_c) * x, 0.0)
    both = jnp.where(c > 0, jnp.sqrt(safe_c) * x, x * x - c)
    total = jnp.sum(inside + both * jnp.where(x > 1.0, x * c, 1.0))
    total = total + jnp.sum(jnp.log1p(x) + jsp.xlog1py(c, x) + (jnp.cos(x) - 1.0) * 3.0)
    total = total + jnp.sum(jnp.exp(jsp.gammaln(x + 1.0) - jsp.gammaln(x + 0.5))
                            + jsp.i0e(c))
    total = total + jnp.sum(jnp.linalg.inv(a) @ x[:3]) + jnp.linalg.det(a)
    lo, hi = jnp.percentile(m, jnp.array([25.0, 75.0]), axis=1)
    total = total + jnp.sum((hi - lo) * x[:3])
    q = jnp.quantile(m, jnp.array([0.1, 0.5, 0.9]), axis=0, keepdims=True)
    total = total + jnp.sum(q * q) + jnp.percentile(m, 40.0)
    y = jnp.where(m > 1.0, 1.0, m * 2.0)
    return total + jnp.sum(y * y)


def test_gradient_matches_finite_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.special as jsp

    args = (X, C, A, M)
    wrt = (0, 1, 2, 3)
    value, grads = jitgrad.value_and_grad(loss, wrt=wrt)(*args)
    assert value == pytest.approx(loss(*args), rel=1e-12)
    assert all(np.all(np.isfinite(g)) for g in grads)  # the NaN branch is guarded
    for at, got in enumerate(grads):
        np.testing.assert_allclose(got, numeric_grad(loss, args, at), rtol=1e-6, atol=1e-7)
    want = jax.jit(jax.grad(lambda *a: loss_jax(jnp, jsp, *a), argnums=wrt))(
        *(jnp.array(a) for a in args))
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-9, atol=1e-11)


def percentile_of_run_time_q(x):
    return np.percentile(x, x[0] * 100.0)


def percentile_other_method(x):
    return np.percentile(x, [10, 90], method="nearest")


def apply_where_both(x):
    return np.sum(xpx.apply_where(x > 0, (x,), np.sin, np.cos, fill_value=0.0))


def putmask_short_values(x):
    y = x * 1.0
    np.putmask(y, x > 0.5, np.array([1.0, 2.0]))
    return np.sum(y)


@pytest.mark.parametrize(("fn", "message"), [
    (percentile_of_run_time_q, r"np.percentile at a q known only at run time"),
    (percentile_other_method, r"with the default linear method"),
    (apply_where_both, r"apply_where takes exactly one of f2 and fill_value"),
    (putmask_short_values, r"np.putmask with values that are neither a number nor"),
])
def test_refused_with_the_reason(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn)(np.array([0.3, 0.7, 0.2, 0.9]))
