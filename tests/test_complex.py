"""Complex numbers inside a gradient (issue #43): ``complex()``, ``1j``, ``np.complex128``,
`cmath`, NumPy's functions of complex values, computed as pairs of real values
(`jitgrad.lang.complex_pairs`).

Each compiled test compiles one gradient that mixes many complex operations, checked against
central finite differences and JAX (jax.numpy computes in complex arithmetic: an independent
oracle). The formulas' values, branch cuts included (the side of a cut chosen by the sign of a
zero imaginary part), are checked against `cmath` on numbers, without building anything.
"""

from __future__ import annotations

import cmath
import itertools
import os
import re
import sys
import warnings

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError
from jitgrad.core.errors import SignatureError
from jitgrad.lang import complex_pairs

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad
from plain_python import assert_runs_as_plain_python

CMATH = (cmath.exp, cmath.log, cmath.log10, cmath.sqrt, cmath.sin, cmath.cos, cmath.tan,
         cmath.sinh, cmath.cosh, cmath.tanh, cmath.asin, cmath.acos, cmath.atan, cmath.asinh,
         cmath.acosh, cmath.atanh)


@pytest.fixture(scope="module")
def jnp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jnp


def _jax_fns(jnp):
    # jax.grad of jnp.arccosh of a complex value has the wrong sign off the real axis (its
    # derivative's square root takes the other branch; its value is right): the identity
    # acosh z = log(z + sqrt(z + 1) sqrt(z - 1)) stands in
    return (jnp.exp, jnp.log, jnp.log10, jnp.sqrt, jnp.sin, jnp.cos, jnp.tan, jnp.sinh,
            jnp.cosh, jnp.tanh, jnp.arcsin, jnp.arccos, jnp.arctan, jnp.arcsinh,
            lambda z: jnp.log(z + jnp.sqrt(z + 1.0) * jnp.sqrt(z - 1.0)), jnp.arctanh)


# ----------------------------------------------------------------------------- compiled


def scalars(x, y):
    """Every elementary function of a complex scalar, and Python's arithmetic on them."""
    z = x + 1j * y
    w = (z * z.conjugate() + 2.0) / (z - 0.5j) - z ** 3 + 1.5 ** z
    s = abs(w) + w.real * 0.3 - w.imag
    for k, f in enumerate(CMATH):  # unrolled: the functions are known while building
        v = f(z * (0.4 + 0.15j * k) - 0.1 * k)
        s += v.real * (k + 1.0) + v.imag * 0.5
    if x > y:  # a complex value merged after a branch
        w = w * 1j
    return s + w.real + abs(1.0 / w) ** 2


def jax_scalars(jnp):
    def f(x, y):
        z = x + 1j * y
        w = (z * jnp.conj(z) + 2.0) / (z - 0.5j) - z ** 3 + 1.5 ** z
        s = jnp.abs(w) + w.real * 0.3 - w.imag
        for k, g in enumerate(_jax_fns(jnp)):
            v = g(z * (0.4 + 0.15j * k) - 0.1 * k)
            s += v.real * (k + 1.0) + v.imag * 0.5
        w = jnp.where(x > y, w * 1j, w)
        return s + w.real + jnp.abs(1.0 / w) ** 2
    return f


def library(x, y):
    """cmath's phase, polar and rect; complex() and np.complex128; the parts of real values."""
    z = complex(x, y * y)
    r, phi = cmath.polar(z)
    u = cmath.rect(r * 0.5, phi + x) + np.complex128(y) * cmath.phase(z - 2.0)
    s = u.real + u.imag * 2.0 + np.angle(u) + np.abs(u) + x.real * y.imag + y.conjugate()
    if cmath.isfinite(u) and not (cmath.isnan(z) or cmath.isinf(z)) and u != 0j:
        s = s + np.real(u * u) + np.imag(np.conj(u) * z)
    w = 0j
    for k in range(4):  # a loop carries a complex number as its two parts
        w = w * w * 0.5 + z
        if abs(w) > 3.0:
            break
    return s + w.real - w.imag


