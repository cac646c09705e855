"""Forms met in the sixth held-out batch of real code (issue #43, part hb6a: lmfit, epidemiology,
pharmacokinetics, POT, astropy, python-control/harold), in functions of our own:

* a ``(1, n)`` value written into a row, ``x[k, :] = x[k - 1, :] @ A.T + u[k - 1] * B.T``
  (harold's row-state simulation): its adjoint is the row's, given the value's leading axis of
  size 1 (it was summed into one entry before: a wrong gradient);
* ``super().__init__(...)`` and ``super().method(z)`` in a subclass (astropy's cosmology
  classes), the parent's methods built inline with ``self`` bound; ``np.vectorize`` of a
  method;
* a list comprehension read as only Python's list is (``self.evaluate(x, *[getattr(self, n)
  for n in self.param_names])``, astropy modeling's call), its loop over names known while
  building unrolled;
* ``np.polyval`` at ``1j * w`` (python-control's transfer functions), with ``np.unwrap(np.angle)``;
* ``scipy.linalg.solve_continuous_lyapunov``, ``solve_discrete_lyapunov`` and ``expm``
  (python-control's H2 norm, Gramians and zero-order hold; a compartment model's matrix
  exponential), and ``if log:`` of a dict (POT's log);
* ``y, x = np.mgrid[:ny, :nx]``, ``f(x, y, *params)`` of a parameter vector (its length the
  call's, checked), ``np.polyfit``, ``np.argsort(v, 0)`` of a matrix, ``np.empty_like(a,
  shape=...)`` then ``.fill`` (astropy modeling, NCA).

Each form's gradient is checked against central differences and JAX (the same computation
written with jax.numpy) as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own:
``python tests/test_heldout_forms_b6a.py`` runs them); one compiled gradient holds them all.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import jitgrad

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against, numeric_grad
from plain_python import assert_runs_as_plain_python

A = np.array([[0.98, 0.05], [-0.1, 0.95]])
B = np.array([[0.2], [0.5]])
U = np.sin(np.linspace(0.0, 3.0, 6))
P = np.array([1.3, 0.4, 0.9])
XS = np.linspace(-1.0, 2.0, 7)
W = np.logspace(-1.0, 1.2, 9)
Q = np.array([2.0, 2.2, 1.6, 1.5, 1.1])
IMAGE = (2.5 * np.exp(-0.5 * ((np.arange(6.0)[None, :] - 2.5) ** 2 / 2.0
                              + (np.arange(4.0)[:, None] - 1.5) ** 2 / 1.2))
         + 0.05 * np.cos(np.arange(24.0)).reshape(4, 6))


def rows_simulated(a, b, u):
    """harold's form: states as rows, a (1, n) input term written into a row."""
    x = np.zeros((len(u), a.shape[0]))
    for k in range(1, len(u)):
        x[k, :] = x[k - 1, :] @ a.T + u[k - 1] * b.T
    x[0, :] = b.T + 1.0  # (at the top level too)
    return np.sum(x ** 2)


def rows_simulated_jax(jnp, a, b, u):
    x = jnp.zeros((len(u), a.shape[0]))
    for k in range(1, len(u)):
        x = x.at[k, :].set((x[k - 1, :] @ a.T + u[k - 1] * b.T)[0])
    x = x.at[0, :].set((b.T + 1.0)[0])
    return jnp.sum(x ** 2)


class Background:
    def __init__(self, h, om):
        self.h = float(h)
        self.om = om
        self.ok = 1.0 - om - 0.7

    def density_scale(self, z):
        return 1.0

    def efunc(self, z):
        zp1 = 1.0 + z
        return np.sqrt(self.om * zp1 ** 3 + self.ok * zp1 ** 2 + 0.7 * self.density_scale(z))


class DarkEnergy(Background):
    def __init__(self, h, om, w0=-1.0, **kwargs):
        super().__init__(h, om, **kwargs)
        self.w0 = w0

    def density_scale(self, z):
        return (1.0 + z) ** (3.0 * (1.0 + self.w0)) * super().density_scale(z)


def subclass_distance(p, z):
    """astropy's cosmology form: ``super().__init__`` and ``super().method``; a method
    vectorised over redshifts (``np.vectorize(cosmo.efunc)(z)``)."""
    cosmo = DarkEnergy(70.0, p[0], w0=p[1])
    return cosmo.h * np.sum(1.0 / cosmo.efunc(z)) / 100.0 + 0.1 * np.sum(
        np.vectorize(cosmo.efunc)(z))


def subclass_distance_jax(jnp, p, z):
    zp1 = 1.0 + z
    ok = 1.0 - p[0] - 0.7
    e = jnp.sqrt(p[0] * zp1 ** 3 + ok * zp1 ** 2 + 0.7 * zp1 ** (3.0 * (1.0 + p[1])))
    return 70.0 * jnp.sum(1.0 / e) / 100.0 + 0.1 * jnp.sum(e)


