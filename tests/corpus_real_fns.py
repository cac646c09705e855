"""Functions for the real-code corpus (``corpus_real.py``), written the way public Numba code
is written (issue #11): pricing, stencils, particles, likelihoods, recurrences, distances,
integrators; and the Python forms such code uses: helpers that return arrays or tuples from a
branch, nested functions and closures (``make_loss(reg)``), global arrays read as constants.
Every function returns a scalar and leaves its arguments alone.
"""

import math

import numpy as np

# ---- Python forms: helpers, closures, global arrays ------------------------------------------

STENCIL = np.array([0.25, 0.5, 0.25])  # a global array: read as a constant, as Numba does
TIMES = np.array([0.25, 0.5, 1.0, 2.0])
SQRT2 = math.sqrt(2.0)


def _soft_or_hard(x, temp):
    if temp > 0.0:
        return np.log1p(np.exp(x / temp)) * temp  # an array from one branch
    return np.maximum(x, 0.0)  # and from the other


def helper_array_from_branch(x, temp):
    return np.sum(_soft_or_hard(x, temp) ** 2)


def _moments(x, centred):
    if centred:
        m = np.mean(x)
        return m, np.mean((x - m) ** 2)  # a tuple from a branch
    else:
        return 0.0, np.mean(x * x)


def helper_tuple_from_branch(x, c):
    m, v = _moments(x, c > 0.0)
    return m + v * c


def _norm_cdf(z):
    return 0.5 * (1.0 + math.erf(z / SQRT2))


def closure_factory_loss(w, x, y):
    def make_loss(reg):
        def loss(w, x, y):
            r = x @ w - y
            return np.mean(r * r) + reg * np.sum(w * w)
        return loss
    return make_loss(0.1)(w, x, y)


def _make_ridge(reg, scale):
    def ridge(w, x, y):
        r = x @ w - y
        return np.mean(r * r) + reg * np.sum(scale * w * w)
    return ridge


ridge_closure = _make_ridge(0.05, np.array([1.0, 2.0, 0.5]))  # captures a number and an array


def nested_sigmoid_nll(w, x, y):
    n = x.shape[0]

    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    def penalty(v, p=2.0):
        return np.sum(np.abs(v) ** p) / n

    p = sigmoid(x @ w)
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) + 0.01 * penalty(w)


def global_stencil_smooth(u):
    out = np.zeros_like(u)
    for i in range(1, u.shape[0] - 1):
        out[i] = STENCIL[0] * u[i - 1] + STENCIL[1] * u[i] + STENCIL[2] * u[i + 1]
    return np.sum(out * out)


def global_term_structure(r, sigma):
    total = 0.0
    for t in TIMES:
        total += math.exp(-r * t) * _norm_cdf(sigma * math.sqrt(t))
    return total