def jax_library(jnp):
    def f(x, y):
        z = x + 1j * y * y
        r, phi = jnp.abs(z), jnp.angle(z)
        u = r * 0.5 * jnp.exp(1j * (phi + x)) + y * jnp.angle(z - 2.0)
        s = u.real + u.imag * 2.0 + jnp.angle(u) + jnp.abs(u) + y
        s = s + jnp.real(u * u) + jnp.imag(jnp.conj(u) * z)
        w = 0j
        for k in range(4):
            w = w * w * 0.5 + z
            if jnp.abs(w) > 3.0:
                break
        return s + w.real - w.imag
    return f


def arrays(x):
    """Complex arrays: np.exp of an imaginary array, slices, sums, products, np.where,
    reshapes and NumPy's part functions."""
    z = np.exp(1j * x) * (x + 0.5j)
    w = z[1:] * np.conj(z[:-1]) + z[0]
    s = np.sum(np.abs(w) ** 2) + np.sum(np.angle(w)) + np.sum(z).real
    s += np.sum(np.real(z) * np.imag(z)) + np.mean(np.sqrt(z)).imag
    s += np.abs(np.vdot(z, 1j * z[::-1])) + np.sum(np.where(x > 0.5, z, np.conj(z)).imag)
    s += np.sum(np.abs(z.reshape(5, 1).T @ z)) + abs(sum([z[0], z[2] * z[3]]))
    return s + np.sum((x + 0j).imag + x.real ** 2) + np.sum(np.log(z * z + 1.0).imag)


def jax_arrays(jnp):
    def f(x):
        z = jnp.exp(1j * x) * (x + 0.5j)
        w = z[1:] * jnp.conj(z[:-1]) + z[0]
        s = jnp.sum(jnp.abs(w) ** 2) + jnp.sum(jnp.angle(w)) + jnp.sum(z).real
        s += jnp.sum(jnp.real(z) * jnp.imag(z)) + jnp.mean(jnp.sqrt(z)).imag
        s += jnp.abs(jnp.vdot(z, 1j * z[::-1])) + jnp.sum(jnp.where(x > 0.5, z, jnp.conj(z)).imag)
        s += jnp.sum(jnp.abs(z.reshape(5, 1).T @ z)) + jnp.abs(z[0] + z[2] * z[3])
        return s + jnp.sum(x ** 2) + jnp.sum(jnp.log(z * z + 1.0).imag)
    return f


def spectrum_of(xp):
    """np.fft compiled: the three ways the runtime transforms a row (lengths 3 and 5: a direct
    sum; 8: radix 2; 12: Bluestein's chirp) and their adjoints; the same source runs on
    jax.numpy."""
    def spectrum(x, y):
        X = xp.fft.fft2(x + 1j * x[::-1] ** 2)
        s = xp.sum(xp.abs(X) ** 2 * xp.arange(15.0).reshape(3, 5)) * 1e-2
        s += xp.sum(xp.fft.irfft(xp.fft.rfft(y) * (1.0 + 0.5j)) * y)
        return s + xp.sum(xp.abs(xp.fft.ifft(y[:8] * 1j + y[4:])))
    return spectrum


def spectra_of(xp):
    """np.fft, every transform: real and complex, along each axis and with each
    normalisation (checked as plain Python, `check_spectra`)."""
    def spectra(x, y):
        X = xp.fft.fft2(x + 1j * x[::-1] ** 2)
        s = xp.sum(xp.abs(X) ** 2 * xp.arange(15.0).reshape(3, 5)) * 1e-2
        R = xp.fft.rfft(y, norm="ortho")
        s += xp.sum(xp.fft.irfft(R * (1.0 + 0.5j) + R[::-1] * 0.1, norm="ortho") * y)
        s += xp.sum(xp.real(xp.fft.ifftn(X, axes=(0,))) ** 3)
        s += xp.sum(xp.fft.irfft2(xp.fft.rfft2(x)) * x[:, :4])
        s += xp.sum(xp.fft.irfftn(xp.fft.rfftn(x) * X[:, :3]) ** 2)
        s += xp.sum(xp.fft.fftshift(y) * xp.arange(12.0)) + xp.sum(xp.fft.ifftshift(x, axes=1) * x)
        s += xp.sum(xp.imag(xp.fft.fft(y[:9], norm="forward")) ** 2)
        s += xp.sum(xp.abs(xp.fft.ifft(y[:8] * 1j + y[4:]) * xp.arange(8.0)))
        return s + xp.sum(xp.fft.fftn(x[:, :, None] * y[None, None, :3]).real ** 2) * 1e-3
    return spectra


