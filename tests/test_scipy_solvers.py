"""SciPy's solvers and statistics as numerical code calls them (issue #43): a root of a
function of the user's found by ``scipy.optimize.brentq``, ``newton`` or ``root_scalar`` (a
closure over differentiated values, extra ``args=``), ``scipy.stats.pearsonr``,
``spearmanr`` and ``rankdata``, ``scipy.integrate.odeint``, and a loop of a
few iterations whose carried array shrinks. Compiled with Numba as users run them.

Oracles: SciPy's own values; central differences; JAX (the root's derivative by the implicit
function theorem with ``jax.grad`` of the same function at SciPy's root, the correlation
written in ``jax.numpy``, ``jax.experimental.ode.odeint``, the loop as written).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.optimize
import scipy.stats
from fd import numeric_grad

import jitgrad


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _kepler(E, M, e):
    return E - e * np.sin(E) - M


def roots_and_correlation(M, e, x, y):
    """Kepler's equation for the eccentric anomaly (args=), a closure over e (brenth), and
    the correlation of two series with its p-value."""
    E = scipy.optimize.brentq(_kepler, 0.0, 2.0 * np.pi, args=(M, e), xtol=1e-14)
    h = lambda s: s ** 3 + e * s - M
    s = scipy.optimize.brenth(h, 0.0, 3.0, xtol=1e-14)
    r, p = scipy.stats.pearsonr(x, y * y)
    return E * np.cos(E) + s ** 2 + r + 0.5 * p


def _jax_roots_and_correlation(jnp, jax, E0, s0, M, e, x, y):

    def implicit(f, x0):  # x0 + the first-order change: f's derivative in theta / in x
        return x0 - (f(x0) - jax.lax.stop_gradient(f(x0))) / jax.lax.stop_gradient(
            jax.grad(f)(x0))

    E = implicit(lambda E: E - e * jnp.sin(E) - M, E0)
    s = implicit(lambda s: s ** 3 + e * s - M, s0)
    yy = y * y
    dx, dy = x - jnp.mean(x), yy - jnp.mean(yy)
    r = jnp.sum(dx * dy) / jnp.sqrt(jnp.sum(dx * dx) * jnp.sum(dy * dy))
    n = x.shape[0]
    df = n - 2  # the two-sided p-value in its beta form: I_{df / (df + t^2)}(df / 2, 1 / 2)
    t2 = r * r * df / (1 - r * r)
    p = jax.scipy.special.betainc(df / 2, 0.5, df / (df + t2))
    return E * jnp.cos(E) + s ** 2 + r + 0.5 * p


def test_brentq_roots_and_pearsonr_against_scipy_differences_and_jax():
    x = np.array([0.3, 1.1, -0.4, 2.0, 0.9, -1.3, 0.5])
    y = np.array([0.8, 1.4, 0.2, 1.9, 0.7, -0.6, 1.1])
    args = (1.1, 0.3, x, y)
    value, grads = jitgrad.value_and_grad(roots_and_correlation, wrt=(0, 1, 2, 3))(*args)
    np.testing.assert_allclose(value, roots_and_correlation(*args), rtol=1e-12)
    jax = _jax()
    M, e = args[:2]  # SciPy's roots, where JAX takes the derivative
    E0 = scipy.optimize.brentq(_kepler, 0.0, 2 * np.pi, args=(M, e), xtol=1e-15)
    s0 = scipy.optimize.brentq(lambda s: s ** 3 + e * s - M, 0.0, 3.0, xtol=1e-15)
    want = jax.grad(lambda *a: _jax_roots_and_correlation(jax.numpy, jax, E0, s0, *a),
                    argnums=(0, 1, 2, 3))(*args)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, numeric_grad(roots_and_correlation, args, k),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g, want[k], rtol=1e-9, atol=1e-12)


def test_a_second_derivative_through_a_root_is_refused_and_full_output_too():
    with pytest.raises(jitgrad.UnsupportedError, match="second derivative of a root"):
        jitgrad.hessian(lambda_free_root)(0.7)

    def with_report(c):
        return scipy.optimize.brentq(lambda x: x - c, -1.0, 1.0, full_output=True)[0]

    with pytest.raises(jitgrad.UnsupportedError, match="full_output=True"):
        jitgrad.grad(with_report)(0.2)


def lambda_free_root(c):
    return scipy.optimize.brentq(_kepler, 0.0, 2.0 * np.pi, args=(c, 0.2)) ** 2


def _cubic(x, a):
    return x ** 3 - a * x - 1.0


def _cubic_slope(x, a):
    return 3.0 * x ** 2 - a


def _cubic_curvature(x, a):
    return 6.0 * x


def newton_family(a, b):
    """scipy.optimize.newton by Newton's method, Halley's and the secant (on a closure), and
    root_scalar by its default bracketing method, by Newton's on a function returning its
    own slope (fprime=True), by Newton's on differences (no fprime), by the secant from two
    points, and by toms748; one result's converged flag read at run time."""
    r1 = scipy.optimize.newton(_cubic, 1.5, fprime=_cubic_slope, args=(a,))
    r2 = scipy.optimize.newton(_cubic, 1.5, fprime=_cubic_slope, fprime2=_cubic_curvature,
                               args=(b,))
    r3 = scipy.optimize.newton(lambda x: np.cos(x) - b * x, 0.5, tol=1e-12)
    both = lambda x: (x * np.exp(x) - a, (x + 1.0) * np.exp(x))
    s1 = scipy.optimize.root_scalar(both, x0=0.5, fprime=True, method="newton", xtol=1e-12)
    s2 = scipy.optimize.root_scalar(_cubic, args=(b,), bracket=[1.0, 3.0], xtol=1e-14)
    s3 = scipy.optimize.root_scalar(lambda x: np.tanh(x) - 0.3 * a, x0=0.1, xtol=1e-12)
    s4 = scipy.optimize.root_scalar(_cubic, args=(a,), method="secant", x0=1.0, x1=2.0,
                                    xtol=1e-13)
    s5 = scipy.optimize.root_scalar(_cubic, args=(a,), method="toms748", bracket=(1.0, 3.0))
    scale = 1.0 if s3.converged else 2.0
    return (r1 + r2 ** 2 + np.sin(r3) + s1.root * b + s2.root + scale * s3.root
            + s4.root * s5.root)


