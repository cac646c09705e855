"""Forms from autograd's own test functions that jitgrad refused (issue #43, hag16), in
functions of our own, written with autograd's names so that autograd is the oracle:

- a transform (autograd's ``grad``, jitgrad's ``grad``) of a function defined inside the
  differentiated one, which reads the function's own values (a lambda, a ``def`` with a
  default, a transform of that transform, a gradient with respect to an array): lifted, what
  it reads passed as arguments (`jitgrad.frontend.local_transforms`);
- ``np.squeeze(x)`` and ``x.squeeze()`` without ``axis=`` of an axis of size 1 in the first
  call: assumed 1, checked first thing (a size assumption);
- differentiating with respect to an empty list, tuple or dict (given back), beside a class
  passed as an argument (``isinstance(ex, kind)``);
- float16 arrays (computed in float64, the gradient in float16);
- autograd's ``np.int64`` of run-time values (NumPy's);
- a module's list of functions, a list comprehension over it passed to autograd's
  ``np.array`` (read as NumPy's, so the list is the array of its items);
- ``np.append`` of a list argument (array_like, as NumPy takes it);
- autograd's ``np.make_diagonal``;
- ``multivariate_normal`` with ``allow_singular=True`` (SciPy's eigendecomposition; its
  derivative in the covariance refused).

Each form is checked against autograd's gradient and central differences
(`fd.check_against`), as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own) for
breadth, and one gradient holding them all is checked compiled.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")
mvn = pytest.importorskip("autograd.scipy.stats").multivariate_normal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against
from plain_python import assert_runs_as_plain_python

import jitgrad

grad = autograd.grad
X = np.array([0.3, -0.7, 1.1])
SQ = np.linspace(-1.0, 1.2, 20).reshape(5, 1, 4)
W = np.arange(20.0).reshape(5, 4) / 10.0
FLOAT16 = np.array([0.5, -1.25, 2.0, 0.75], dtype=np.float16)


def closes_over(x, c):
    """Transforms of functions defined here that read ``x`` and ``c``."""
    inner = lambda y: anp.sum(anp.sin(x * y)) * c

    def with_default(y, k=2.0):
        return anp.tanh(y * x[0]) * k + c * y ** 3

    s = grad(inner)(1.3) * c + grad(with_default)(0.4)
    d = grad(lambda v: anp.sum(v ** 2 * x))(x)  # with respect to an array
    return s + anp.sum(d * anp.cos(x))


def closes_over_ag(x, c):
    """`closes_over` as autograd differentiates it (its grad for jitgrad's)."""
    inner = lambda y: anp.sum(anp.sin(x * y)) * c

    def with_default(y, k=2.0):
        return anp.tanh(y * x[0]) * k + c * y ** 3

    s = grad(inner)(1.3) * c + grad(with_default)(0.4)
    d = grad(lambda v: anp.sum(v ** 2 * x))(x)
    return s + anp.sum(d * anp.cos(x))


def closes_over_twice(x):
    """A transform of a transform of a function defined here (forward mode over it), and
    jitgrad's own value_and_grad of it."""
    def cube(y):
        return anp.tanh(y * x[0]) + x[1] * y ** 3
    value, slope = jitgrad.value_and_grad(cube)(0.3)
    return grad(grad(cube))(0.7) * x[2] + value * slope


def closes_over_twice_ag(x):
    def cube(y):
        return anp.tanh(y * x[0]) + x[1] * y ** 3
    value, slope = autograd.value_and_grad(cube)(0.3)
    return grad(grad(cube))(0.7) * x[2] + value * slope


def read_when_called(x, w):
    """The closure is read when the transform is called (as Python reads a cell), and a
    function made in a loop reads that iteration's index."""
    inner = lambda y: anp.sum(x * y ** 2)
    g = grad(inner)
    x = x * 3.0
    total = g(1.5)
    for i in range(3):
        f = lambda y: anp.sin(w[i] * y) + i * y  # noqa: B023 - called in this iteration
        total = total + grad(f)(0.5)
    return total


SCALAR_FUNS = [  # a module's list of functions, read while building
    lambda x: anp.sum(x ** 3),
    lambda x: anp.prod(anp.sin(x) + 0.5),
    lambda x: grad(lambda y: anp.exp(y) * anp.tanh(x[0]))(x[1]),  # (a lambda's own lambda)
]


def stacked(x):
    """A list comprehension over them passed to autograd's np.array (NumPy's)."""
    return anp.sum(anp.array([f(x) for f in SCALAR_FUNS]) * anp.array([1.0, 2.0, -0.5]))


def appended(a, b):
    """np.append of a list argument and a number (array_like, as NumPy takes them)."""
    return anp.sum(anp.append(a, b) * anp.arange(1.0, 5.0))


def diagonal_of(d):
    """autograd's np.make_diagonal (its own function: diag of the last axis)."""
    return anp.sum(anp.sin(anp.make_diagonal(d, axis1=-1, axis2=-2)) * anp.arange(1.0, 10.0).reshape(3, 3))


SINGULAR = np.array([[1.0, 0.3, 0.0], [0.3, 2.0, 0.0], [0.0, 0.0, 0.0]])


def singular_density(x, mean):
    """multivariate_normal with allow_singular=True (x - mean in the covariance's span)."""
    dev = anp.concatenate([x[:2], mean[2:]])
    return mvn.logpdf(dev, mean, SINGULAR, allow_singular=True) \
        + mvn.pdf(dev, mean, SINGULAR, allow_singular=True)


def squeezes(x):
    """np.squeeze and .squeeze() of an axis of size 1 known only from the call."""
    return anp.sum(anp.sin(anp.squeeze(x)) * W) + anp.sum(x.squeeze() ** 3)


def empty_and_kinds(ex, kind, x):
    """An empty list argument beside a class argument."""
    assert isinstance(ex, kind)
    return anp.sum(x ** 2) * (len(ex) + 1.5)


def low_precision(w):
    return anp.sum(w ** 2 * anp.arange(4.0))


def int_cast(w):
    """autograd's np.int64 of run-time values: indices."""
    rows = anp.int64(w[:, -1])
    return anp.sum(w[:, :-1][rows] ** 2)


WI = np.array([[0.5, -0.2, 1.4], [0.3, 0.8, 0.3], [-0.6, 0.4, 1.6]])

FORMS = [  # (function, arguments, wrt, autograd's function)
    (closes_over, (X, 0.8), (0, 1), closes_over_ag),
    (closes_over_twice, (X,), (0,), closes_over_twice_ag),
    (read_when_called, (X, X[::-1]), (0, 1), read_when_called),
    (squeezes, (SQ,), (0,), squeezes),
    (stacked, (X,), (0,), stacked),
    (empty_and_kinds, ([], list, X), (2,), empty_and_kinds),
    (int_cast, (WI,), (0,), int_cast),
    (diagonal_of, (X,), (0,), diagonal_of),
    (singular_density, (X, X[::-1] * 0.5), (0, 1), singular_density),
]


def check_form(fn, args, wrt, ag_fn):
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    want = [grad(ag_fn, k)(*args) for k in wrt]
    check_against(fn, args, wrt, value, grads, want)


def check_empty_gradients():
    """The gradient of an empty list, tuple or dict is itself."""
    for ex, kind in (([], list), ((), tuple), ([(), []], list), ({}, dict)):
        g = jitgrad.grad(empty_and_kinds, wrt=(0, 2))(ex, kind, X)
        assert g[0] == ex and type(g[0]) is type(ex)
        np.testing.assert_allclose(g[1], 2 * X * (len(ex) + 1.5))


def check_float16():
    value, g = jitgrad.value_and_grad(low_precision)(FLOAT16)
    assert g.dtype == np.float16
    want = grad(low_precision)(FLOAT16)  # exact in float16 here (w * 2k)
    np.testing.assert_array_equal(g, want)
    assert value == pytest.approx(float(low_precision(FLOAT16.astype(np.float64))), rel=1e-12)


def check_singular_covariance_refused():
    """Its derivative in the covariance is refused (the density jumps where the rank
    changes), never computed through eigh's vanishing gaps."""
    def of_cov(cov):
        return mvn.logpdf(X, X, cov, allow_singular=True)
    with pytest.raises(jitgrad.UnsupportedError, match="with respect to its covariance"):
        jitgrad.grad(of_cov)(SINGULAR)


def check_appended():
    value, g = jitgrad.value_and_grad(appended, wrt=(0, 1))([0.5, -1.0, 2.0], 1.5)
    assert value == pytest.approx(appended([0.5, -1.0, 2.0], 1.5), rel=1e-12)
    want = autograd.grad(appended, 0)([0.5, -1.0, 2.0], 1.5)
    assert isinstance(g[0], list)
    np.testing.assert_allclose(g[0], want, rtol=1e-12)
    assert g[1] == pytest.approx(4.0)


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def all_forms(x, c, sq, ex, kind, w16):
    return closes_over(x, c) + squeezes(sq) + empty_and_kinds(ex, kind, x) \
        + low_precision(w16) + int_cast(WI + x[0]) + stacked(x * c) + appended([x[0], c, 1.0], c) \
        + diagonal_of(x) + singular_density(x, x * c)


def all_forms_ag(x, c, sq, ex, kind, w16):
    return closes_over_ag(x, c) + squeezes(sq) + empty_and_kinds(ex, kind, x) \
        + low_precision(w16) + int_cast(WI + x[0]) + stacked(x * c) + appended([x[0], c, 1.0], c) \
        + diagonal_of(x) + singular_density(x, x * c)


def test_forms_compiled():
    """One compiled gradient holding every form; a later call where the squeezed axis is
    not 1 gets the general code, which keeps it."""
    args = (X, 0.8, SQ, [], list, FLOAT16)
    value, grads = jitgrad.value_and_grad(all_forms, wrt=(0, 1, 2, 3))(*args)
    assert grads[3] == []
    want = [grad(all_forms_ag, k)(*args) for k in (0, 1, 2)]
    check_against(lambda x, c, sq: all_forms(x, c, sq, [], list, FLOAT16), args[:3],
                  (0, 1, 2), value, grads[:3], want)
    g = jitgrad.value_and_grad(squeeze_only)
    g(SQ)
    wide = np.linspace(-1.0, 1.0, 40).reshape(5, 2, 4)
    value, gw = g(wide)  # the general code: the axis kept
    assert value == pytest.approx(squeeze_only(wide), rel=1e-12)
    np.testing.assert_allclose(gw, grad(squeeze_only)(wide), rtol=1e-12)
    with pytest.raises(ValueError, match="taken as not 1"):
        g(SQ)  # (the general code kept: the axis of size 1 is refused, not dropped silently)


def squeeze_only(x):
    return anp.sum(anp.sin(anp.squeeze(x)) * anp.arange(4.0))


if __name__ == "__main__":
    for form in FORMS:
        check_form(*form)
    check_empty_gradients()
    check_float16()
    check_appended()
    check_singular_covariance_refused()
    print("autograd's forms: values and gradients agree with autograd and central differences")
