"""Lists passed to the user's own functions, and names of two kinds across a run-time ``if``
(issue #43, part hlists), in functions of our own written in the forms held-out code takes:

* a list built in the function (a list comprehension, ``a.tolist()`` of a vector or of a
  matrix) passed to a helper that reads it as a list: ``min``, ``max``, ``ks.index(v)``,
  ``ks.count(v)``, ``len``, ``zip``, ``sum``, ``sorted``, ``in``, ``rows[i][j]``; passed on through
  ``brentq(f, a, b, args=(zs, ks))`` to the function solved; returned again inside a tuple
  (``v, xs, ys = split(...)``); ``cmps = range(len(xs))`` held in a name and looped over;
* a number on one side of a run-time ``if`` and an array of one entry on the other
  (statsmodels' ``mad``: ``center`` an ``apply_over_axes`` result or ``0.0``);
* ``x if flag else None`` on a bool argument (SALib's ``calc_second_order``): each value of
  the argument gets code of its own, checked on entry.

Each gradient is checked against central finite differences and JAX's (the same computation
written with jax.numpy, or the same code run with jax.numpy as ``np``). The breadth runs as
plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own); one test compiles one
function of each mechanism. The refusals are checked while building.
"""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest
from scipy.optimize import brentq

import jitgrad
from jitgrad import ShapeError, UnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against
from plain_python import assert_runs_as_plain_python

# -- a list built here, read as a list by a helper -------------------------------------------


def _limits(ks, zs):
    kmin, kmax = min(ks), max(ks)
    z = zs[ks.index(kmax)]
    total = 0.0
    for k, w in zip(ks, zs):
        total += w * k
    first = sorted(ks)[0]  # noqa: FURB192 (the form: sorted of the list)
    bonus = 1.0 if kmax in ks else 0.0
    return total + z * kmin + len(ks) * first + sum(ks) + bonus * ks.count(kmax)


def listcomp_to_helper(x):
    ks = [np.exp(x[i]) * (i + 1.0) for i in range(3)]
    return _limits(ks, [0.5, 0.3, 0.2])


def tolist_to_helper(x, w):
    return _limits(x.tolist(), w.tolist())


def _limits_jax(jnp, ks, zs):
    return (jnp.sum(ks * zs) + zs[jnp.argmax(ks)] * jnp.min(ks) + len(ks) * jnp.sort(ks)[0]
            + jnp.sum(ks) + 1.0)


def listcomp_to_helper_jax(jnp, x):
    return _limits_jax(jnp, jnp.exp(x) * jnp.arange(1.0, 4.0), jnp.array([0.5, 0.3, 0.2]))


def tolist_to_helper_jax(jnp, x, w):
    return _limits_jax(jnp, x, w)


def _pair_sum(xs, taus):
    cmps = range(len(xs))
    g = [[np.exp(-0.3 * taus[i][j]) for j in cmps] for i in cmps]
    total = 0.0
    for i in cmps:
        row = taus[i]
        for j in cmps:
            total += xs[i] * xs[j] * g[i][j] * row[j]
    return total


def matrix_tolist(xs, taus):
    return _pair_sum(xs.tolist(), taus.tolist())


def matrix_tolist_jax(jnp, xs, taus):
    return jnp.sum(xs[:, None] * xs[None, :] * jnp.exp(-0.3 * taus) * taus)


# -- passed on to the function a solver calls, and returned in a tuple -----------------------


def _residual(v, zs, ks):
    err = 0.0
    for z, k in zip(zs, ks):
        err += z * (k - 1.0) / (1.0 + v * (k - 1.0))
    return err


def _split(zs, ks):
    v = brentq(_residual, 0.0, 1.0, args=(zs, ks), xtol=1e-14)
    xs = [z / (1.0 + v * (k - 1.0)) for z, k in zip(zs, ks)]
    ys = [k * x for x, k in zip(xs, ks)]
    return v, xs, ys


def flash(t, zs):
    ks = [np.exp(t[i]) for i in range(3)]
    v, xs, ys = _split(zs.tolist(), ks)
    return v + sum(xs[i] * ys[i] for i in range(len(xs)))