def test_newton_and_root_scalar_against_scipy_differences_and_jax():
    args = (2.0, 2.5)
    value, grads = jitgrad.value_and_grad(newton_family, wrt=(0, 1))(*args)
    np.testing.assert_allclose(value, newton_family(*args), rtol=1e-9)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, numeric_grad(newton_family, args, k), rtol=1e-6)
    jax = _jax()
    jnp = jax.numpy
    a, b = args
    tight = lambda f, lo, hi: scipy.optimize.brentq(f, lo, hi, xtol=1e-15)
    roots = [tight(lambda x: _cubic(x, a), 1.0, 3.0), tight(lambda x: _cubic(x, b), 1.0, 3.0),
             tight(lambda x: np.cos(x) - b * x, 0.0, 1.0),
             tight(lambda x: x * np.exp(x) - a, 0.0, 2.0),
             tight(lambda x: np.tanh(x) - 0.3 * a, 0.0, 2.0)]

    def implicit(f, x0):  # x0 + the first-order change: f's derivative in theta / in x
        return x0 - (f(x0) - jax.lax.stop_gradient(f(x0))) / jax.lax.stop_gradient(
            jax.grad(f)(x0))

    def jax_family(a, b):
        r1 = implicit(lambda x: x ** 3 - a * x - 1.0, roots[0])
        r2 = implicit(lambda x: x ** 3 - b * x - 1.0, roots[1])
        r3 = implicit(lambda x: jnp.cos(x) - b * x, roots[2])
        w = implicit(lambda x: x * jnp.exp(x) - a, roots[3])
        t = implicit(lambda x: jnp.tanh(x) - 0.3 * a, roots[4])
        return r1 + r2 ** 2 + jnp.sin(r3) + w * b + r2 + t + r1 * r1

    want = jax.grad(jax_family, argnums=(0, 1))(*args)
    np.testing.assert_allclose(grads, want, rtol=1e-8)


def test_root_finders_refuse_what_they_cannot_differentiate():
    def vectorized(c):  # SciPy's vectorized newton, of an array of starting points
        return np.sum(scipy.optimize.newton(_cubic, np.array([1.5, 1.6]), args=(c,)))

    with pytest.raises(jitgrad.UnsupportedError, match="once per entry in a loop"):
        jitgrad.grad(vectorized)(2.0)

    def unknown_method(c):
        return scipy.optimize.root_scalar(_cubic, args=(c,), method="anderson", x0=1.0).root

    with pytest.raises(jitgrad.UnsupportedError, match="brentq, brenth"):
        jitgrad.grad(unknown_method)(2.0)

    def minimized(c):  # SciPy's own code calling a function defined in the differentiated one
        return scipy.optimize.minimize_scalar(lambda x: (x - c) ** 2).x

    with pytest.raises(jitgrad.UnsupportedError, match="minimize_scalar"):
        jitgrad.grad(minimized)(2.0)


def ranked(x, y):
    """Spearman's correlation (with ties) and its p-value, rankdata by each method, and a
    search whose `and` guards an index (x[j] is read only where j < n)."""
    r, p = scipy.stats.spearmanr(x, y)
    one_sided = scipy.stats.spearmanr(x, y ** 2, alternative="greater")
    ranks = (scipy.stats.rankdata(x) + 0.1 * scipy.stats.rankdata(y, method="dense")
             + 0.01 * scipy.stats.rankdata(x, "min") + 0.001 * scipy.stats.rankdata(x, "max")
             + 1e-4 * scipy.stats.rankdata(x, "ordinal"))
    n = x.shape[0]
    j = 0
    while j < n and x[j] < 1.5:
        j += 1
    return (r + 0.5 * p + one_sided.statistic + one_sided.pvalue
            + np.sum(ranks * np.arange(n)) + np.sum(x[:j] * y[:j]) + np.sum(np.sin(x) * y))


