"""Objects, ``try`` and loops as values flow through run-time control flow (issue #43, the
held-out forms of simulators and integrators), in functions of our own:

* an object made in the function whose method sets its attributes under an ``if`` on a
  run-time value (merged after it, as a name is) and inside a run-time loop (carried by it),
  an attribute first set inside the loop and never read after it, and ``self.steps += 1``
  on an integer array NumPy made in ``__init__`` (updated in place, as NumPy does);
* ``try: n = len(y) except TypeError: ...`` decided while building: the handler for a
  number (after the statements before ``len``, as Python runs them), the body and ``else``
  for an array;
* a loop that rebinds a view of the array it writes into before any read (``y = out[i]``,
  then ``out[i + 1] = ...``), as fixed-step integrators do;
* an array a run-time loop makes afresh on each iteration, written after the loop: checked at
  run time that the loop ran (Python would otherwise write into the array it was before).

One compiled gradient holds them all; it is checked against central finite differences and
against JAX, and called again with a loop of no iteration, where it raises. The refusals
(one type per attribute after a branch, an attribute read after the loop that set it only,
a TypeError under a run-time condition inside a try, ``except TypeError as e``) are checked
while building, with no compile.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fd import numeric_grad

STATE = np.array([0.3, -0.2])
PUSHES = np.array([0.5, -1.0, 0.7, 0.2])
Y0 = np.array([0.4, -0.3, 0.8])


class Cart:
    """A damped pendulum on a cart, stepped by explicit Euler, its state kept on ``self``."""

    def __init__(self, k, n_envs):
        self.k = k
        self.state = None
        self.heat = 0.0
        self.steps = np.zeros(n_envs, dtype=np.int64)

    def step(self, u):
        x, v = self.state[0], self.state[1]
        a = u - self.k * np.sin(x) - 0.2 * v
        if x > 0.0:  # a run-time branch: the attribute is merged after it
            self.heat = self.heat + 0.5 * v * v
        else:
            self.heat = self.heat - 0.1 * x
        self.state = np.array([x + 0.1 * v, v + 0.1 * a])
        self.last = a  # set only inside the caller's loop, never read after it
        self.steps += 1  # NumPy's in-place update of an array the object holds
        return a * a

    def total(self):
        return self.heat + np.sum(self.state ** 2)


def mean_of(y):
    total = 0.0
    try:
        total = np.sum(y)  # runs for a number too: kept where len raises after it
        n = len(y)
    except TypeError:  # a number
        n = 0.5
    else:
        n = float(n)
    return total / n


def heun(y0, dt, steps):
    """Fixed-step Heun integration of y' = -sin(y), its trajectory written row by row."""
    out = np.zeros((steps + 1, y0.shape[0]))
    out[0] = y0
    for i in range(steps):
        y = out[i]  # rebound to a view of `out` before any read
        k1 = -np.sin(y)
        k2 = -np.sin(y + dt * k1)
        out[i + 1] = y + 0.5 * dt * (k1 + k2)
    return out[-1]


def loss(state, pushes, y0, n):
    cart = Cart(0.8, 3)
    cart.state = state
    cost = 0.0
    for i in range(pushes.shape[0]):
        cost += cart.step(pushes[i])
    cost += cart.total() + 0.01 * np.sum(cart.steps)
    cost += mean_of(y0[0]) + mean_of(y0)
    cost += np.sum(heun(y0, 0.1, 3) ** 2)
    z = y0[::-1]  # a view of the argument
    for _ in range(n):
        z = np.tanh(z) * 1.1 + 0.1  # a new array on each iteration
    z[0] = 2.0 * z[-1]  # into that array: the loop must have run
    return cost + np.sum(z * z)


def loss_jax(jnp, state, pushes, y0, n):
    x, v, heat, cost = state[0], state[1], 0.0, 0.0
    for i in range(pushes.shape[0]):
        a = pushes[i] - 0.8 * jnp.sin(x) - 0.2 * v
        heat = jnp.where(x > 0.0, heat + 0.5 * v * v, heat - 0.1 * x)
        x, v = x + 0.1 * v, v + 0.1 * a
        cost = cost + a * a
    cost = cost + heat + x * x + v * v + 0.01 * 3 * pushes.shape[0]
    cost = cost + 2.0 * y0[0] + jnp.sum(y0) / 3
    y = y0
    for _ in range(3):
        k1 = -jnp.sin(y)
        y = y + 0.05 * (k1 - jnp.sin(y + 0.1 * k1))
    cost = cost + jnp.sum(y ** 2)
    z = y0[::-1]
    for _ in range(n):
        z = jnp.tanh(z) * 1.1 + 0.1
    z = z.at[0].set(2.0 * z[-1])
    return cost + jnp.sum(z * z)


def test_gradient_matches_finite_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    args = (STATE, PUSHES, Y0, 2)
    g = jitgrad.value_and_grad(loss, wrt=(0, 1, 2))
    value, grads = g(*args)
    assert value == pytest.approx(loss(*args), rel=1e-12)
    for at, got in enumerate(grads):
        np.testing.assert_allclose(got, numeric_grad(loss, args, at), rtol=1e-6, atol=1e-7)
    want = jax.grad(lambda *a: loss_jax(jnp, *a, 2), argnums=(0, 1, 2))(
        jnp.array(STATE), jnp.array(PUSHES), jnp.array(Y0))
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"`z` is written after the loop at line \d+, which "
                                         r"ran no iteration"):
        g(STATE, PUSHES, Y0, 0)  # Python would write into y0 itself


class Holder:
    def __init__(self):
        self.v = None
        self.w = 0.0


def one_type_per_attribute(x):
    h = Holder()
    if x > 0.0:
        h.v = x
    return h.w + h.v


def read_after_the_loop(x):
    h = Holder()
    for i in range(3):
        h.u = x * i
    return h.u


def raises_under_a_condition(x):
    try:
        if x > 0.0:
            n = len(x)  # TypeError only where x > 0: not decided while building
        else:
            n = 1
    except TypeError:
        n = 2
    return x * n


def names_the_exception(x):
    try:
        n = len(x)
    except TypeError as e:
        n = len(str(e))
    return x * n


@pytest.mark.parametrize(("fn", "message"), [
    (one_type_per_attribute, (r"the attribute \.v is a number on one side of an `if` on a "
                              r"value known only at run time and a NoneType on the other")),
    (read_after_the_loop, r"the attribute \.u is set only inside a loop that runs at run time"),
    (raises_under_a_condition, r"len\(\) of a scalar"),
    (names_the_exception, r"try/except is supported only around code that cannot raise"),
])
def test_refused_with_the_reason(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn)(0.3)
