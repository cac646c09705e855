"""Tests on the arguments' sizes that leave a name of another rank or type on each side of an
``if``, and arrays grown in a loop (issue #43, part hsizeif), in functions of our own written
in the forms of held-out code: scikit-learn's multinomial loss (``fit_intercept = w.size ==
n_classes * (n_features + 1)``, then ``intercept = w[:, -1]`` or ``intercept = 0``), a
bias read off the end of the weights when ``len(w) == n_features + 1``, ``if y.shape[0] ==
1: y = y[0]``, ``elif`` and nested tests, ``x.size``, ``x.shape == y.shape``, ``None`` on one
side; ``X = np.hstack([X, col])`` (``np.vstack``, ``np.concatenate``, ``np.append``)
on each iteration of a loop whose count is an argument, read after the loop; and a list
comprehension of rotation matrices (``np.array([[c, -s], [s, c]])``) of run-time count.

Each function is called with sizes that take one side, then sizes that take the other (the
same gradient object: its first specialisation's check refuses the second call, which gets
code of its own), then the first sizes again; each gradient is checked against central
finite differences and JAX's (the same code run with jax.numpy as ``np``). The breadth runs
as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own); one test compiles one
function of each mechanism.
"""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest

import jitgrad
from jitgrad import ShapeError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from conformance_fns import py_elif_on_length_ranks_differ as by_length
from fd import check_against
from plain_python import assert_runs_as_plain_python

rng = np.random.default_rng(7)


def multinomial(w, X, Y):
    """scikit-learn's multinomial loss: the intercepts are the weights' last column when
    there is room for them."""
    n_classes = Y.shape[1]
    n_features = X.shape[1]
    fit_intercept = w.size == n_classes * (n_features + 1)
    w = w.reshape(n_classes, -1)
    if fit_intercept:
        intercept = w[:, -1]
        w = w[:, :-1]
    else:
        intercept = 0
    p = X @ w.T + intercept
    p = p - np.max(p, axis=1, keepdims=True)
    return -np.sum(Y * (p - np.log(np.sum(np.exp(p), axis=1, keepdims=True))))


def bias_at_end(w, X):
    if len(w) == X.shape[1] + 1:
        b = w[-1:]
        w = w[:-1]
    else:
        b = 0.0
    return np.sum(np.log1p(np.exp(-(X @ w + b))))


def one_row(y, W):
    if y.shape[0] == 1:
        y = y[0]
    return np.sum(np.tanh(W @ y.T))


def nested(x, y):
    if x.shape[0] > 2:
        if y.shape == x.shape:
            z = x * y
        else:
            z = np.sum(x) * np.sum(y)
    else:
        z = x[:, None] * y
    return np.sum(z ** 2)


def square_if_four(x):
    if x.size == 4:
        v = np.trace(x.reshape(2, 2) @ x.reshape(2, 2))
    else:
        v = x
    return np.sum(np.sin(v))


def weights_or_none(x, w):
    if w.shape[0] == x.shape[0]:
        weights = w
    else:
        weights = None
    if weights is None:
        return np.sum(x ** 2)
    return np.sum(weights * x ** 2)


def hstack_columns(x, n):
    X = x[:, None]
    for i in range(n):
        X = np.hstack([X, (x ** (i + 2))[:, None]])
    return np.sum(np.sin(X @ np.arange(1.0, X.shape[1] + 1)))


def vstack_rows(x, n):
    R = x[None, :]
    for i in range(n):
        R = np.vstack([R, np.cos(x * (i + 1.0))])
    return np.sum(R ** 2) + np.sum(R[-1])


def append_numbers(x, n):
    out = np.zeros(0)
    for k in range(n):
        out = np.append(out, np.sum(x * (k + 1.0)))
    return np.sum(out ** 2) + out.shape[0]


def concatenate_blocks(x, n):
    out = x[:2]
    for i in range(n):
        if i % 2:
            continue
        out = np.concatenate((out, np.exp(x * i)), axis=0)
    return np.sum(out ** 2)


def chained_rotations(x, n):
    """A list comprehension of matrices (written out of numbers), of run-time count."""
    Rs = [np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) for t in x[:n]]
    P = np.eye(2)
    for R in Rs:
        P = P @ R
    return np.sum(P * np.arange(4.0).reshape(2, 2)) + sum(np.sum(R ** 2) * x[0] for R in Rs)


def vec(n):
    return rng.normal(size=n)