def test_spearmanr_and_rankdata_against_scipy_and_differences():
    """Ranks are step functions of the data: the derivative of those terms is zero where it
    exists (between ties), so the gradient is that of the smooth terms, checked against
    central differences (steps far smaller than the gaps between entries)."""
    x = np.array([0.3, 1.1, -0.4, 2.0, 1.1, -1.3, 0.5])  # a tie in x
    y = np.array([0.8, 1.4, 0.2, 1.9, 0.7, -0.6, 1.1])
    vg = jitgrad.value_and_grad(ranked, wrt=(0, 1))
    value, grads = vg(x, y)
    np.testing.assert_allclose(value, ranked(x, y), rtol=1e-12)
    j = 3  # the first entry of x at or above 1.5
    np.testing.assert_allclose(grads[0], np.r_[y[:j], np.zeros(4)] + np.cos(x) * y,
                               rtol=1e-12)
    np.testing.assert_allclose(grads[1], np.r_[x[:j], np.zeros(4)] + np.sin(x), rtol=1e-12)
    x_apart = x + np.array([0, 0, 0, 0, 0.01, 0, 0])  # no tie: differences are defined
    for k, g in enumerate(vg(x_apart, y)[1]):
        np.testing.assert_allclose(g, numeric_grad(ranked, (x_apart, y), k, eps=1e-7),
                                   rtol=1e-6, atol=1e-8)


def _predator_prey(y, t, a, b):
    return np.array([a * y[0] - b * y[0] * y[1], -y[1] + 0.5 * y[0] * y[1] + 0.1 * np.sin(t)])


def trajectory_loss(a, b, y0):
    t = np.linspace(0.0, 2.5, 6)
    ys = scipy.integrate.odeint(_predator_prey, y0, t, args=(a, b), rtol=1e-9, atol=1e-9)
    return np.sum(ys[:, 0] ** 2) + np.sum(ys[1:, 1])


def test_odeint_values_against_scipy_gradients_against_differences_and_jax():
    args = (1.2, 0.7, np.array([1.0, 0.5]))
    vg = jitgrad.value_and_grad(trajectory_loss, wrt=(0, 1, 2))
    value, grads = vg(*args)
    np.testing.assert_allclose(value, trajectory_loss(*args), rtol=1e-6)  # SciPy's LSODA

    def own(*a):  # central differences of the same (jitgrad's) solve
        return vg(*a)[0]

    jax = _jax()
    jnp = jax.numpy
    from jax.experimental.ode import odeint as jax_odeint

    def jax_loss(a, b, y0):
        f = lambda y, t: jnp.array([a * y[0] - b * y[0] * y[1],
                                    -y[1] + 0.5 * y[0] * y[1] + 0.1 * jnp.sin(t)])
        ys = jax_odeint(f, y0, jnp.linspace(0.0, 2.5, 6), rtol=1e-10, atol=1e-10)
        return jnp.sum(ys[:, 0] ** 2) + jnp.sum(ys[1:, 1])

    want = jax.grad(jax_loss, argnums=(0, 1, 2))(*args)
    for k, g in enumerate(grads):
        np.testing.assert_allclose(g, numeric_grad(own, args, k, eps=1e-5), rtol=1e-5,
                                   atol=1e-7)
        np.testing.assert_allclose(g, want[k], rtol=1e-5, atol=1e-7)


def lattice_errors(y, k):
    """A lattice (Burg-style) filter: each stage's forward and backward errors are one entry
    shorter than the last."""
    f = y[1:] * 1.0
    b = y[:-1] * 1.0
    total = 0.0
    for m in range(4):
        f, b = f + k[m] * b, b + k[m] * f
        total += np.sum(f * f) + 0.5 * np.sum(b * b)
        f = f[1:]
        b = b[:-1]
    return total


def test_a_loop_whose_carried_arrays_shrink_is_unrolled():
    y = np.sin(np.arange(12) * 0.7) + 0.1 * np.arange(12)
    k = np.array([-0.4, 0.2, 0.3, -0.1])
    value, (gy, gk) = jitgrad.value_and_grad(lattice_errors, wrt=(0, 1))(y, k)
    np.testing.assert_allclose(value, lattice_errors(y, k), rtol=1e-13)
    jax = _jax()
    want = jax.grad(lattice_errors, argnums=(0, 1))(y, k)
    for g, w, i in ((gy, want[0], 0), (gk, want[1], 1)):
        np.testing.assert_allclose(g, numeric_grad(lattice_errors, (y, k), i), rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
