"""Special functions of a complex argument (issue #43): scipy.special.wofz (the Faddeeva
function, of a complex or a real argument) and scipy.special.loggamma of a complex argument,
as pairs of real primitives (`jitgrad.prims.complex_special`).

Values against SciPy's own over grids that cover both half-planes, small and large |z| and the
real axis; the gradient of one function that uses them all, compiled as users run it, against
central differences and an independent oracle: SciPy's wofz and complex digamma in the
derivatives w'(z) = -2 z w(z) + 2i/sqrt(pi) and loggamma'(z) = psi(z) (JAX has neither function
of a complex argument).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp
from fd import numeric_grad

import jitgrad
from jitgrad.prims.complex_special import complex_digamma, complex_loggamma, faddeeva

_AXIS = np.concatenate([-np.logspace(-3, 3, 25), [0.0], np.logspace(-3, 3, 25)])


def test_faddeeva_against_scipy():
    worst = 0.0
    for x in _AXIS:
        for y in np.concatenate([-np.logspace(-3, 1.3, 15), [0.0], np.logspace(-3, 3, 25)]):
            want = sp.wofz(complex(x, y))
            if np.isfinite(want):
                worst = max(worst, abs(complex(*faddeeva(x, y)) - want) / abs(want))
    assert worst < 1e-13, worst
    # the parts one at a time where a line shape reads them (near the real axis)
    for x in np.linspace(-8.0, 8.0, 81):
        for y in (0.05, 0.3, 1.0, 4.0):
            u, v = faddeeva(x, y)
            want = sp.wofz(complex(x, y))
            assert abs(u - want.real) <= 1e-13 * abs(want.real), (x, y)
            assert abs(v - want.imag) <= 1e-13 * abs(want.imag) + 1e-300, (x, y)
    assert faddeeva(2.5, 0.0)[0] == math.exp(-6.25)  # Re w(x) = exp(-x^2) on the real axis


def test_complex_loggamma_and_digamma_against_scipy():
    worst = [0.0, 0.0]
    for x in np.concatenate([-np.logspace(-2, 2.5, 15), np.linspace(-5, 5, 21), _AXIS[25:]]):
        for y in _AXIS:
            for k, (ours, theirs) in enumerate(((complex_loggamma, sp.loggamma),
                                                (complex_digamma, sp.digamma))):
                want = theirs(complex(x, y))
                if np.isfinite(want):
                    err = abs(complex(*ours(x, y)) - want) / max(abs(want), 1.0)
                    worst[k] = max(worst[k], err)
    assert max(worst) < 5e-14, worst
    # the negative real axis from above (SciPy's side), and the poles
    assert np.allclose(complex(*complex_loggamma(-2.5, -0.0)), sp.loggamma(-2.5 + 0j),
                       rtol=1e-14)
    assert all(math.isnan(v) for v in complex_loggamma(-3.0, 0.0))


def line_shapes(x, center, sigma, gamma, expon, skew):
    """A Voigt profile (Re w of a complex argument), the Pearson IV normalisation (Re log
    Gamma of a complex argument), Im w of a real argument (Dawson's function) and |w|."""
    z = (x - center + 1j * gamma) / (sigma * math.sqrt(2.0))
    voigt = np.real(sp.wofz(z)) / (sigma * math.sqrt(2.0 * math.pi))
    lg = sp.loggamma(expon + skew * 0.5j)
    norm = 2.0 * (np.real(lg) - sp.gammaln(expon)) + np.imag(lg) * 0.25
    dawson = np.imag(sp.wofz(x * 0.7)) + np.abs(sp.wofz(z - 2.0j))  # below the real axis
    return np.sum(voigt * np.exp(norm) + dawson)


def line_shapes_oracle(x, center, sigma, gamma, expon, skew):
    """The gradient of `line_shapes` by the chain rule, with SciPy's wofz and digamma."""
    s2 = sigma * math.sqrt(2.0)
    z = (x - center + 1j * gamma) / s2
    w = sp.wofz(z)
    dw = -2.0 * z * w + 2j / math.sqrt(math.pi)
    lg = sp.loggamma(expon + skew * 0.5j)
    psi = sp.digamma(expon + skew * 0.5j)
    norm = 2.0 * (lg.real - sp.gammaln(expon)) + lg.imag * 0.25
    scale = math.exp(norm) / (sigma * math.sqrt(2.0 * math.pi))
    voigt = w.real * scale
    # d(voigt)/d(parameter) through z, then the prefactor; |w(z - 2i)| and Im w(0.7 x)
    z2 = z - 2.0j
    w2 = sp.wofz(z2)
    dw2 = -2.0 * z2 * w2 + 2j / math.sqrt(math.pi)
    dz_dx, dz_dc, dz_dg = 1.0 / s2, -1.0 / s2, 1j / s2
    dz_ds = -z / sigma
    w_d = np.imag(-2.0 * (0.7 * x) * sp.wofz(0.7 * x) + 2j / math.sqrt(math.pi)) * 0.7

    def through(dz):  # d Re w * scale + d |w2|, for a change dz of z (the same for z2)
        return (dw * dz).real * scale + ((np.conj(w2) * dw2 * dz).real / np.abs(w2))

    g_x = through(dz_dx) + w_d
    g_c = np.sum(through(dz_dc))
    g_s = np.sum(through(dz_ds) - voigt / sigma)
    g_g = np.sum(through(dz_dg))
    d_norm_e = 2.0 * (psi.real - sp.digamma(expon)) + psi.imag * 0.25
    d_norm_k = 2.0 * (-psi.imag * 0.5) + psi.real * 0.5 * 0.25
    return g_x, g_c, g_s, g_g, np.sum(voigt) * d_norm_e, np.sum(voigt) * d_norm_k


ARGS = (np.linspace(-2.0, 3.0, 7), 0.3, 0.8, 0.5, 1.5, 0.4)


def test_line_shapes_compiled_against_differences_and_scipy():
    wrt = tuple(range(6))
    value, grads = jitgrad.value_and_grad(line_shapes, wrt=wrt)(*ARGS)
    np.testing.assert_allclose(value, line_shapes(*ARGS), rtol=1e-13)
    for k, (g, want) in enumerate(zip(grads, line_shapes_oracle(*ARGS))):
        np.testing.assert_allclose(g, numeric_grad(line_shapes, ARGS, k), rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-14)


def second_of_loggamma(y):
    return np.real(sp.loggamma(1.5 + 1j * y))


def test_second_derivative_of_complex_loggamma_is_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="complex digamma"):
        jitgrad.grad(jitgrad.grad(second_of_loggamma))(0.3)