# (function, the first call's arguments, a call's that takes the other side, the positions
# differentiated)
SIDES = [
    (multinomial, (vec(16), vec((5, 3)), np.eye(4)[[0, 1, 2, 3, 0]]),
     (vec(12), vec((5, 3)), np.eye(4)[[0, 1, 2, 3, 0]]), (0, 1)),
    (bias_at_end, (vec(4), vec((5, 3))), (vec(3), vec((5, 3))), (0, 1)),
    (one_row, (vec((1, 3)), vec((2, 3))), (vec((4, 3)), vec((2, 3))), (0, 1)),
    (by_length, (vec(2),), (vec(5),), (0,)),
    (by_length, (vec(1),), (vec(3),), (0,)),
    (nested, (vec(3), vec(3)), (vec(2), vec(3)), (0, 1)),
    (nested, (vec(3), vec(4)), (vec(3), vec(3)), (0, 1)),
    (square_if_four, (vec(4),), (vec(5),), (0,)),
    (weights_or_none, (vec(3), vec(3)), (vec(3), vec(2)), (0, 1)),
]

GROWN = [hstack_columns, vstack_rows, append_numbers, concatenate_blocks, chained_rotations]


def with_jax_numpy(fn, jnp):
    """``fn``'s code with jax.numpy for ``np``: JAX's gradient of the same computation (a
    test on sizes is decided while tracing, as sizes are static there)."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__)


def check_call(grad, fn, args, wrt, jax):
    """One call of ``grad`` against central differences and JAX's gradient."""
    value, grads = grad(*args)
    jfn = with_jax_numpy(fn, jax.numpy)
    want = jax.grad(lambda *a: jfn(*a, *args[len(wrt):]), argnums=tuple(range(len(wrt))))(
        *(jax.numpy.array(args[k]) for k in wrt))
    check_against(fn, args, wrt, value, grads, want, rtol=1e-8, atol=1e-10)


def check_sides(fn, first, other, wrt, jax) -> None:
    """The first sizes, the other side's, then the first again, through one gradient: two
    specialisations, each used for the sizes it was built for."""
    grad = jitgrad.value_and_grad(fn, wrt=wrt)
    for args in (first, other, first):
        check_call(grad, fn, args, wrt, jax)
    built = [c for cs in grad.specialisations.for_types.values() for c in cs]
    assert len(built) == 2, f"{fn.__name__}: {len(built)} specialisations"


def check_grown(fn, jax) -> None:
    """An array grown (a list built) on each of ``n`` iterations, for n = 3, 0 (the loop
    never runs) and 1."""
    grad = jitgrad.value_and_grad(fn, wrt=(0,))
    for n in (3, 0, 1):
        check_call(grad, fn, (vec(5), n), (0,), jax)


def run_breadth(jax) -> None:
    for fn, first, other, wrt in SIDES:
        check_sides(fn, first, other, wrt, jax)
    for fn in GROWN:
        check_grown(fn, jax)


def test_sides_and_grown_arrays_as_plain_python():
    """Every function of `SIDES` and `GROWN`, run as plain Python (a process of its own)."""
    pytest.importorskip("jax")
    assert_runs_as_plain_python(__file__)


def test_compiled():
    """One test on sizes (both sides, through the compiled check that refuses the other
    side's sizes) and one grown array, compiled as users run them."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    check_sides(bias_at_end, *SIDES[1][1:], jax)
    check_grown(hstack_columns, jax)


def size_of_a_mask(x):
    if x[x > 0.0].shape[0] == 1:
        y = x[0]
    else:
        y = x
    return np.sum(y * y)


def grown_and_read(x, n):
    R = x[None, :]
    for _ in range(n):
        R = np.vstack([R, R[-1] * x])
    return np.sum(R)


def test_refused_where_not_decided_by_sizes():
    """A test on a size the data decide (a mask's count) is a value known only at run time:
    a name of another rank on each side is refused, as before; an array grown in a loop that
    also reads it is refused when it changes shape."""
    with pytest.raises(ShapeError, match=r"`y` is a f64 on one branch and a f64\[:\]"):
        jitgrad.grad(size_of_a_mask)(np.array([0.5, -1.0, 2.0]))
    with pytest.raises(ShapeError, match=r"`R`, an array the loop carries, changed shape"):
        jitgrad.grad(grown_and_read)(np.array([0.5, -1.0, 2.0]), 2)


if __name__ == "__main__":
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy  # (what `check_call` runs the functions with)

    run_breadth(jax)
    print("tests on sizes and grown arrays: gradients agree with finite differences and JAX")
