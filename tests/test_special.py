"""SciPy's special functions that are primitives of their own (issue #43): Bessel functions,
erfinv/erfcinv, rgamma/gammasgn, the regularised incomplete gamma and beta functions and
Student's t distribution function, and the scipy.stats distribution functions written with
them, compiled as users run them.

Values against SciPy's (the backend calls SciPy's own compiled kernels: equal to rounding);
gradients against central differences and against an independent oracle: JAX's
``jax.scipy.special`` / ``jax.scipy.stats`` where it has the function, else SciPy's own
derivative functions (``jvp``, ``yvp``, ``ivp``) or densities (``t.pdf``). Two functions put
every new primitive through one compile each; a Hessian checks that the rules differentiate
again; derivatives in an order, and second derivatives in a shape parameter, are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st
from fd import numeric_grad

import jitgrad
from jitgrad.core import ir as jir
from jitgrad.core import types as jtypes
from jitgrad.frontend import build as jbuild
from jitgrad.frontend import parse as jparse
from jitgrad.prims.elementwise import SCIPY_FUNCTIONS


def bessel_terms(x):
    s = x - 1.3  # negative entries: gammasgn -1, rgamma of a negative number
    return np.sum(sp.j0(x) + 2.0 * sp.j1(x) + sp.y0(x) - sp.y1(x) * 0.5 + sp.i0(x) + sp.i1(x)
                  + sp.jn(2, x) + sp.yn(2, x) + sp.iv(1.5, x) + 3.0 * sp.ive(2, x) + sp.kv(1.5, x)
                  + sp.gammasgn(s) * sp.rgamma(s) * x + sp.rgamma(x - 2.25))  # a pole at -1


def cdf_terms(x, mu, c):
    special = (sp.erfinv(x * 0.9) + sp.erfcinv(x) + sp.gammainc(2.5, 3.0 * x)
               + sp.gammaincc(1.5, x) + sp.betainc(2.0, 3.0, x))
    stats = (st.t.cdf(x, 4.0, 0.1, 1.5) + st.t.logcdf(x - 0.5, 3.0) + st.chi2.cdf(2.0 * x, 3.0)
             + st.gamma.cdf(x, 2.0, scale=0.7) + st.beta.cdf(x, 2.0, 3.0))
    counts = st.poisson.cdf(np.array([0.0, 1.0, 2.5, 4.0]), mu)
    entropy = st.multivariate_normal.entropy(np.zeros(3), c @ c.T + np.eye(3))
    return np.sum(special * 1.5 + stats) + np.sum(counts) + entropy


X = np.array([0.35, 0.72, 1.25, 2.91])
XU = np.array([0.35, 0.72, 0.46, 0.91])  # in (0, 1)
MU = 2.5
C = np.array([[0.35, 0.72, 0.46], [0.91, 0.63, 0.28], [0.55, 0.82, 0.17]])


def _jax():  # its gradients jitted: op by op, they compile for seconds
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def bessel_oracle(x):
    """The gradient of `bessel_terms`: JAX for J0, J1, J2, I0 and I1; SciPy's derivative
    functions for the others."""
    jax = _jax()
    jsp = jax.scipy.special

    def with_jax(x):
        j = jsp.bessel_jn(x, v=2)
        return jax.numpy.sum(j[0] + 2.0 * j[1] + j[2] + jsp.i0(x) + jsp.i1(x))

    s, u = x - 1.3, x - 2.25
    # (1/Gamma)' is -psi / Gamma, and (-1)^n n! at the pole -n of Gamma
    pole = np.isclose(u, np.round(u)) & (u < 0.5)
    n = -np.round(u)
    rgamma_slope = np.where(pole, (-1.0) ** n * sp.factorial(n), -sp.digamma(u) * sp.rgamma(u))
    rest = (sp.yvp(0, x) - sp.yvp(1, x) * 0.5 + sp.yvp(2, x) + sp.ivp(1.5, x) + sp.kvp(1.5, x)
            + 3.0 * (sp.ivp(2, x) - np.sign(x) * sp.iv(2, x)) * np.exp(-np.abs(x))
            + sp.gammasgn(s) * (sp.rgamma(s) - x * sp.digamma(s) * sp.rgamma(s)) + rgamma_slope)
    return np.asarray(jax.jit(jax.grad(with_jax))(x)) + rest


def test_bessel_functions_values_and_gradients():
    value, g = jitgrad.value_and_grad(bessel_terms)(X)
    np.testing.assert_allclose(value, bessel_terms(X), rtol=1e-14)
    np.testing.assert_allclose(g, numeric_grad(bessel_terms, (X,), 0), rtol=1e-7)
    np.testing.assert_allclose(g, bessel_oracle(X), rtol=1e-10)
    # SciPy's own derivative of J0 is -J1: the rule's
    np.testing.assert_allclose(sp.jvp(0, X), -sp.j1(X), rtol=1e-15)


def cdf_oracle(x, mu, c):
    """The gradient of `cdf_terms`: JAX for erfinv, erfcinv (as erfinv(1 - y)), the incomplete
    gamma and beta functions, the chi2, gamma, beta and Poisson distribution functions and the
    log-determinant; SciPy's t density for Student's t."""
    jax = _jax()
    jnp, jsp, jst = jax.numpy, jax.scipy.special, jax.scipy.stats

    def with_jax(x, mu, c):
        special = (jsp.erfinv(x * 0.9) + jsp.erfinv(1.0 - x) + jsp.gammainc(2.5, 3.0 * x)
                   + jsp.gammaincc(1.5, x) + jsp.betainc(2.0, 3.0, x))
        stats = (jst.chi2.cdf(2.0 * x, 3.0) + jst.gamma.cdf(x, 2.0, scale=0.7)
                 + jst.beta.cdf(x, 2.0, 3.0))
        counts = jst.poisson.cdf(jnp.array([0.0, 1.0, 2.5, 4.0]), mu)
        entropy = 0.5 * jnp.linalg.slogdet(c @ c.T + jnp.eye(3))[1]
        return jnp.sum(special * 1.5 + stats) + jnp.sum(counts) + entropy

    gx, gmu, gc = (np.asarray(v) for v in jax.jit(jax.grad(with_jax, argnums=(0, 1, 2)))(x, mu, c))
    gx = gx + st.t.pdf(x, 4.0, 0.1, 1.5) + st.t.pdf(x - 0.5, 3.0) / st.t.cdf(x - 0.5, 3.0)
    return gx, float(gmu), gc


def test_distribution_functions_values_and_gradients():
    value, grads = jitgrad.value_and_grad(cdf_terms, wrt=(0, 1, 2))(XU, MU, C)
    np.testing.assert_allclose(value, cdf_terms(XU, MU, C), rtol=1e-14)
    for k, (g, want) in enumerate(zip(grads, cdf_oracle(XU, MU, C))):
        np.testing.assert_allclose(g, numeric_grad(cdf_terms, (XU, MU, C), k), rtol=1e-6)
        np.testing.assert_allclose(g, want, rtol=1e-10)


def shape_terms(a, y, x):
    """The shape parameter differentiated: gammaincinv in a and y (astropy's Sersic b_n), the
    incomplete gamma functions in a on both sides of x = a + 1 (series and continued fraction)."""
    b = sp.gammaincinv(2.0 * a, y)
    return np.sum(b * y + sp.gammainc(a, x) * 2.0 - sp.gammaincc(a * 0.5, x * 3.0)
                  + np.log(sp.gammaincc(a, x * 9.0)))


A = np.array([0.7, 1.5, 2.5, 6.0])


def shape_oracle(a, y, x):
    """The gradient of `shape_terms` by the chain rule from JAX's partial derivatives of
    gammainc in a and in x (gammaincc = 1 - gammainc), all taken in one call; gammaincinv's by
    the implicit-function rule at SciPy's root."""
    jax = _jax()
    b = sp.gammaincinv(2.0 * a, y)
    at_a = np.concatenate((a, a * 0.5, a, 2.0 * a))
    at_x = np.concatenate((x, x * 3.0, x * 9.0, b))
    p_a, p_x = (np.asarray(v).reshape(4, -1) for v in jax.jit(jax.grad(
        lambda s, t: jax.numpy.sum(jax.scipy.special.gammainc(s, t)), argnums=(0, 1)))(
            at_a, at_x))
    q3 = sp.gammaincc(a, x * 9.0)
    ga = 2.0 * p_a[0] + 0.5 * p_a[1] - p_a[2] / q3 - 2.0 * p_a[3] / p_x[3] * y
    gx = 2.0 * p_x[0] + 3.0 * p_x[1] - 9.0 * p_x[2] / q3
    return ga, b + y / p_x[3], gx


def test_shape_parameters_values_and_gradients():
    y = np.array([0.5, 0.2, 0.9, 0.65])
    value, grads = jitgrad.value_and_grad(shape_terms, wrt=(0, 1, 2))(A, y, XU * 2.0)
    np.testing.assert_allclose(value, shape_terms(A, y, XU * 2.0), rtol=1e-14)
    for k, (g, want) in enumerate(zip(grads, shape_oracle(A, y, XU * 2.0))):
        np.testing.assert_allclose(g, numeric_grad(shape_terms, (A, y, XU * 2.0), k), rtol=1e-6)
        np.testing.assert_allclose(g, want, rtol=1e-11)


def hypergeometric_terms(x):
    """scipy.special.hyp1f1 and hyp2f1 in their last argument (their compiled gradient is
    checked in test_heldout_forms_b3b, beside the real code's forms that use them)."""
    return np.sum(sp.hyp1f1(0.5, 1.5, -x * x) + sp.hyp2f1(1.0, 1.5, 2.5, -x))


def test_the_functions_above_use_every_scipy_kernel():
    used: set[str] = set()
    for fn, args in ((bessel_terms, (X,)), (cdf_terms, (XU, MU, C)),
                     (shape_terms, (A, A, A)), (hypergeometric_terms, (XU,))):
        graph = jbuild.build(jparse.FunctionSource.of(fn), [jtypes.type_of_value(a) for a in args])
        used |= {s.prim for s in jir.walk(graph.body) if isinstance(s, jir.Eqn)}
    assert set(SCIPY_FUNCTIONS) <= used, set(SCIPY_FUNCTIONS) - used


def second_order(x):
    return (sp.gammainc(2.5, x) + sp.betainc(2.0, 3.0, x * 0.25) + sp.erfinv(x * 0.3)
            + st.t.cdf(x, 3.0) + sp.j1(x) + sp.ive(1, x))


def test_second_derivative_through_the_rules():
    x = 1.3
    h = jitgrad.grad(jitgrad.grad(second_order))(x)
    first = jitgrad.grad(second_order)
    want = (first(x + 1e-5) - first(x - 1e-5)) / 2e-5
    assert abs(h - want) < 1e-7 * max(1.0, abs(want))


def shape_parameter(a, x):
    return np.sum(sp.gammainc(a, x))


def order_parameter(v, x):
    return np.sum(sp.jv(v, x))


def test_derivatives_in_orders_and_second_ones_in_shape_parameters_are_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="second derivative.* with respect to a"):
        jitgrad.grad(jitgrad.grad(shape_parameter))(2.0, XU)
    with pytest.raises(jitgrad.UnsupportedError, match="jv with respect to v"):
        jitgrad.grad(order_parameter)(1.5, XU)
    # in x alone, with the shape parameter an argument
    g = jitgrad.grad(shape_parameter, wrt=1)(2.0, XU)
    np.testing.assert_allclose(g, XU * np.exp(-XU), rtol=1e-13)
