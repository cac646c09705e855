"""Forms met in the ninth held-out batch of real code (issue #43, part hb9a: gravitational
lensing, supernova light curves, Fourier optics, tomography, crystallography, wind-turbine
rotors), in functions of our own:

- a ``scipy.interpolate.RectBivariateSpline`` made outside, called at values of the graph by
  ``.ev(x, y)`` (an airfoil's lift over angle and Reynolds number) and on a grid, with ``dx``,
  clamped outside its knots as FITPACK clamps;
- ``math.factorial`` of a loop's counter (a Zernike radial sum), ``np.radians`` of a list of
  values, ``np.linspace(..., endpoint=False)``;
- two lists appended in one loop, one of them a list of Python lists (Python's, the loop
  unrolled) and the other of arrays;
- ``np.trapezoid(y, x, axis=1)`` of a matrix, ``np.fft.fftfreq`` / ``rfftfreq`` and
  ``np.indices`` of an argument's size, ``np.pad`` by widths made of an argument's size,
  ``zip(image.shape, pad)``, ``scipy.fft.fft`` / ``ifft`` (of complex values too);
- ``np.zeros_like(x, dtype=complex)`` of a real array;
- a global dict keyed by pairs of names read at a key made from a list of names indexed by the
  counter of a loop over ``range(len(x))`` (a few rows: unrolled).

Each is checked against central finite differences at two steps as plain Python, in a process
of its own (``JITGRAD_DISABLE_JIT=1``), the spline also against SciPy's own derivatives; one
small gradient of the spline is checked compiled.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import scipy.fft
from scipy import interpolate

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_two_steps
from plain_python import assert_runs_as_plain_python

import jitgrad

X = np.array([0.7, 0.3, 1.1, 0.45])
GX, GY = np.linspace(-0.2, 0.4, 7), np.array([1.0, 2.0, 3.5, 5.0, 8.0])
TABLE = np.sin(3 * GX)[:, None] * np.log(GY)[None, :] + GX[:, None] ** 2
POLAR = interpolate.RectBivariateSpline(GX, GY, TABLE, kx=3, ky=2)
PAIRS = {("a", "b"): 1.5, ("b", "a"): 0.5, ("a", "a"): 2.0}
SCALES = {"a": [0.3, 1.0], "b": [0.8, 2.0]}


def airfoil(x):
    """``.ev`` at points, a grid call, ``dx=1``, and a point outside the knots (clamped)."""
    alpha = x[:3] * 0.4 - 0.1
    re = 2.0 + 4.0 * x[1:]
    cl = POLAR.ev(alpha, re)
    grid = POLAR(alpha[1:3], re[:2])
    slope = POLAR.ev(alpha, re, dx=1)
    return np.sum(cl) + np.sum(grid ** 2) + np.sum(slope) * 0.1 + POLAR.ev(x[0] + 0.5, 9.0)


def zernike_radial(x):
    """``math.factorial`` of a loop's counter, ``np.radians`` of a list, a linspace without
    its end point."""
    rho = x[0]
    total = 0.0
    for k in range(int(x.shape[0]) - 1):
        total += (-1) ** k * math.factorial(4 - k) / (math.factorial(k) * math.factorial(3 - k)) \
            * rho ** (4 - 2 * k)
    angles = np.radians([x[1] * 90, x[2] * 45])
    theta = np.linspace(0.0, np.pi, 4, endpoint=False)
    return total + np.sum(np.cos(angles)) + np.sum(np.sin(theta * x[3]))


def two_lists(x):
    """A list of Python lists and a list of rows appended in one loop (pymatgen's XRD)."""
    coeffs = []
    rows = []
    for name, row in zip(["a", "b"], [x[:2], x[2:]]):
        coeffs.append(SCALES[name])
        rows.append(row)
    total = 0.0
    for co, r in zip(coeffs, rows):
        total += co[0] * np.sum(r ** 2) + co[1] * r[0]
    return total


def sizes_at_run_time(x):
    """trapezoid along an axis; fftfreq, rfftfreq, indices, pad and zip of an argument's
    size; scipy.fft of a complex value."""
    m = np.outer(x, x[::-1]) + np.cos(x)[:, None]
    integral = np.trapezoid(m, x, axis=1) + np.trapezoid(m * 2, axis=0, dx=0.5)
    n = x.shape[0]
    f = np.fft.fftfreq(n, d=0.5)
    rf = np.fft.rfftfreq(n + 1)
    ii, jj = np.indices(m.shape)
    pad = [int(np.ceil(1.5 * s - s)) for s in m.shape]
    before = [p // 2 for s, p in zip(m.shape, pad)]
    padded = np.pad(m, [(b, p - b) for b, p in zip(before, pad)], mode="constant")
    spectrum = scipy.fft.fft(x) * np.exp(-2j * np.pi * f * x[0])
    back = np.real(scipy.fft.ifft(spectrum))
    return (np.sum(integral) + np.sum(np.cos(f * x[1])) + np.sum(rf) * x[2]
            + np.sum(ii * m) - np.sum(jj * m) + np.sum(padded ** 2) * 0.1 + np.sum(back ** 2))


def pair_table(x, names=("a", "b", "a", "b")):
    """``PAIRS[(names[i], names[j])]`` in loops over ``range(len(x))`` (unrolled for the
    example's size: the key a name pair known then)."""
    n = len(x)
    total = 0.0
    for i in range(n):
        for j in range(n):
            key = (names[i], names[j])
            if key not in PAIRS:
                continue
            total = total + PAIRS[key] * x[i] * x[j]
    return total


def complex_series(x):
    """``np.zeros_like(phi, dtype=complex)`` then a series added into it (lenstronomy's EPL)."""
    omegas = np.zeros_like(x, dtype=complex)
    term = np.exp(1j * x)
    for n in range(1, 4):
        omegas += term
        term *= (2 * n - 0.5) / (2 * n + 0.5) * -0.3 * np.exp(2j * x)
    return np.sum(omegas.real * 2.0 + omegas.imag)


FORMS = [airfoil, zernike_radial, two_lists, sizes_at_run_time, pair_table, complex_series]


def check_forms():
    for fn in FORMS:
        value, g = jitgrad.value_and_grad(fn)(X)
        check_two_steps(fn, (X,), (0,), value, (g,))
    a, r = np.array([-0.15, 0.1, 0.35]), np.array([1.5, 4.0, 7.0])  # against SciPy's own
    ga, gr = jitgrad.grad(lambda a, r: np.sum(POLAR.ev(a, r)), wrt=(0, 1))(a, r)  # derivatives
    np.testing.assert_allclose(ga, POLAR.ev(a, r, dx=1), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gr, POLAR.ev(a, r, dy=1), rtol=1e-10, atol=1e-12)
    for n in (5, 6):  # fftfreq of an odd and an even size: NumPy's values
        y = np.linspace(0.1, 0.9, n)
        got = jitgrad.value_and_grad(lambda y: np.sum(np.fft.fftfreq(y.shape[0]) * y))(y)[0]
        np.testing.assert_allclose(got, np.sum(np.fft.fftfreq(n) * y), rtol=1e-14)


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


BILINEAR = interpolate.RectBivariateSpline(GX, GY, TABLE, kx=1, ky=1)  # (few terms: cheap to compile)


def compiled_form(x):
    return np.sum(BILINEAR.ev(x * 0.3 - 0.1, 2.0 + 3.0 * x) ** 2)


def test_forms_compiled():
    """One compiled gradient: a RectBivariateSpline's .ev (the rest: plain Python)."""
    value, g = jitgrad.value_and_grad(compiled_form)(X)
    check_two_steps(compiled_form, (X,), (0,), value, (g,))


if __name__ == "__main__":
    check_forms()
    print("hb9a's forms: gradients agree with central differences")