def flash_jax(jnp, t, zs):
    """The root by SciPy, its derivative by the implicit function theorem, in JAX."""
    import jax

    def residual(v, t):
        k = jnp.exp(t)
        return jnp.sum(zs * (k - 1.0) / (1.0 + v * (k - 1.0)))

    def root(t):
        v = brentq(lambda u: float(residual(u, np.asarray(t))), 0.0, 1.0, xtol=1e-14)
        return v

    @jax.custom_vjp
    def solved(t):
        return root(t)

    def fwd(t):
        v = root(t)
        return v, (v, t)

    def bwd(res, g):
        v, t = res
        dv = jax.grad(residual, 0)(v, t)
        return (-g * jax.grad(residual, 1)(v, t) / dv,)

    solved.defvjp(fwd, bwd)
    v = solved(t)
    k = jnp.exp(t)
    xs = zs / (1.0 + v * (k - 1.0))
    return v + jnp.sum(xs * k * xs)


# -- a number on one side of a run-time `if`, an array of one entry on the other ------------


def _spread(a, scale, center=np.median):
    if callable(center) and scale > 0.0:
        center = np.apply_over_axes(center, a, 0)
    else:
        center = 0.5
    return np.median(np.abs(a - center) / 0.6745)


def centred(x, scale):
    return _spread(x, scale) * np.sum(x * x)


def centred_jax(jnp, x, scale):
    center = jnp.median(x, keepdims=True) if scale > 0.0 else 0.5
    return jnp.median(jnp.abs(x - center) / 0.6745) * jnp.sum(x * x)


# -- `x if flag else None` on a bool argument --------------------------------------------------


def _halves(y, both):
    a = y[:3]
    b = np.zeros(3) if both else None
    if both:
        b = b + y[3:] * 2.0
    return a, b


def flagged(y, both=True):
    a, b = _halves(y, both)
    out = np.sum(a * a)
    if both:
        out = out + np.sum(a * b)
    return out


def with_jax_numpy(fn, jnp):
    """``fn``'s code with jax.numpy for ``np``."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__,
                              fn.__defaults__)


X3 = np.array([0.2, -0.4, 0.1])
W3 = np.array([0.5, 0.3, 0.2])
TAUS = np.array([[0.0, 1.2, 0.5], [0.8, 0.0, 1.4], [-0.3, 0.6, 0.0]])
LOG_K = np.log(np.array([1.685, 0.742, 0.532]))
Y6 = np.array([0.3, -1.2, 0.8, 0.5, 1.5, -0.7])
A5 = np.array([0.3, -1.2, 2.0, 0.7, 1.25])  # (no ties among the deviations)

# (function, its JAX twin (None: the same code with jax.numpy), arguments, positions)
CASES = [
    (listcomp_to_helper, listcomp_to_helper_jax, (X3,), (0,)),
    (tolist_to_helper, tolist_to_helper_jax, (X3, W3), (0, 1)),
    (matrix_tolist, matrix_tolist_jax, (W3, TAUS), (0, 1)),
    (flash, flash_jax, (LOG_K, W3), (0,)),
    (centred, centred_jax, (A5, 1.0), (0,)),
    (centred, centred_jax, (A5, -1.0), (0,)),
]


def check(grad, fn, twin, args, wrt, jax) -> None:
    value, grads = grad(*args)
    if twin is None:
        jfn = with_jax_numpy(fn, jax.numpy)
        twin_of = lambda *a: jfn(*a, *args[len(wrt):])
    else:
        twin_of = lambda *a: twin(jax.numpy, *a, *(
            jax.numpy.asarray(v) for v in args[len(wrt):]))
    want = jax.grad(twin_of, argnums=tuple(range(len(wrt))))(
        *(jax.numpy.asarray(args[k]) for k in wrt))
    check_against(fn, args, wrt, value, grads, want, rtol=1e-8, atol=1e-10)


def check_flagged(jax) -> None:
    """One gradient called with both=True, False, True, then the default: three
    specialisations (the omitted default is a constant of its own build, as in Numba), each
    checked on entry and used for its value."""
    grad = jitgrad.value_and_grad(flagged, wrt=(0,))
    for both in (True, False, True):
        check(grad, flagged, None, (Y6, both), (0,), jax)
    _, (g,) = grad(Y6)
    np.testing.assert_allclose(g, grad(Y6, True)[1][0], rtol=0, atol=0)
    built = [c for cs in grad.specialisations.for_types.values() for c in cs]
    assert len(built) == 3, f"{len(built)} specialisations"


def run_breadth(jax) -> None:
    for fn, twin, args, wrt in CASES:
        check(jitgrad.value_and_grad(fn, wrt=wrt), fn, twin, args, wrt, jax)
    check_flagged(jax)


def test_lists_and_kinds_as_plain_python():
    """Every function of `CASES` and the bool argument, run as plain Python (a process of
    its own)."""
    pytest.importorskip("jax")
    assert_runs_as_plain_python(__file__)


def test_compiled():
    """A list given to a helper (``.tolist()``, index, zip, sorted), a number promoted across
    a run-time ``if``, and a bool argument's two specialisations, compiled as users run
    them."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    fn, twin, args, wrt = CASES[1]
    check(jitgrad.value_and_grad(fn, wrt=wrt), fn, twin, args, wrt, jax)
    fn, twin, args, wrt = CASES[4]
    grad = jitgrad.value_and_grad(fn, wrt=wrt)
    check(grad, fn, twin, args, wrt, jax)
    check(grad, fn, twin, CASES[5][2], wrt, jax)
    check_flagged(jax)


