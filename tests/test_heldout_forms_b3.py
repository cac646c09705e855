"""Forms met in the third held-out batch of real code (issue #43, part hb3a: arch, FinancePy,
hmmlearn, PyPortfolioOpt, tslearn), in functions of our own:

* a soft-min dynamic program whose border starts at ``inf`` and at the largest float (the
  quotient ``inf / -gamma`` is infinite for every gamma: no derivative reaches gamma through
  it, not ``0 * inf = nan``);
* a normal CDF that reflects a negative argument through itself (``1.0 - ncdf(-x)``, in the
  ``else`` of its test or after an ``if`` that returned): the recursion's test, decided by the
  branch its caller took, ends it while building;
* a private method (``self.__softmin``, mangled to ``_SoftAligner__softmin``);
* ``raise`` of the user's own exception class, and ``warnings.warn`` (left out), under
  run-time conditions;
* ``try: np.linalg.cholesky(m + eps * np.eye(len(m))); return True except LinAlgError:
  return False`` (a return in a checked try; ``len`` cannot raise);
* lists built by appending, passed to ``np.transpose`` and ``np.diag``; the rows of
  ``np.linalg.solve`` keep ``b``'s shape; ``np.array([...], dtype=np.int32)``; a reshape to
  sizes held in an integer array (``s = np.asarray(x.shape); s[0] = 1; m.reshape(s)``);
* ``np.linalg.cholesky`` of the matrix itself: it reads the lower triangle only, so the
  gradient is folded onto it, as finite differences of NumPy's give.

Two compiled gradients hold them; each is checked against central finite differences and
against JAX (the same computation written with jax.numpy). The refusals are checked while
building, with no compile.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad

BIG = np.finfo(np.float64).max


class AlignmentError(Exception):
    """Our own error class, raised under a run-time condition."""


def ncdf(x):
    """A rational approximation of the normal CDF, reflected through itself below 0."""
    t = 1.0 / (1.0 + 0.33267 * np.abs(x))
    if x >= 0.0:
        p = 1.0 - 0.3989422804 * np.exp(-0.5 * x * x) * t * (
            0.4361836 + t * (-0.1201676 + t * 0.937298))
    else:
        p = 1.0 - ncdf(-x)
    return p


def ncdf_early(x):
    """The same, its positive side returned early: the reflection after the ``if``."""
    t = 1.0 / (1.0 + 0.33267 * np.abs(x))
    if x >= 0.0:
        return 1.0 - 0.3989422804 * np.exp(-0.5 * x * x) * t * (
            0.4361836 + t * (-0.1201676 + t * 0.937298))
    return 1.0 - ncdf_early(-x)


class SoftAligner:
    """Soft dynamic time warping of a cost matrix."""

    def __init__(self, gamma):
        self.gamma = gamma

    def __softmin(self, a, b, c):
        a /= -self.gamma
        b /= -self.gamma
        c /= -self.gamma
        m = max(max(a, b), c)
        s = np.exp(a - m) + np.exp(b - m) + np.exp(c - m)
        return -self.gamma * (np.log(s) + m)

    def align(self, cost):
        n, m = cost.shape
        acc = np.full((n + 1, m + 1), np.inf)
        acc[1:, 0] = BIG
        acc[0, 0] = 0.0
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                acc[i, j] = cost[i - 1, j - 1] + self.__softmin(
                    acc[i - 1, j], acc[i - 1, j - 1], acc[i, j - 1])
        return acc[n, m]


def dp_loss(cost, gamma, x):
    if gamma <= 0.0:
        raise AlignmentError("gamma must be positive")
    if x > 10.0:
        warnings.warn("x is large", RuntimeWarning)
    total = SoftAligner(gamma).align(cost)
    for k in range(3):
        total = total + ncdf(x * (k - 1.5)) * (k + 1.0)
    return total + ncdf_early(0.25 - x)


def dp_loss_jax(jnp, cost, gamma, x):
    def softmin(a, b, c):
        a, b, c = a / -gamma, b / -gamma, c / -gamma
        m = jnp.maximum(jnp.maximum(a, b), c)
        return -gamma * (jnp.log(jnp.exp(a - m) + jnp.exp(b - m) + jnp.exp(c - m)) + m)

    def upper(v):
        t = 1.0 / (1.0 + 0.33267 * jnp.abs(v))
        return 1.0 - 0.3989422804 * jnp.exp(-0.5 * v * v) * t * (
            0.4361836 + t * (-0.1201676 + t * 0.937298))

    n, m = cost.shape
    big = 1e30  # (the same values as inf and BIG give: exp(-1e30 / gamma) is 0)
    acc = [[0.0] + [big] * m] + [[big] + [None] * m for _ in range(n)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            acc[i][j] = cost[i - 1, j - 1] + softmin(acc[i - 1][j], acc[i - 1][j - 1],
                                                     acc[i][j - 1])
    total = acc[n][m]
    for k in range(3):
        v = x * (k - 1.5)
        total = total + jnp.where(v >= 0.0, upper(v), 1.0 - upper(-v)) * (k + 1.0)
    v = 0.25 - x
    return total + jnp.where(v >= 0.0, upper(v), 1.0 - upper(-v))


def is_positive_definite(matrix):
    try:
        np.linalg.cholesky(matrix + 1e-12 * np.eye(len(matrix)))
        return True
    except np.linalg.LinAlgError:
        return False


def lin_loss(cov, x, means, conf):
    lags = np.array([1, 2], dtype=np.int32)
    shift = 0.0 if is_positive_definite(cov) else 3.0
    chol = np.linalg.cholesky(cov + shift * np.eye(len(cov)))
    rows = []
    for mu in means:
        rows.append((np.linalg.solve(chol, (x - mu).T) ** 2).sum(axis=0))
    dens = -0.5 * np.transpose(rows) - np.sum(np.log(np.diagonal(chol)))
    omegas = []
    for i in range(len(conf)):
        omegas.append((1.0 - conf[i]) / conf[i] * cov[i, i])
    total = np.sum(dens * np.arange(1.0, dens.shape[1] + 1.0)) + np.sum(np.diag(omegas) ** 2)
    for lag in lags:
        total = total + x[lag, 0] * x[lag - 1, 1]
    centre = np.mean(x, axis=0)  # reshaped to sizes held in an integer array (astroML's form)
    sizes = np.asarray(x.shape)
    sizes[0] = 1
    return total + np.sum(centre.reshape(sizes) * x)


def lin_loss_jax(jnp, cov, x, means, conf, positive):
    sym = jnp.tril(cov) + jnp.tril(cov, -1).T  # the matrix NumPy's cholesky reads
    chol = jnp.linalg.cholesky(sym + (0.0 if positive else 3.0) * jnp.eye(cov.shape[0]))
    rows = [(jnp.linalg.solve(chol, (x - mu).T) ** 2).sum(axis=0) for mu in means]
    dens = -0.5 * jnp.stack(rows).T - jnp.sum(jnp.log(jnp.diagonal(chol)))
    omegas = jnp.stack([(1.0 - conf[i]) / conf[i] * cov[i, i] for i in range(conf.shape[0])])
    total = jnp.sum(dens * jnp.arange(1.0, dens.shape[1] + 1.0)) + jnp.sum(omegas ** 2)
    for lag in (1, 2):
        total = total + x[lag, 0] * x[lag - 1, 1]
    return total + jnp.sum(jnp.mean(x, axis=0).reshape(1, -1) * x)


COST = np.array([[0.3, 1.2, 0.8], [0.5, 0.2, 1.1], [1.4, 0.6, 0.1], [0.9, 0.7, 0.4]])
X = np.array([[0.2, -0.4], [1.1, 0.3], [-0.7, 0.9], [0.5, 0.5], [1.6, -1.0]])
MEANS = np.array([[0.0, 0.1], [1.0, -0.5], [-0.3, 0.6]])
CONF = np.array([0.6, 0.3])
SPD = np.array([[1.0, 0.3], [0.2, 0.8]])  # not symmetric: only its lower triangle is read
NOT_PD = np.array([[1.0, 0.9], [1.5, -0.2]])


def test_dynamic_program_and_reflection_match_finite_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    args = (COST, 0.7, 0.8)
    grads = jitgrad.grad(dp_loss, wrt=(0, 1, 2))(*args)
    want = jax.grad(lambda *a: dp_loss_jax(jnp, *a), argnums=(0, 1, 2))(*args)
    for at, got in enumerate(grads):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, numeric_grad(dp_loss, args, at), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got, np.asarray(want[at]), rtol=1e-10, atol=1e-12)
    with pytest.raises(Exception, match="AlignmentError: gamma must be positive"):
        jitgrad.grad(dp_loss, wrt=(0, 1, 2))(COST, -0.5, 0.8)


def test_checked_try_lists_and_cholesky_match_finite_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    g = jitgrad.grad(lin_loss, wrt=(0, 1, 2, 3))  # one compile, both sides of the try
    for cov, positive in ((SPD, True), (NOT_PD, False)):
        assert is_positive_definite(cov) is positive
        args = (cov, X, MEANS, CONF)
        want = jax.grad(lambda *a, p=positive: lin_loss_jax(jnp, *a, p), argnums=(0, 1, 2, 3))(
            *(jnp.asarray(a) for a in args))
        for at, got in enumerate(g(*args)):
            np.testing.assert_allclose(got, numeric_grad(lin_loss, args, at), rtol=1e-6,
                                       atol=1e-7)
            np.testing.assert_allclose(got, np.asarray(want[at]), rtol=1e-10, atol=1e-12)
        assert np.all(g(*args)[0][0, 1] == 0.0)  # above the diagonal: not read


def unused_inverse_in_try(m):
    try:
        np.linalg.inv(m)
        scale = 1.0
    except np.linalg.LinAlgError:
        scale = 2.0
    return np.sum(m) * scale


def fft_of_power_length(x):
    n_bits = 1 + int(np.log2(2 * x.shape[0] - 1))
    return np.sum(np.real(np.fft.fft(x, 2 ** n_bits)))


@pytest.mark.parametrize("fn, message", [
    (unused_inverse_in_try, "its result unused"),
    (fft_of_power_length, r"`1 << k` or `int\(2\*\*k\)`"),
])
def test_refused_with_the_reason(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn)(np.array([[2.0, 0.5], [0.5, 1.0]]) if fn is unused_inverse_in_try
                         else np.array([0.3, 0.5, 0.1]))
