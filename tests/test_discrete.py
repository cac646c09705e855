"""NumPy's discrete functions inside a gradient (issues #43 and #45): positions, counts,
membership, bit operations, arrays made and moved.

Their integer and boolean results carry no derivative and pass through; where a result holds
float values (bincount's weighted sums, unique values, histogram's edges, inserted and
deleted entries, a filled diagonal) the derivative is that of the gather or scatter-add it
is, checked against central finite differences and JAX. Each compiled test compiles one
gradient (a handful of constructs each); the values of every construct, edge cases
included, are checked against NumPy as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of
its own: ``python tests/test_discrete.py`` runs them).
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad
from plain_python import assert_runs_as_plain_python

X = np.array([0.35, 0.72, 0.46, 0.91, 0.13, 0.58])
K = np.array([3, 1, 1, 0, 5, 2])


# ----------------------------------------------------------------------------- compiled


def positions(x, k):
    """Positions, counts and membership around a differentiable part."""
    big = x > 0.5
    s = np.sum(x[np.nonzero(big)] ** 2) + np.sum(x[np.flatnonzero(big)])
    rows = np.argwhere(big)
    for r in range(rows.shape[0]):
        s += x[rows[r, 0]] * 0.5
    s += np.sum(np.extract(x < 0.5, x) ** 3) + np.sum(x[np.where(big)[0]])
    at = np.searchsorted(np.array([0.2, 0.5, 0.8]), x) + np.digitize(x, np.array([0.3, 0.6]))
    s += np.sum(x * at) + np.sum(np.isin(k, np.array([1, 5])) * x)
    s += np.sum(np.unique(x) ** 2) * np.unique(k).size
    s += np.sum(np.bincount(k, weights=x * x) ** 2) + np.sum(np.bincount(k) * x[:1])
    counts, edges = np.histogram(x, 4, weights=x)
    s += np.sum(counts * counts) + np.sum(edges * np.arange(5.0))
    m = np.outer(x[:3], x[3:])
    i, j = np.tril_indices(3, -1)
    s += np.sum(m[i, j]) + np.sum(m[np.triu_indices_from(m, 1)] ** 2)
    s += x[np.argpartition(x, 1)[0]] * 2.0 + np.sum(np.partition(x, 2)[:3] ** 2)
    s += np.sum(np.intersect1d(x, x[2:4])) + np.sum(np.union1d(x[:3], x[2:]) ** 2)
    s += np.sum(np.setdiff1d(x, x[:2]) ** 3) + np.sum(np.setxor1d(x[:4], x[2:]) * 2.0)
    values, counts = np.unique(x, return_counts=True)
    s += np.sum(values * counts) + np.sum(np.histogram(x, 3, density=True)[0] * x[:3])
    if np.array_equal(x, x) and not np.array_equiv(x[:2], x[1:3]):
        s += x[0] * x[1]
    return s


def moved(x):
    """Arrays made from sizes and entries moved around a differentiable part."""
    n = x.shape[0]
    s = np.sum(np.eye(n, n + 1, 1)[:, 1:] * x[:, None] * x[None, :])
    s += np.sum(np.eye(3, dtype=np.int64) * x[:3])
    w = np.bartlett(n) + np.blackman(n) + np.hamming(n) + np.hanning(n) + np.kaiser(n, 2.5)
    s += np.sum(w * x)
    s += np.sum(np.vander(x[:4], 3) * np.arange(12.0).reshape(4, 3))
    y = np.zeros(n + 2)
    y[1:-1] = x
    s += np.sum(np.trim_zeros(y) ** 2) + np.sum(np.resize(x, (2, 5)) * np.arange(10.0).reshape(2, 5))
    s += np.sum(np.insert(x, 2, x[0] * 3.0) * np.arange(n + 1.0))
    s += np.sum(np.delete(x, -2) ** 2) + np.sum(np.delete(x, [0, 3]) * 2.0)
    a = np.zeros((3, 4))
    np.fill_diagonal(a, x[:2])
    b = np.ones((4, 2)) * x[0]
    np.fill_diagonal(b, 2.0)
    s += np.sum(b * b)
    out = np.ndarray((2, n), dtype=x.dtype)
    out[0] = x
    out[1] = a[1, 1] * x
    return s + np.sum(a @ a.T) + np.sum(out ** 2)


def bits(x, k):
    """Bit operations on run-time integers; the bits of floats."""
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        if (i & 1) == 0 and (n >> 1) > 0:
            s += x[i] * x[i]
    b = np.sum(k & 6) + np.sum(k | 8) + np.sum(k ^ 5) + np.sum(~k) + np.sum(k << 2)
    s = s * ((n << 1) + (n ^ 3) + np.sum(np.right_shift(k, 1)) + b)
    m, e = math.frexp(x[0] * 1000.0)
    mant, ex = np.frexp(x * 3.0)
    s += m * e + np.sum(mant * ex) + math.ldexp(x[1], int(k[0])) + np.ldexp(x[2], 3)
    s += np.sum(np.nextafter(x, 2.0) * x) + math.nextafter(x[3], 0.0) + np.sum(np.spacing(x))
    return s + np.sum(np.where(np.signbit(x - 0.5), x, x * x)) + math.exp2(x[4])


@pytest.mark.parametrize(("fn", "args"), [
    (positions, (X, K)),
    (moved, (X,)),
    (bits, (X, K)),
])
def test_gradient_matches_finite_differences(fn, args):
    g = jitgrad.value_and_grad(fn)
    for scale in (1.0, 0.9):
        point = (args[0] * scale,) + args[1:]
        value, grad = g(*point)
        assert value == pytest.approx(fn(*point), rel=1e-12)
        np.testing.assert_allclose(grad, numeric_grad(fn, point, 0), rtol=1e-6, atol=1e-8)


def test_generated_code_calls_numpys_own():
    """searchsorted, digitize, bincount, vander and kaiser are NumPy's functions in the
    compiled code (Numba's own), bit operations Python's operators."""
    text = (jitgrad.grad(positions).source(X, K) + jitgrad.grad(moved).source(X)
            + jitgrad.grad(bits).source(X, K))
    for form in ("np.searchsorted(", "np.digitize(", "np.bincount(", "np.vander(",
                 "np.kaiser(", " & ", " << ", "_rt.frexp_exponent"):
        assert form in text, form


# ----------------------------------------------------------------------------- JAX


@pytest.fixture(scope="module")
def jnp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return jnp


def counted(np_, unique, x, w):
    """Histogram edges (through the data's extremes) and weighted counts, a weighted bincount,
    unique values and the powers of a vector: in NumPy or jax.numpy."""
    counts, edges = np_.histogram(x, 4, weights=w)
    sums = np_.bincount(np_.array([2, 0, 2, 1, 0, 3]), weights=w * x)
    powers = np_.vander(x, 4)
    return (np_.sum(counts * np_.arange(1.0, 5.0)) + np_.sum(edges ** 2) + np_.sum(sums ** 3)
            + np_.sum(unique(x) * np_.arange(6.0)) + np_.sum(powers * w[:, None]))


def test_against_jax(jnp):
    import jax

    w = np.array([0.5, 1.5, -0.7, 2.0, 0.3, 1.1])
    got = jitgrad.grad(lambda x, w: counted(np, np.unique, x, w), wrt=(0, 1))(X, w)
    want = jax.grad(lambda x, w: counted(jnp, lambda v: jnp.unique(v, size=6), x, w),
                    argnums=(0, 1))(jnp.array(X), jnp.array(w))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("fn", "message"), [
    (lambda x: np.sum(np.kaiser(x.shape[0], x[0]) * x), r"np\.kaiser with a beta computed"),
    (lambda x: np.sum(np.unique(x, return_inverse=True)[0]), r"np\.unique with return_inverse"),
    (lambda x: np.sum(x & 1), r"`&` of a float"),
    (lambda x: np.sum(np.ndarray((2,), buffer=x)), r"np\.ndarray with buffer="),
    (lambda x: np.sum(np.histogram(x, "auto")[0] * x), r"np\.histogram with bins='auto'"),
])
def test_refused_with_the_reason(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn)(X)


# ----------------------------------------------------------------------------- values

A2 = np.array([[0.0, 0.72, 0.46], [0.91, 0.0, 0.28]])
Z = np.array([0.35, 0.0, 0.72, 0.0, 0.46, 0.91])
T = np.array([0.3, 0.1, 0.3, 0.2, 0.1])
NANS = np.array([np.nan, 0.3, np.nan, 0.1, 0.3])
EDGES = np.array([0.0, 0.3, 0.72])
FLOATS = np.array([-0.0, 0.0, -1.0, 1.7e308, -3.5, 2.0, 5e-324, 3e-310, np.inf, np.nan])


def _value_cases():
    """(name, fn, args): fn's value, computed by jitgrad, must be NumPy's exactly."""
    cases = [
        ("nonzero", lambda m: m[np.nonzero(m)], (A2,)),
        ("nonzero-axes", lambda m: np.nonzero(m)[1] + 10.0 * np.nonzero(m)[0], (A2,)),
        ("argwhere", lambda m: np.argwhere(m) * 1.0, (A2,)),
        ("flatnonzero", lambda m: np.flatnonzero(m) * 1.0, (A2,)),
        ("extract", lambda m: np.extract(m > 0.5, m), (A2,)),
        ("searchsorted", lambda x: np.searchsorted(EDGES, x) * 1.0, (Z,)),
        ("searchsorted-right", lambda x: np.searchsorted(EDGES, x, side="right") * 1.0, (Z,)),
        ("searchsorted-sorter", lambda x: np.searchsorted(x, 0.4, sorter=np.argsort(x))
         + x[0], (Z,)),
        ("digitize", lambda x: np.digitize(x, EDGES) * 1.0, (Z,)),
        ("digitize-right", lambda x: np.digitize(x, EDGES, right=True) * 1.0, (Z,)),
        ("digitize-decreasing", lambda x: np.digitize(x, EDGES[::-1].copy()) * 1.0, (Z,)),
        ("bincount", lambda x, k: np.bincount(k, minlength=9) + x[0], (X, K)),
        ("bincount-weights", lambda x, k: np.bincount(k, x), (X, K)),
        ("unique", lambda x: np.unique(x), (T,)),
        ("unique-nan", lambda x: np.unique(x), (NANS,)),
        ("unique-nans-apart", lambda x: np.unique(x, equal_nan=False), (NANS,)),
        ("unique-empty", lambda x: np.unique(x[:0]), (T,)),
        ("unique-index", lambda x: np.unique(x, return_index=True)[1] * 1.0, (T,)),
        ("unique-counts", lambda x: np.unique(x, return_counts=True)[1] * 1.0, (T,)),
        ("unique-matrix", lambda m: np.unique(m), (A2,)),
        ("isin", lambda m: np.isin(m, m[0]) * 1.0, (A2,)),
        ("isin-invert", lambda x, k: np.isin(k, [1, 5], invert=True) + x[0], (X, K)),
        ("array-equal-shapes", lambda x: np.array_equal(x, x[1:]) + x[0], (Z,)),
        ("array-equal-transposed", lambda m: np.array_equal(m, m.T) + m[0, 0], (A2,)),
        ("array-equal-nan", lambda x: np.array_equal(x, x, equal_nan=True) + x[1], (NANS,)),
        ("array-equiv-broadcast", lambda x: np.array_equiv(x[:1], x[:1] * np.ones(3)) + x[0],
         (Z,)),
        ("array-equiv-not", lambda x: np.array_equiv(x[:2], x[:3]) + x[0], (Z,)),
        ("tril-indices", lambda m: m[np.tril_indices(m.shape[0], 1, m.shape[1])], (A2,)),
        ("triu-indices-from", lambda m: m[np.triu_indices_from(m, 1)], (A2,)),
        ("partition", lambda x: np.sort(np.partition(x, 2)[:3]), (Z,)),
        ("eye", lambda m: np.eye(m.shape[0], m.shape[1], -1) + m, (A2,)),
        ("vander", lambda x: np.vander(x), (X,)),
        ("vander-increasing", lambda x: np.vander(x, 3, increasing=True), (X,)),
        ("trim-zeros", lambda x: np.trim_zeros(x), (np.array([0.0, 0.0, 0.3, 0.0, 0.4, 0.0]),)),
        ("trim-zeros-back", lambda x: np.trim_zeros(x, "b"), (np.array([0.0, 0.3, 0.0]),)),
        ("trim-zeros-all", lambda x: np.trim_zeros(x) + 1.0, (np.zeros(3),)),
        ("resize", lambda x: np.resize(x, (2, 5)), (X,)),
        ("insert-negative", lambda x: np.insert(x, -1, x[:2]), (X,)),
        ("insert-at-end", lambda x: np.insert(x, x.shape[0], 1.5), (X,)),
        ("insert-into-integers", lambda x, k: np.insert(k, 1, 7.9) + x[0], (X, K)),
        ("delete-along-columns", lambda m: np.delete(m, 1, axis=1), (A2,)),
        ("delete-several", lambda x: np.delete(x, [0, -1, 2]), (X,)),
        ("signbit", lambda x: np.signbit(x) * 1.0, (FLOATS,)),
        ("spacing", lambda x: np.spacing(x), (FLOATS[:-2],)),
        ("nextafter", lambda x: np.nextafter(x, -1.0), (FLOATS,)),
        ("frexp", lambda x: np.frexp(x)[0] + np.frexp(x)[1], (FLOATS,)),
        ("union1d", lambda a, b: np.union1d(a, b), (NANS, T)),
        ("intersect1d", lambda a, b: np.intersect1d(a, b), (NANS, T)),
        ("setdiff1d", lambda a, b: np.setdiff1d(a, b), (NANS, T[:2])),
        ("setxor1d", lambda a, b: np.setxor1d(a, b), (NANS, T)),
    ]
    for bins in (1, 3, 7):
        for data in (X, np.array([0.5, 0.5, 0.5]), np.linspace(0.1, 0.7, 7)):
            cases += [(f"histogram-{what}-{bins}", fn, (data,))
                      for what, fn in _histograms(bins).items()]
    # bins computed from each value (as NumPy does), moved to the edges' side: values on every
    # edge, and NaN and values outside range=
    cases += [("histogram-on-edges", lambda x: np.histogram(x, 100, weights=x)[0],
               (np.linspace(-1.0, 1.0, 201) ** 3,)),
              ("histogram-nan-outside", lambda x: np.histogram(x, 7, range=(-0.5, 0.35))[0],
               (NANS,))]
    for n in (1, 2, 5, 6):
        for name in ("bartlett", "blackman", "hamming", "hanning"):
            cases.append((f"{name}-{n}", _window(getattr(np, name)), (np.ones(n),)))
    return cases


def _histograms(bins):
    return {
        "counts": lambda x: np.histogram(x, bins)[0] + x[0],
        "edges": lambda x: np.histogram(x, bins)[1],
        "density": lambda x: np.histogram(x, bins, density=True)[0],
        "range": lambda x: np.histogram(x, bins, range=(0.2, 0.6), weights=x)[0],
    }


def _window(fn):
    return lambda x: fn(x.shape[0]) + x[0]


def check_values() -> list[str]:
    """The cases whose value differs from NumPy's (or that fail): empty when all agree."""
    bad = []
    for name, fn, args in _value_cases():
        try:
            got = np.asarray(jitgrad.vjp(fn, *args)[0], dtype=float)
        except Exception as e:  # noqa: BLE001 - reported
            bad.append(f"{name}: {type(e).__name__}: {e}")
            continue
        want = np.asarray(fn(*args), dtype=float)
        if want.shape != got.shape or not np.array_equal(want, got, equal_nan=True):
            bad.append(f"{name}: {got} (NumPy: {want})")
    return bad


def test_values_are_numpys():
    assert_runs_as_plain_python(__file__)


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")  # (NumPy's own warnings on inf and NaN)
    problems = check_values()
    print("\n".join(problems) or f"{len(_value_cases())} values agree with NumPy")
    sys.exit(1 if problems else 0)
