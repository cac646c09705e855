"""Functions for the NumPy / math / Python surface corpus (``corpus_surface.py``).

Each exercises functions, methods and loop forms that real Numba kernels use: elementwise
functions (``np.arctan2``, ``np.logaddexp``, ``math.erf``...), construction (``np.array`` of
scalars, ``np.arange``, ``np.linspace``, ``np.eye``, ``np.empty_like``), reductions
(``np.prod``, ``var``/``std`` with ``ddof``, ``np.average``, ``np.cumsum``,
``np.linalg.norm``), data movement (``np.roll``, ``np.flip``, ``np.diff``, ``ravel``) and
Python loops (``enumerate``, ``zip``, ``reversed``, ``numba.prange``, ``sum``, ``operator``).
Every function returns a scalar and leaves its arguments alone.
"""

import math
import operator

import numba
import numpy as np

# ---- elementwise ---------------------------------------------------------------------------


def polar_angle(x, y):
    return np.sum(np.arctan2(y, x) * np.hypot(x, y))


def log_sum_pairs(a, b):
    return np.sum(np.logaddexp(a, b))


def log_bases(x):
    return np.sum(np.log2(x) + np.log10(x) * x + np.exp2(-x))


def cube_roots(x):
    return np.sum(np.cbrt(x) * x + np.reciprocal(x))


def angles(deg):
    rad = np.deg2rad(deg)
    return np.sum(np.sin(rad) * np.rad2deg(rad))


def nan_ignoring_extremes(x, y):
    return np.sum(np.fmax(x, y) * 2.0 + np.fmin(x, y))


def float_power_mix(x, y):
    return np.sum(np.float_power(x, y) + np.float_power(x, 2))


def sign_transfer(x, y):
    return np.sum(np.copysign(x, y) * x)


def finite_mask(x):
    return np.sum(np.where(np.isfinite(np.log(x)), x * x, 0.0))


def power_at_zero(x, y):
    return np.sum(np.power(x, y))


def arcsin_inside(x):
    return np.sum(np.arcsin(x))


def black_scholes_call(s, k, t, r, sigma):
    d1 = (math.log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * math.sqrt(t))
    d2 = d1 - sigma * math.sqrt(t)
    cdf1 = 0.5 * math.erfc(-d1 / math.sqrt(2.0))
    cdf2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
    return s * cdf1 - k * math.exp(-r * t) * cdf2


def math_scalar_surface(x, y):
    a = math.pow(x, y) + pow(y, 2.0) + math.hypot(x, y)
    b = math.atan2(y, x) + math.copysign(x, -1.0) + math.log2(x) + math.log10(y)
    if math.isfinite(a):
        a = a + math.degrees(math.radians(b))
    return a * b


# ---- construction --------------------------------------------------------------------------


def vector_from_scalars(a, b, c):
    v = np.array([a, b, c])
    w = np.array((a * b, 1.0, c))
    return np.sum(v * w) + np.sum(v) * a


def matrix_from_scalars(a, b, c):
    m = np.array([[a, b], [b, c]])
    return np.sum(m @ m)


def stacked_rows(x, y):
    m = np.stack((x, y * 2.0))
    return np.sum(m.T @ m)


def arange_weights(x):
    n = x.shape[0]
    w = np.arange(n)
    t = np.arange(0.0, 1.5, 0.5)
    return np.sum(x * w) + np.sum(t) * x[0]


def linspace_grid(x, lo, hi):
    g = np.linspace(lo, hi, x.shape[0])
    return np.sum(x * g * g)


def eye_shift(A):
    n = A.shape[0]
    return np.sum((A + 2.0 * np.eye(n)) @ A)


def like_allocations(x):
    y = np.empty_like(x)
    z = np.full_like(x, 0.5)
    w = np.zeros(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]
        w[i] = z[i] * x[i]
    return np.sum(y) + np.sum(w) + x.ndim


# ---- reductions ----------------------------------------------------------------------------


def product_fn(x):
    return np.prod(x) + x.prod() * 0.5


def product_with_zero(x):
    return np.prod(x)


def variances(x):
    return np.var(x) + x.std(ddof=1) + np.sum(np.var(x, axis=0, ddof=1)) + np.sum(x.std(axis=1))


def weighted_average(x, w):
    return np.average(x, weights=w) + np.sum(np.average(x, axis=0, weights=w[:, 0]))


def running_sum(x):
    c = np.cumsum(x)
    return np.sum(c * c) + np.sum(x.cumsum())


def norms(x, A):
    return np.linalg.norm(x) + np.linalg.norm(A) * np.linalg.norm(x, 2)


def mean_of_vector_axis0(x):
    return np.mean(np.sin(x), axis=0) + np.sum(x * x, axis=0)


# ---- shape and data movement ---------------------------------------------------------------


def rolled_stencil(u, k):
    return np.sum((np.roll(u, 1) - 2.0 * u + np.roll(u, -1)) ** 2) + np.sum(np.roll(u, k) * u)


def flipped(x, A):
    return np.sum(np.flip(x) * x) + np.sum(np.flip(A, axis=0) * A) + np.sum(np.flip(A) * A)


def differences(x):
    d = np.diff(x)
    return np.sum(d * d) + np.sum(np.diff(x, 2) ** 2)


def flattening(A):
    v = A.ravel()
    f = A.flatten()
    s = A[:, None, :].squeeze(axis=1)
    return np.sum(v * f) + np.sum(s * A) + np.sum(A.astype(np.float64))


def clip_keywords(x):
    return np.sum(np.clip(x, a_min=-0.5, a_max=0.5) * x) + np.sum(np.clip(x, None, 0.3))


# ---- Python loop forms ---------------------------------------------------------------------


def enumerate_weights(x, y):
    s = 0.0
    for i, v in enumerate(x):
        s += v * y[i] * (i + 1)
    for i, v in enumerate(y, 2):
        s += v * v * i
    return s


def zip_pairs(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b * a
    for i, (a, b) in enumerate(zip(x, np.sin(y))):
        s += i * a * b
    return s


def reversed_horner(c, t):
    s = 0.0
    for i in reversed(range(c.shape[0])):
        s = s * t + c[i]
    for v in reversed(c):
        s = s * 0.5 + v
    return s


def prange_sum(x):
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += x[i] * x[i]
    return s


def builtin_sum_operator(x, y):
    return sum(x * y) + operator.mul(x[0], y[1]) + operator.add(x[2], y[0])


def ema(x, alpha):
    m = x[0]
    total = 0.0
    for i, v in enumerate(x[1:]):
        m = alpha * v + (1.0 - alpha) * m
        total += m * (i + 1)
    return total


def comparison_result(x, y):
    return x == y
