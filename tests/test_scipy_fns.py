"""SciPy functions of arrays that Numba users call (issue #25, item 6): `scipy.optimize.rosen`
and `rosen_der`, `scipy.special` `gammaln`, `gamma`, `digamma`/`psi`, `factorial`, `xlogy`
(with `erf`, `expit`, `logsumexp` from before), `math.lgamma`/`math.gamma`, and (issue #43)
`scipy.signal.convolve`/`convolve2d` of matrices.

Values against SciPy's own, gradients against central differences, second derivatives
(forward over reverse, through trigamma) against differences of the gradient.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize as so
import scipy.signal as ss
import scipy.special as sp
from fd import numeric_grad

import jitgrad

X = np.array([-3.7, -0.5, 0.1, 0.9, 1.0, 2.5, 7.3, 11.0, 55.5, 300.0])


def special_value(x, which):
    if which == "gammaln":
        return sp.gammaln(x)
    if which == "gamma":
        return sp.gamma(x)
    if which == "digamma":
        return sp.digamma(x)
    return sp.psi(x)


@pytest.mark.parametrize("which", ["gammaln", "gamma", "digamma", "psi"])
def test_gamma_family_values_match_scipy_in_compiled_code(which):
    value, _ = jitgrad.vjp(special_value, X, which)
    np.testing.assert_allclose(value, special_value(X, which), rtol=1e-13, atol=1e-13)


def gamma_terms(x):
    return np.sum(sp.gammaln(x) + 0.01 * sp.gamma(x) + sp.digamma(x) * 0.5)


def test_gamma_family_gradients_and_hessians():
    x = np.array([0.4, 1.7, 3.2, -1.5])
    g = jitgrad.grad(gamma_terms)(x)
    np.testing.assert_allclose(g, numeric_grad(gamma_terms, (x,), 0), rtol=1e-6)
    # the derivative of digamma is trigamma: against SciPy's polygamma(1, x)
    np.testing.assert_allclose(jitgrad.grad(lambda_free_digamma_sum)(x),
                               sp.polygamma(1, x), rtol=1e-11)


def lambda_free_digamma_sum(x):
    return np.sum(sp.psi(x))


def gammaln_sum(x):
    return np.sum(sp.gammaln(x) * x)


def test_second_derivative_of_gammaln_uses_trigamma():
    x = np.array([0.6, 2.5, 9.0])
    h = jitgrad.hessian(gammaln_sum)(x)
    want = np.diag(2.0 * sp.digamma(x) + x * sp.polygamma(1, x))
    np.testing.assert_allclose(h, want, rtol=1e-10, atol=1e-12)


def third(x):
    return sp.gammaln(x) * 2.0


def fourth(x):
    return sp.digamma(x) * x


def test_third_derivative_through_tetragamma_and_a_fourth_refused():
    x = 1.7  # the third derivative of gammaln is psi_2 (tetragamma)
    got = jitgrad.grad(jitgrad.grad(jitgrad.grad(third)))(x)
    assert got == pytest.approx(2.0 * sp.polygamma(2, x), rel=1e-12)
    with pytest.raises(jitgrad.UnsupportedError, match="derivative of tetragamma"):
        jitgrad.grad(jitgrad.grad(jitgrad.grad(fourth)))(x)  # needs psi_3


def polygammas(x):
    return np.sum(sp.polygamma(0, x) + sp.polygamma(1, x))


def order_two(x):
    return np.sum(sp.polygamma(2, x))


def test_polygamma_of_orders_0_1_2():
    x = np.array([-2.3, 0.4, 3.0, 12.5])
    v, g = jitgrad.value_and_grad(polygammas)(x)
    assert v == pytest.approx(polygammas(x), rel=1e-12)
    np.testing.assert_allclose(g, sp.polygamma(1, x) + sp.polygamma(2, x), rtol=1e-10)
    value, _ = jitgrad.jvp(order_two, (x,), (None,))  # the value alone: no derivative
    assert value == pytest.approx(order_two(x), rel=1e-12)
    with pytest.raises(jitgrad.UnsupportedError, match="derivative of tetragamma"):
        jitgrad.grad(order_two)(x)  # psi_3 is not written


def counts_loss(lam, k):
    return np.sum(sp.xlogy(k, lam) - lam - np.log(sp.factorial(k)))


def test_xlogy_and_factorial_at_zero_and_negative_counts():
    lam = np.array([0.5, 1.5, 2.5, 0.7])
    k = np.array([0.0, 2.0, 5.0, -1.0])
    v, g = jitgrad.value_and_grad(counts_loss)(lam, k)
    assert np.isinf(v) and v == counts_loss(lam, k)  # log(factorial(-1)) = log(0)
    np.testing.assert_allclose(g, k / lam - 1.0)  # xlogy(0, lam): no gradient at k == 0
    g_zero = jitgrad.grad(xlogy_sum, wrt=(0, 1))(np.array([0.0, 2.0]), np.array([0.0, 3.0]))
    np.testing.assert_allclose(g_zero[1], [0.0, 2.0 / 3.0])  # 0 * log(0) is 0, flat in y
    np.testing.assert_allclose(g_zero[0], [0.0, math.log(3.0)])


def xlogy_sum(x, y):
    return np.sum(sp.xlogy(x, y))


def rosen_value_and_der(x):
    return so.rosen(x) + np.sum(so.rosen_der(x) * x)


def test_rosen_and_rosen_der_match_scipy():
    x = np.array([1.2, 0.8, -0.3, 1.7, 0.5])
    value, _ = jitgrad.vjp(so_rosen_der_of, x)
    np.testing.assert_allclose(value, so.rosen_der(x), rtol=1e-14)
    g = jitgrad.grad(rosen_value_and_der)(x)
    np.testing.assert_allclose(g, numeric_grad(rosen_value_and_der, (x,), 0), rtol=1e-6)
    np.testing.assert_allclose(jitgrad.grad(rosen_only)(x), so.rosen_der(x), rtol=1e-13)
    h = jitgrad.hessian(rosen_only)(x)
    np.testing.assert_allclose(h, so.rosen_hess(x), rtol=1e-12, atol=1e-10)


def so_rosen_der_of(x):
    return so.rosen_der(x)


def rosen_only(x):
    return so.rosen(x)


def rosen_columns(x):
    return np.sum(so.rosen(x))  # along axis 0 of a matrix: one value per column


def test_rosen_of_a_matrix_is_per_column_as_scipy():
    x = np.array([[1.2, 0.3], [0.8, -0.5], [-0.3, 1.1]])
    v, g = jitgrad.value_and_grad(rosen_columns)(x)
    np.testing.assert_allclose(v, np.sum(so.rosen(x)))
    np.testing.assert_allclose(g, numeric_grad(rosen_columns, (x,), 0), rtol=1e-6)


def math_gamma_functions(a):
    return math.lgamma(a) + 0.1 * math.gamma(a)


def test_math_lgamma_and_gamma_on_scalars():
    a = 2.7
    g = jitgrad.grad(math_gamma_functions)(a)
    assert g == pytest.approx(sp.digamma(a) + 0.1 * sp.gamma(a) * sp.digamma(a), rel=1e-13)



def convolution_same(x, k):
    return np.sum(ss.convolve2d(x, k, mode="same") * x)


def test_two_dimensional_convolution():
    """scipy.signal.convolve2d (the full convolution of matrices, cut to 'same'): values as
    SciPy's, gradients against central differences and JAX's jax.scipy.signal. (One compile:
    'full', 'valid' and the arguments the other way round are conformance rows.)"""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def with_jax(x, k):
        return jax.numpy.sum(jax.scipy.signal.convolve2d(x, k, mode="same") * x)

    rng = np.random.default_rng(3)
    x, k = rng.normal(size=(4, 5)), rng.normal(size=(2, 3))
    value, grads = jitgrad.value_and_grad(convolution_same, wrt=(0, 1))(x, k)
    np.testing.assert_allclose(value, convolution_same(x, k), rtol=1e-13)
    want = jax.jit(jax.grad(with_jax, argnums=(0, 1)))(x, k)
    for i in range(2):
        np.testing.assert_allclose(grads[i], numeric_grad(convolution_same, (x, k), i), rtol=1e-6)
        np.testing.assert_allclose(grads[i], np.asarray(want[i]), rtol=1e-11)