X = np.array([0.35, -0.72, 1.46, 0.91, -0.13])
M = np.array([[0.3, -1.2, 0.8, 0.45, -0.6], [1.1, 0.25, -0.35, 0.9, 0.05],
              [-0.7, 0.55, 1.3, -0.2, 0.65]])
Y = np.linspace(-1.0, 1.3, 12) ** 2 - 0.4


def test_scalars(jnp):
    import jax
    for x, y in ((0.7, 0.3), (-0.6, 0.4)):
        got = jitgrad.grad(scalars, wrt=(0, 1))(x, y)
        fd = (numeric_grad(scalars, (x, y), 0), numeric_grad(scalars, (x, y), 1))
        want = jax.grad(jax_scalars(jnp), argnums=(0, 1))(x, y)
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_library(jnp):
    import jax
    x, y = 0.6, 0.8
    got = jitgrad.grad(library, wrt=(0, 1))(x, y)
    want = jax.grad(jax_library(jnp), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(got, (numeric_grad(library, (x, y), 0),
                                     numeric_grad(library, (x, y), 1)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert jitgrad.value_and_grad(library)(x, y)[0] == pytest.approx(library(x, y), rel=1e-14)


def test_arrays(jnp):
    import jax
    got = jitgrad.grad(arrays)(X)
    np.testing.assert_allclose(got, numeric_grad(arrays, (X,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, jax.grad(jax_arrays(jnp))(X), rtol=1e-10, atol=1e-12)


def _check_transforms(of, jnp):
    import jax
    fn = of(np)
    value, got = jitgrad.value_and_grad(fn, wrt=(0, 1))(M, Y)
    assert value == pytest.approx(fn(M, Y), rel=1e-12)
    want = jax.grad(of(jnp), argnums=(0, 1))(M, Y)
    for k in (0, 1):
        np.testing.assert_allclose(got[k], numeric_grad(fn, (M, Y), k), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-12)


def test_spectrum(jnp):
    _check_transforms(spectrum_of, jnp)


def test_spectra_as_plain_python():
    """Every np.fft function (`spectra_of`) against finite differences and JAX, run as plain
    Python (``JITGRAD_DISABLE_JIT=1``, a process of its own): the compositions are the
    same code compiled or not, and compiled they would take a minute."""
    pytest.importorskip("jax")
    assert_runs_as_plain_python(__file__)


# ----------------------------------------------------------------------------- values


_POINTS = (-3.0, -1.0, -0.5, -0.0, 0.0, 0.3, 1.0, 1.5, 3.0)


@pytest.mark.parametrize("fn", CMATH, ids=lambda f: f.__name__)
def test_values_and_branch_cuts_are_cmaths(fn):
    """Each formula at points on and off the branch cuts, both signs of zero: cmath's value."""
    ours = complex_pairs.FUNCTIONS[fn]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in itertools.product(_POINTS, _POINTS):
            try:
                want = fn(complex(a, b))
            except (ValueError, OverflowError):
                continue
            got = ours(complex_pairs.Complex(a, b))
            assert isinstance(got, complex)
            assert abs(got - want) <= 1e-14 * max(1.0, abs(want)), (a, b, got, want)


def test_refused_with_what_to_write():
    def returns(x):
        return complex(x, 1.0)

    def carried(x):
        z = 0.0
        for _ in range(40):  # (a loop of a few constant iterations is unrolled: taken)
            z = z * z * 0.1 + complex(x, 1.0)
        return abs(z)

    def ordered(x):
        return x if complex(x, 1.0) < 1.0 else -x

    for fn, words in ((returns, "return abs(z)"), (carried, "start it as one before the loop (`z = 0j`)"),
                      (ordered, "compare abs(z)")):
        with pytest.raises(UnsupportedError, match=re.escape(words)):
            jitgrad.grad(fn)(0.5)
    with pytest.raises(SignatureError, match="grad and value_and_grad take complex arguments"):
        jitgrad.hessian(lambda x: x.real)(0.5 + 1j)  # (grad takes it: tests/test_complex_args)


if __name__ == "__main__":
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy

    _check_transforms(spectra_of, jax.numpy)
    print("np.fft: values and gradients agree with NumPy, finite differences and JAX")