class Model:
    param_names = ("amplitude", "mean", "stddev")

    def __init__(self, *args):
        for name, value in zip(self.param_names, args):
            setattr(self, name, value)

    @staticmethod
    def evaluate(x, amplitude, mean, stddev):
        return amplitude * np.exp(-0.5 * (x - mean) ** 2 / stddev ** 2)

    def __call__(self, x):
        return self.evaluate(x, *[getattr(self, n) for n in self.param_names])


def star_of_comprehension(p, x):
    """astropy modeling's call: ``*[getattr(self, n) for n in self.param_names]``, and a
    list of the parameters' squares joined to another (``+``)."""
    squares = [p[i] ** 2 for i in range(3)]
    both = squares + [p[0]]
    return np.sum(Model(p[0], p[1], p[2])(x)) + sum(both) + max(*squares)


def star_of_comprehension_jax(jnp, p, x):
    return (jnp.sum(p[0] * jnp.exp(-0.5 * (x - p[1]) ** 2 / p[2] ** 2)) + jnp.sum(p ** 2)
            + p[0] + jnp.max(p ** 2))


def frequency_response(num, den, w):
    """python-control's transfer function at ``1j * w`` (np.polyval of a complex argument),
    its gain in dB and its unwrapped phase; a coefficient list at a complex number."""
    h = np.polyval(num, 1j * w) / np.polyval(den, 1j * w)
    phase = np.unwrap(np.angle(h))
    return (np.sum(20.0 * np.log10(np.abs(h))) + np.sum(phase)
            + np.abs(np.polyval([1.0, den[1], 2.0], 0.5 + 2.0j)))


def frequency_response_jax(jnp, num, den, w):
    h = jnp.polyval(num, 1j * w) / jnp.polyval(den, 1j * w)
    phase = jnp.unwrap(jnp.angle(h))
    return (jnp.sum(20.0 * jnp.log10(jnp.abs(h))) + jnp.sum(phase)
            + jnp.abs(jnp.polyval(jnp.array([1.0, den[1], 2.0]), 0.5 + 2.0j)))


def matrix_equations(a, b, m):
    """python-control's forms: the H2 norm by solve_continuous_lyapunov, a discrete Gramian
    by solve_discrete_lyapunov, a zero-order hold by expm of a block matrix; ``if log:``
    of a dict (POT's log)."""
    import scipy.linalg

    p = scipy.linalg.solve_continuous_lyapunov(a - 2.0 * np.eye(2), -b @ b.T)
    wc = scipy.linalg.solve_discrete_lyapunov(0.5 * a, b @ b.T)
    block = np.zeros((3, 3))
    block[:2, :2] = a * m
    block[:2, 2:] = b
    ad = scipy.linalg.expm(block * 0.1)[:2, :2]
    log = {"err": []}
    out = np.trace(p) + np.linalg.slogdet(wc + np.eye(2))[1] + np.sum(ad ** 2)
    if log:
        out = out + np.sum(scipy.linalg.expm(a * m * 3.0))  # (a norm above theta_13: squared)
    return out


def matrix_equations_jax(jnp, a, b, m):
    import jax.scipy.linalg as jsl

    n = 2
    ac = a - 2.0 * jnp.eye(n)
    p = jnp.linalg.solve(jnp.kron(ac, jnp.eye(n)) + jnp.kron(jnp.eye(n), ac),
                         jnp.ravel(-b @ b.T)).reshape(n, n)
    ad_ = 0.5 * a
    wc = jnp.linalg.solve(jnp.eye(n * n) - jnp.kron(ad_, ad_), jnp.ravel(b @ b.T)).reshape(n, n)
    block = jnp.zeros((3, 3)).at[:2, :2].set(a * m).at[:2, 2:].set(b)
    ad = jsl.expm(block * 0.1)[:2, :2]
    return (jnp.trace(p) + jnp.linalg.slogdet(wc + jnp.eye(2))[1] + jnp.sum(ad ** 2)
            + jnp.sum(jsl.expm(a * m * 3.0)))


def gaussian2d(x, y, amplitude, x0, y0, sx, sy):
    return amplitude * np.exp(-0.5 * ((x - x0) ** 2 / sx ** 2 + (y - y0) ** 2 / sy ** 2))