# -- refused, naming the line ------------------------------------------------------------------


def _slices(values):
    rotated = values[1:] + values[:1]  # (joined slices: Python's list only; np.sum(values[1:])
    return np.sum(np.array(rotated) * np.arange(3.0))  # alone is an array's slice, taken)


def _appends(values):
    values.append(1.0)
    return np.sum(np.array(values))


def list_to_slicer(x):
    return _slices([v * 2.0 for v in x])


def list_to_appender(x):
    return _appends(x.tolist())


def promoted_then_shape(x, t):
    if t > 0.0:
        c = np.sum(x, keepdims=True)
    else:
        c = 1.5
    return np.sum(x - c) * c.shape[0]


def number_or_vector(x, t):
    if t > 0.0:
        c = x * 2.0
    else:
        c = 1.5
    return np.sum(x - c)


@pytest.mark.parametrize(("fn", "error", "match"), [
    (list_to_slicer, UnsupportedError, r"the list `values` \(given to _slices .*sliced"),
    (list_to_appender, UnsupportedError, r"the list `values` .* used with \.append"),
    (promoted_then_shape, ShapeError, r"`c` is a f64\[:\] on one branch and a f64"),
    (number_or_vector, ShapeError, r"`c` is a f64\[:\] on one branch and a f64"),
], ids=lambda c: getattr(c, "__name__", None) or "")
def test_refused(fn, error, match):
    args = (X3,) if fn.__code__.co_argcount == 1 else (X3, 1.0)
    with pytest.raises(error, match=match):
        jitgrad.grad(fn)(*args)


def _smallest_twice(values):
    return sorted(values)[0] * 2.0  # noqa: FURB192 (the form: sorted of the list)


def list_to_sorter(x):
    return _smallest_twice([v * v for v in x])


def array_to_sorter(x):
    return _smallest_twice(x)


def test_a_helper_given_a_list_then_an_array():
    """How a helper reads a list given to it holds for that call only: given an array after
    (Python's sorted of an array is a list of numbers), it is read as before, refused."""
    np.testing.assert_allclose(jitgrad.grad(list_to_sorter)(X3),
                               [0.0, 0.0, 4.0 * X3[2]], atol=1e-12)
    with pytest.raises(UnsupportedError, match=r"sorted\(\) of an array"):
        jitgrad.grad(array_to_sorter)(X3)


if __name__ == "__main__":
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy  # (what `check` runs the twins with)

    run_breadth(jax)
    print("lists given to helpers, numbers promoted, bool arguments: gradients agree")
