"""Python forms met in the second held-out batch of real code (issue #43, part hb2b), in
functions of our own: an environment object whose ``step`` method keeps its state on ``self``
(``self.state = ...``, ``self.steps += 1``, as classic-control simulators do); a dtype helper
that recurses over a tuple display with a starred generator and a list comprehension of types
(``np.result_type(*(kind(d) for d in dtypes))``, ``dtype.kind``); ``astype(..., copy=False)``;
``np.zeros(shape, dtype, order)`` with positional arguments; a list of slices made in each
iteration of a run-time loop and changed in place there; a tuple and a list changed by a
``range`` loop of a few iterations known while building (unrolled); a context manager of
the user's class whose ``__enter__``/``__exit__`` set a module variable through ``global``
(colour's ``with sdiv_mode():``), with ``typing.cast(Literal[...], v)``, ``v in [a list
comprehension]`` and ``.copy()`` of a number made while building.

One compiled gradient holds them all; it is checked against central finite differences and
against JAX (the same computation written with jax.numpy). The refusals (an attribute set
on a global object; a global set under a run-time branch, or left changed when the function
returns; an ``__exit__`` that swallows exceptions) are checked while building, with no
compile. (An attribute set under a run-time branch, or updated in place as an array, is
taken now: tests/test_object_flow.py.)
"""

from __future__ import annotations

import os
import sys
from typing import Literal, cast

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad

IMAGE = np.array([[0.2, 0.5, 0.4, 0.9], [0.1, 0.7, 0.3, 0.6], [0.8, 0.2, 0.55, 0.35]])
FORCES = np.array([0.7, -0.3])


class Stepper:
    """A damped pendulum stepped by explicit Euler, its state kept on ``self``."""

    def __init__(self, dt):
        self.dt = dt
        self.state = None
        self.steps = 0

    def step(self, force):
        x, v = self.state
        acc = force - 0.5 * np.sin(x) - 0.1 * v
        v = v + self.dt * acc
        x = x + self.dt * v
        self.state = (x, v)
        self.steps += 1
        return x * v


def float_kind(dtypes):
    """The float type for data of ``dtypes`` (a dtype, or a tuple of them)."""
    if isinstance(dtypes, tuple):
        return np.result_type(*(float_kind(d) for d in dtypes))
    dtype = np.dtype(dtypes)
    return np.float64 if dtype.kind in "fi" else np.float32


def smooth(image, weight):
    """Three explicit diffusion steps along every axis, the slices built per axis."""
    ndim = image.ndim
    shape = ()
    for ax in range(ndim):  # a tuple grown by a loop of ndim iterations: unrolled
        shape = shape + (image.shape[ax],)
    out = image
    i = 0
    while i < 3:
        cuts = [slice(None)] * ndim  # made in this iteration, changed in place in it
        acc = np.zeros(shape, image.dtype, "C")
        for ax in range(ndim):
            cuts[ax] = slice(1, None)
            acc[tuple(cuts)] += np.diff(out, axis=ax)
            cuts[ax] = slice(None)
        out = out - weight * acc
        i += 1
    return out


_SCALE_MODE = "plain"


def set_scale_mode(mode):
    global _SCALE_MODE
    _SCALE_MODE = cast(Literal["plain", "half"], mode.lower())


class scale_mode:
    """Sets the module's scale mode for the body of a with statement."""

    def __init__(self, mode):
        self.mode = mode
        self.previous = _SCALE_MODE

    def __enter__(self):
        set_scale_mode(self.mode)
        return self

    def __exit__(self, *args):
        set_scale_mode(self.previous)


def scaled(x):
    if _SCALE_MODE not in [m.lower() for m in ("Plain", "Half")]:
        raise ValueError("unknown mode")
    return x * 0.5 if _SCALE_MODE == "half" else x


def loss(image, weight, x0, forces):
    with scale_mode("Half") as mode:
        moded = scaled(x0) * (1.0 if mode.mode == "Half" else 2.0)
    moded = (moded + scaled(x0)) * np.asarray(2.0, np.float64).copy()  # plain again
    kind = float_kind((image.dtype, forces.dtype))
    img = image.astype(kind, copy=False)
    sim = Stepper(0.1)
    sim.state = (x0, 0.0)
    total = 0.0
    for f in (1.0, -0.5, 0.25):
        total += sim.step(f * forces[0] + forces[1])
    total = total + sim.steps * sim.state[1]
    return np.sum(smooth(img, weight) ** 2) + total + moded


def loss_jax(jnp, image, weight, x0, forces):
    out = image
    for _ in range(3):
        acc = jnp.zeros(image.shape)
        acc = acc.at[1:, :].add(jnp.diff(out, axis=0))
        acc = acc.at[:, 1:].add(jnp.diff(out, axis=1))
        out = out - weight * acc
    x, v, total = x0, 0.0, 0.0
    for f in (1.0, -0.5, 0.25):
        acc = f * forces[0] + forces[1] - 0.5 * jnp.sin(x) - 0.1 * v
        v = v + 0.1 * acc
        x = x + 0.1 * v
        total = total + x * v
    return jnp.sum(out ** 2) + total + 3 * v + 3.0 * x0


def test_gradient_matches_finite_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    args = (IMAGE, 0.15, 0.4, FORCES)
    value, grads = jitgrad.value_and_grad(loss, wrt=(0, 1, 2, 3))(*args)
    assert value == pytest.approx(loss(*args), rel=1e-12)
    for at, got in enumerate(grads):
        np.testing.assert_allclose(got, numeric_grad(loss, args, at), rtol=1e-6, atol=1e-7)
    want = jax.grad(lambda *a: loss_jax(jnp, *a), argnums=(0, 1, 2, 3))(
        jnp.array(IMAGE), 0.15, 0.4, jnp.array(FORCES))
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-10, atol=1e-12)


GLOBAL_STEPPER = Stepper(0.1)


def set_on_global(x):
    GLOBAL_STEPPER.state = (x, 0.0)
    return GLOBAL_STEPPER.step(1.0)


def global_in_branch(x):
    if x > 0.0:
        set_scale_mode("half")
    return scaled(x)


def global_left_changed(x):
    y = scaled(x)  # reads the mode the module holds (a mode set before any read is hb8a's)
    set_scale_mode("half")  # never set back: the next call would start from "half"
    return y + scaled(x)


class swallowing:
    def __enter__(self):
        return self

    def __exit__(self, *args):
        return True


def exit_swallows(x):
    with swallowing():
        y = x * 2.0
    return y


@pytest.mark.parametrize(("fn", "message"), [
    (global_in_branch, r"assignment to the global `_SCALE_MODE` under a branch"),
    (global_left_changed, r"the global `_SCALE_MODE` is left changed when global_left"),
    (exit_swallows, r"swallowing.__exit__ returns True: a context manager that may swallow"),
    (set_on_global, r"attribute \.state of a Stepper made before the function was called"),
])
def test_refused_with_the_reason(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn)(0.3)
