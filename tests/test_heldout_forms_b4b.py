"""Python forms met in the fourth held-out batch of real code (issue #43, part hb4b), in
functions of our own: ``a, b, c = map(np.asarray, (a, b, c))`` (and ``map`` of a two-argument
function over two tuples written out); a shape checked with ``x.shape in ((n, d), (n, d, d))``;
a ufunc's ``.outer`` (``np.multiply.outer``, ``np.subtract.outer`` of a matrix and a vector);
a module-level table (a list of lists of numbers) whose row is chosen by a run-time index in
a loop that breaks, with the last row (read with a known index) on the other path; ``and`` /
``or`` with a number operand in a test (``x[i] > 0.0 and i % 2``); and ``if y.real < 0.0`` of
an array of one entry, as NumPy takes it; autograd's ``elementwise_grad(f, argnum)`` called
inside the function (a hazard from a cumulative hazard, as survival models write it).

One compiled gradient holds them all (elementwise_grad, a nested gradient, has one of its
own), checked against central finite differences and against
JAX (the same computation written with jax.numpy). The refusals (a ragged table; a row of a
table used where a list and an array differ; the truth value of an array of more than one
entry) are checked while building, with no compile.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError

elementwise_grad = pytest.importorskip("autograd").elementwise_grad

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against

EDGES = [0.25, 0.5, 0.75]
COEFFS = [[1.5, 0.40, 0.10],
          [1.2, 0.55, 0.20],
          [0.9, 0.70, 0.35],
          [0.6, 0.85, 0.50]]
RAGGED = [[1.0, 2.0], [3.0]]

X = np.array([0.95, -0.7, 0.45, 0.9, -0.2])
M = np.array([[0.2, -0.1], [0.4, 0.3], [-0.5, 0.6], [0.1, 0.8], [0.7, -0.3]])
Y = np.array([-0.8])


def pick_row(c):
    """The first two coefficients of the row of COEFFS for ``c``: the first edge at or
    above it, else the last row."""
    for i in range(len(EDGES)):
        if c <= EDGES[i]:
            row = COEFFS[i]
            break
        elif i == len(EDGES) - 1:
            row = COEFFS[-1]
    return row[0], row[1]


def loss(x, m, y):
    x, m, y = map(np.asarray, (x, m, y))
    n, d = m.shape
    assert m.shape in ((n, d), (n, d, d))
    p, q = map(np.multiply, (x, x), (x, 2.0))
    total = np.sum(np.sin(np.multiply.outer(x, p[:2])))
    total = total + np.sum(np.subtract.outer(m, q[1:3]) ** 2)
    for k in range(3):
        a, b = pick_row(abs(x[k]))
        total = total + a * x[k] + b * x[k] ** 2 + COEFFS[k + 1][2] * x[k] ** 3
    for i in range(x.shape[0]):
        total = total + x[i] * (3.0 if x[i] > 0.0 and i % 2 else 1.0)
        if i % 3 or x[i] < 0.0:
            total = total + 0.5 * x[i] ** 2
    z = y * 1.0
    if z.real < 0.0:
        z *= -1.0
    return total + np.sum(z ** 3) + np.sum(m[:, 0] * z)


def cumulative_hazard(params, t):
    return (t / params[0]) ** params[1]


def hazard_loss(x, m):
    hazard = elementwise_grad(cumulative_hazard, argnum=1)(x[3:] ** 2 + 0.8, m[:, 1] ** 2 + 0.5)
    return np.sum(np.log(hazard)) + np.sum(cumulative_hazard(x[3:] ** 2 + 0.8, m[:, 0] ** 2))


def loss_jax(jax, jnp, x, m, y):
    p, q = x * x, x * 2.0
    total = jnp.sum(jnp.sin(x[:, None] * p[:2][None, :]))
    total = total + jnp.sum((m[:, :, None] - q[1:3]) ** 2)
    for k in range(3):
        c = abs(X[k])  # (the branch taken at the test's point)
        i = next((j for j, e in enumerate(EDGES) if c <= e), len(EDGES))
        row = COEFFS[i]
        total = total + row[0] * x[k] + row[1] * x[k] ** 2 + COEFFS[k + 1][2] * x[k] ** 3
    for i in range(x.shape[0]):
        total = total + x[i] * (3.0 if X[i] > 0.0 and i % 2 else 1.0)
        if i % 3 or X[i] < 0.0:
            total = total + 0.5 * x[i] ** 2
    z = -y if Y[0] < 0.0 else y
    return total + jnp.sum(z ** 3) + jnp.sum(m[:, 0] * z)


def hazard_loss_jax(jax, jnp, x, m):
    p = x[3:] ** 2 + 0.8
    hazard = jax.grad(lambda u: jnp.sum(cumulative_hazard(p, u)))(m[:, 1] ** 2 + 0.5)
    return jnp.sum(jnp.log(hazard)) + jnp.sum(cumulative_hazard(p, m[:, 0] ** 2))


def check(fn, fn_jax, args):
    """``fn``'s compiled gradient against central differences and JAX's."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    wrt = tuple(range(len(args)))
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    want = jax.grad(lambda *a: fn_jax(jax, jnp, *a), argnums=wrt)(*(jnp.array(a) for a in args))
    check_against(fn, args, wrt, value, grads, want)


def test_gradient_matches_finite_differences_and_jax():
    check(loss, loss_jax, (X, M, Y))


def test_elementwise_grad_inside_compiled():
    """autograd's elementwise_grad inside the function: a nested gradient, compiled on its
    own."""
    check(hazard_loss, hazard_loss_jax, (X, M))


def ragged_table(x, c):
    return RAGGED[int(c)][0] * x


def row_concatenated(x, c):
    r = COEFFS[int(c)]
    return (r + r)[4] * x


def truth_of_three(x, c):
    if x > 0.0:
        return c
    return 2.0 * c


@pytest.mark.parametrize(("fn", "args", "message"), [
    (ragged_table, (0.3, 0.2), r"`RAGGED` indexed with a run-time value .* one length"),
    (row_concatenated, (0.3, 0.2), r"a row of a list of lists read .* differ in \+, \* and =="),
    (truth_of_three, (np.array([0.3, 0.5, 0.2]), 0.3),
     r"truth value of an array is ambiguous \(this one has 3 entries"),
])
def test_refused_with_the_reason(fn, args, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn, wrt=1 if fn is truth_of_three else 0)(*args)
