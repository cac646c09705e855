"""Writes whose value has the slot's sizes (issue #45: NPBench's jacobi_1d, covariance, doitgen).

``x[idx] = v`` broadcasts ``v`` to the slot in NumPy; nearly always it has the slot's sizes. The
builder assumes so (`build_writes.write_fits`: argument sizes checked first thing, other sizes
checked at the write), so the write's adjoint is the slot's adjoint as it is: no sum back to
``v``'s shape, for which the forward pass would keep ``v`` (pushed on the tape in a loop), and a
whole-array write at the top level hands ``x``'s adjoint over to ``v`` (`reverse.hand_over`).

Each form's gradients are checked against central differences and, where installed, JAX's, as
plain Python in a process of their own (``__main__``); the generated code is checked for what
the mechanism removes (the tape of stencil values, the sum back); a write that does broadcast at
run time (which breaks the check) gets the general code and the right gradient. One compiled
test runs the stencil and the whole-array write as users run them.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import jitgrad

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against, numeric_grad
from plain_python import assert_runs_as_plain_python

try:  # the independent oracle, where installed
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None

RNG = np.random.default_rng(45)


def stencil(a, b):
    """jacobi_1d: two arrays each written from slices of the other, in a loop."""
    a, b = a.copy(), b.copy()
    for _ in range(3):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] * a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + np.sin(b[2:]))
    return np.sum(a * a) + np.sum(b * np.arange(b.shape[0]))


def stencil_jax(a, b):
    for _ in range(3):
        b = b.at[1:-1].set(0.33333 * (a[:-2] + a[1:-1] * a[1:-1] + a[2:]))
        a = a.at[1:-1].set(0.33333 * (b[:-2] + b[1:-1] + jnp.sin(b[2:])))
    return jnp.sum(a * a) + jnp.sum(b * jnp.arange(b.shape[0]))


def triangle(d):
    """covariance: a loop writing a row and a column of a product of column slices, sizes
    known only at run time (checked at the write)."""
    m = d.shape[1]
    d = d - np.mean(d, axis=0)
    cov = np.zeros((m, m))
    for i in range(m):
        cov[i:m, i] = cov[i, i:m] = d[:, i] @ d[:, i:m] / 3.0
    return np.sum(cov * cov)


def triangle_jax(d):
    d = d - jnp.mean(d, axis=0)
    cov = d.T @ d / 3.0
    return jnp.sum(cov * cov)


def reshaped(r, q, p, a, c):
    """doitgen: the whole array written with a reshape of a product (sizes from integer
    arguments, checked at the write), its adjoint handed over; then read again."""
    a = a.copy()
    a[:] = np.reshape(np.reshape(a, (r, q, 1, p)) @ c, (r, q, p))
    return np.sum(a * a) + np.sum(a)


def reshaped_jax(r, q, p, a, c):
    a = jnp.reshape(jnp.reshape(a, (r, q, 1, p)) @ c, (r, q, p))
    return jnp.sum(a * a) + jnp.sum(a)


def looped_whole(a, w):
    """A whole-array write in a loop (no hand-over there: the loop keeps one adjoint array)
    and one of a reversed view of the array itself at the top level."""
    a = a.copy()
    for _ in range(2):
        a[:] = np.tanh(a @ w)
    a[:] = a[::-1]
    return np.sum(a * np.arange(1.0, a.shape[0] + 1.0)[:, None])


def looped_whole_jax(a, w):
    for _ in range(2):
        a = jnp.tanh(a @ w)
    a = a[::-1]
    return jnp.sum(a * jnp.arange(1.0, a.shape[0] + 1.0)[:, None])


FORMS = {
    "stencil": (stencil, stencil_jax, (RNG.normal(size=7), RNG.normal(size=7))),
    "triangle": (triangle, triangle_jax, (RNG.normal(size=(5, 4)),)),
    "reshaped": (reshaped, reshaped_jax, (2, 3, 4, RNG.normal(size=(2, 3, 4)),
                                          RNG.normal(size=(4, 4)))),
    "looped_whole": (looped_whole, looped_whole_jax, (RNG.normal(size=(4, 3)),
                                                      RNG.normal(size=(3, 3)) * 0.5)),
}


def _check(name):
    fn, fn_jax, args = FORMS[name]
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, np.ndarray))
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    if jax is None:  # central differences alone (check_against compares with them too)
        want, tolerance = [numeric_grad(fn, args, k) for k in wrt], {"rtol": 1e-6, "atol": 1e-7}
    else:
        want, tolerance = jax.grad(lambda *arrays: fn_jax(*args[:wrt[0]], *arrays), argnums=tuple(
            range(len(wrt))))(*(jnp.asarray(args[k]) for k in wrt)), {}
    check_against(fn, args, wrt, value, grads, want, **tolerance)


def jacobi(steps, a, b):
    """NPBench's jacobi_1d as it is: linear, so its adjoint reads no value of the loop."""
    a, b = a.copy(), b.copy()
    for _ in range(1, steps):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
    return np.sum(a) + np.sum(b)


def test_generated_code_keeps_no_value_for_its_shape():
    """jacobi_1d's loop pushes nothing (its writes' values were pushed for their shapes
    alone); the reshaped write's adjoint neither sums back nor copies and zeroes the slot."""
    a, b = FORMS["stencil"][2]
    src = jitgrad.grad(jacobi, wrt=(1, 2)).source(4, a, b)
    assert "_tape" not in src and "sum_to" not in src
    src = jitgrad.grad(reshaped, wrt=(3, 4)).source(*FORMS["reshaped"][2])
    adjoint = src[src.index("# -- adjoint pass"):]
    assert "sum_to" not in adjoint and "= 0.0" not in adjoint and "same_size" in src


def written_at_run_time(x, k):
    """A write whose value broadcasts at run time (``x[0:k]`` of length 1 into a longer slot):
    the check at the write fails, and the call gets the general code."""
    y = np.zeros(x.shape[0])
    y[1:] = x[0:k] * 2.0
    return np.sum(y * y * np.arange(y.shape[0]))


def check_a_write_that_broadcasts_at_run_time():
    x = np.array([0.5, -1.0, 2.0, 0.25])
    for k in (3, 1):  # (3: a value of the slot's length, 1: one that broadcasts)
        g = jitgrad.grad(written_at_run_time)(x, k)
        np.testing.assert_allclose(g, numeric_grad(written_at_run_time, (x, k), 0),
                                   rtol=1e-6, atol=1e-7)


def test_compiled():
    """As users run it, compiled: the stencil (the whole-array write runs as plain Python)."""
    _check("stencil")


def test_as_plain_python():
    assert_runs_as_plain_python(__file__)


if __name__ == "__main__":
    for name in sorted(FORMS):
        _check(name)
    check_a_write_that_broadcasts_at_run_time()
    print(f"{len(FORMS) + 1} forms agree with central differences" + (" and JAX" if jax else ""))