def image_fit(params, image):
    """astropy's and NCA's forms: ``y, x = np.mgrid[:ny, :nx]``, ``f(x, y, *params)`` of a
    parameter vector, ``np.polyfit`` of a log tail, ``np.argsort(v, 0)`` of columns with
    take_along_axis, ``np.empty_like(a, shape=x.shape)`` filled."""
    ny, nx = image.shape
    y, x = np.mgrid[:ny, :nx]
    model = gaussian2d(x, y, *params)
    slope, intercept = np.polyfit(np.arange(4.0), np.log(image[0, 1:5] + 1.0), 1)
    order = np.argsort(image, 0)
    columns = np.take_along_axis(image * params[0], order, 0)
    const = np.empty_like(params, shape=image.shape, dtype=image.dtype)
    const.fill(0.5)
    return (np.sum((model - image) ** 2) + slope * 3.0 + intercept
            + np.sum(columns * np.arange(1.0, 1.0 + image.size).reshape(image.shape))
            + np.sum(const * image))


def image_fit_jax(jnp, params, image):
    ny, nx = image.shape
    y, x = jnp.mgrid[:ny, :nx]
    model = params[0] * jnp.exp(-0.5 * ((x - params[1]) ** 2 / params[3] ** 2
                                        + (y - params[2]) ** 2 / params[4] ** 2))
    slope, intercept = jnp.polyfit(jnp.arange(4.0), jnp.log(image[0, 1:5] + 1.0), 1)
    order = jnp.argsort(image, 0)
    columns = jnp.take_along_axis(image * params[0], order, 0)
    return (jnp.sum((model - image) ** 2) + slope * 3.0 + intercept
            + jnp.sum(columns * jnp.arange(1.0, 1.0 + image.size).reshape(image.shape))
            + jnp.sum(0.5 * image))


FORMS = [
    (rows_simulated, rows_simulated_jax, (A, B, U)),
    (subclass_distance, subclass_distance_jax, (np.array([0.3, -0.9]), XS + 1.0)),
    (star_of_comprehension, star_of_comprehension_jax, (P, XS)),
    (frequency_response, frequency_response_jax,
     (np.array([1.0, 2.0]), np.array([1.0, 0.8, 3.0, 0.5]), W)),
    (matrix_equations, matrix_equations_jax, (A, B, 1.7)),
    (image_fit, image_fit_jax, (Q, IMAGE)),
]


def everything(a, b, u, p, x, q):
    return (rows_simulated(a, b, u) + subclass_distance(p[:2] * 0.3, x + 1.0)
            + star_of_comprehension(p, x) + frequency_response(p[:2], np.append(p, 0.5), x + 2.0)
            + matrix_equations(a, b, p[0])
            + image_fit(q, a[0, 0] * IMAGE))


def everything_jax(jnp, a, b, u, p, x, q):
    return (rows_simulated_jax(jnp, a, b, u) + subclass_distance_jax(jnp, p[:2] * 0.3, x + 1.0)
            + star_of_comprehension_jax(jnp, p, x)
            + frequency_response_jax(jnp, p[:2], jnp.append(p, 0.5), x + 2.0)
            + matrix_equations_jax(jnp, a, b, p[0])
            + image_fit_jax(jnp, q, a[0, 0] * IMAGE))


def check(fn, fn_jax, args):
    """``fn``'s gradient against central differences and JAX's."""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    wrt = tuple(range(len(args)))
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    want = jax.grad(lambda *a: fn_jax(jnp, *a), argnums=wrt)(*(jnp.array(a) for a in args))
    check_against(fn, args, wrt, value, grads, want)


def test_every_form_as_plain_python():
    pytest.importorskip("jax")
    assert_runs_as_plain_python(__file__)


def test_compiled_gradient_matches_finite_differences_and_jax():
    pytest.importorskip("jax")
    check(everything, everything_jax, (A, B, U, P, XS, Q))


def test_is_between_two_names_of_one_array_stays_refused():
    """POT's ``if X is Y:``: whether two names are one array is not a value of the build
    (``y = x[:]`` or ``x.view()`` is another object in NumPy, the same value in the build)."""
    def same(x):
        y = x[:]
        return np.sum(x) if x is y else np.sum(x ** 2)

    with pytest.raises(jitgrad.JitgradError, match="comparison Is"):
        jitgrad.grad(same)(A)


def test_a_python_list_over_an_arguments_length():
    """A list read as only Python's is (``*vals``) whose loop runs over ``range(len(p))``: its
    loop unrolled for p's length in the call (hleft7; the build holds for that length, so a
    call of another length builds again, here with the wrong number of arguments as Python
    would: TypeError)."""
    def spread(p, x):
        vals = [p[i] for i in range(len(p))]
        return np.sum(Model.evaluate(x, *vals))

    value, g = jitgrad.value_and_grad(spread)(P, XS)
    np.testing.assert_allclose(value, spread(P, XS), rtol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(spread, (P, XS), 0), rtol=1e-6, atol=1e-8)
    with pytest.raises(jitgrad.JitgradError, match="TypeError"):
        jitgrad.grad(spread)(P[:2], XS)


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    for fn, fn_jax, args in FORMS:
        check(fn, fn_jax, args)
        print("ok", fn.__name__)
