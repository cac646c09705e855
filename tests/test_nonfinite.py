"""Infinite and NaN values that do not reach the result (docs/supported.md, "Infinite values
and zero cotangents"): a cotangent that is exactly 0 contributes 0 through
``exp``/``expm1``/``sinh``/``cosh`` and ``x ** y``, where an infinite or
NaN partial means the value is ±inf or NaN for every nearby input (not ``0 * inf = nan``, which
JAX and PyTorch give); at a pole (``1 / y`` at ``y == 0``) it stays NaN, since the derivative
there may be finite and nonzero.

Each gradient is checked against central differences and a derivative written out by hand (JAX
is no oracle here: it gives NaN for every case). The forms run as plain Python in a process of
their own; one compiled test holds the mechanisms together.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from scipy.special import expit

import jitgrad

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fd import numeric_grad
from plain_python import assert_runs_as_plain_python


def sentinel_logistic(a, theta):
    """girth's graded response: thresholds padded with -1e4 / 1e4, whose exp overflows."""
    betas = np.concatenate((np.array([-1e4]), theta, np.array([1e4])))
    p = 1.0 / (1.0 + np.exp(a * betas))
    return np.sum(p[:-1] - p[1:] * 0.5)


def sentinel_logistic_by_hand(a, theta):
    betas = np.concatenate(([-1e4], theta, [1e4]))
    slope = -expit(a * betas) * expit(-a * betas)  # d/dk 1 / (1 + exp(k)), without overflow
    w = np.ones(betas.size)
    w[-1] = 0.0
    w[1:] -= 0.5
    return np.sum(w * slope * betas), (w * slope * a)[1:-1]


def power_of_kept(x):
    """``x ** 1.5`` of a negative entry is nan, and np.where discards it."""
    return np.sum(np.where(x > 0.0, x ** 1.5, -x))


def power_of_kept_by_hand(x):
    return np.where(x > 0.0, 1.5 * np.sqrt(np.abs(x)), -1.0)


def over_sum(x, y):
    """cosh overflowed under exp(-...)."""
    q = x / y
    return q[0] + q[2] * np.cosh(x[2]) + np.exp(-np.cosh(x[1] * 2000.0))


def over_sum_by_hand(x, y):
    gx = np.array([1 / y[0], 0.0, np.cosh(x[2]) / y[2] + x[2] / y[2] * np.sinh(x[2])])
    return (gx,)


def all_together(a, theta, x):
    return sentinel_logistic(a, theta) + power_of_kept(x) + over_sum(x[:3], Y)


def harmonic(r):
    """Resistors in parallel with one of them 0: R = r0 r' / (r0 + r') has dR/dr0 = 1 at 0,
    but the float program's 1 / (1 / 0) meets its pole: NaN, never a wrong 0."""
    return 1.0 / np.sum(1.0 / r)


def tanh_by_exp(x):
    return (1.0 - np.exp(-2.0 * x)) / (1.0 + np.exp(-(2.0 * x)))


def third_derivative_at_zero():
    """Derivatives of derivatives through the masked rules, at an entry where a first-order
    cotangent is exactly 0 (tanh's curvature at 0; autograd's tanh example): the mask is on the
    partial, so the product's derivative in the cotangent is kept (a mask on the product gave
    the second derivative -1 at 0 and the third 0)."""
    d1 = jitgrad.grad(lambda x: np.sum(tanh_by_exp(x)))
    d2 = jitgrad.grad(lambda x: np.sum(d1(x)))
    d3 = jitgrad.grad(lambda x: np.sum(d2(x)))
    x = np.array([-2.0, -1.0, 0.0, 1.0])
    t = np.tanh(x)
    np.testing.assert_allclose(d2(x), -2.0 * t * (1.0 - t * t), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d3(x), (1.0 - t * t) * (6.0 * t * t - 2.0), rtol=1e-9,
                               atol=1e-12)


Y = np.array([2.0, 5.0, 4.0])
THETA = np.array([-0.7, 0.2, 0.9])
X = np.array([0.8, -0.4, 1.3, -2.0])


def _agree(fn, args, wrt, by_hand):
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    for k, got, want in zip(wrt, grads, by_hand):
        assert np.all(np.isfinite(got)), (fn.__name__, k, got)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got, numeric_grad(fn, args, k), rtol=1e-6, atol=1e-7)


def check_forms():
    third_derivative_at_zero()
    _agree(sentinel_logistic, (1.3, THETA), (0, 1), sentinel_logistic_by_hand(1.3, THETA))
    _agree(power_of_kept, (X,), (0,), (power_of_kept_by_hand(X),))
    with np.errstate(divide="ignore", invalid="ignore"):
        _agree(over_sum, (X[:3].copy(), Y), (0,), over_sum_by_hand(X[:3], Y))
        g = jitgrad.grad(harmonic)(np.array([0.0, 2.0, 3.0]))
    assert np.isnan(g[0]), g  # the pole: honest NaN (the true 1 is not what 0 * inf says)
    # the tangents are the same rules: a direction that moves no overflowed entry gives 0
    _, t = jitgrad.jvp(sentinel_logistic, (1.3, THETA), (0.0, np.array([0.0, 1.0, 0.0])))
    np.testing.assert_allclose(t, sentinel_logistic_by_hand(1.3, THETA)[1][1], rtol=1e-9)


def test_nonfinite_as_plain_python():
    assert_runs_as_plain_python(__file__)


def test_nonfinite_compiled():
    args = (1.3, THETA, X)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value, grads = jitgrad.value_and_grad(all_together, wrt=(0, 1, 2))(*args)
        np.testing.assert_allclose(value, all_together(*args), rtol=1e-12)
        hand_a, hand_theta = sentinel_logistic_by_hand(1.3, THETA)
        gx = power_of_kept_by_hand(X)
        gx[:3] += over_sum_by_hand(X[:3], Y)[0]
        for got, want, k in zip(grads, (hand_a, hand_theta, gx), range(3)):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(got, numeric_grad(all_together, args, k), rtol=1e-6,
                                       atol=1e-7)


if __name__ == "__main__":
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        check_forms()
    print("nonfinite forms agree with central differences and derivatives by hand")
