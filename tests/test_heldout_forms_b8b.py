"""Forms met in the eighth held-out batch of real code (issue #43, part hb8b: battery models,
rocketry, 2-D frames, vehicle dynamics, digital communications, diffusion MRI), in functions
of our own:

- a parameter object whose ``__init__`` makes the objects it holds (``self.steering =
  SteeringParameters()``, run as Python while building) and whose attributes the function then
  sets (CommonRoad's ``parameters_vehicle2``);
- an integrator's state as a Python list rebound in a run-time loop (``u = [ui + dt * ki for ui,
  ki in zip(u, k)]``, in a ``while``; ``x = [x[i] + ... for i in range(len(x))]``);
- ``scipy.integrate.trapezoid`` and ``cumulative_trapezoid`` (``initial=0``, ``dx``);
- ``D[..., idx2d]``, ``T[..., rows, cols]`` with the index arrays in a global tuple, and
  ``T[1, ..., [2, 0]]`` (dipy's ``from_lower_triangular`` and ``lower_triangular``);
- ``list(combinations_with_replacement(range(3), 2))`` and ``for a, b in product(...)`` of
  values known while building;
- a list read in the loop that appends to it (``temps[-1]``, ``len(xs)``, an append under an
  ``if``), a slice of such a list read by NumPy (``np.mean(errs[n // 2:])``); columns
  appended in ``for m in range(-n, n + 1)`` inside ``for n in range(0, 5, 2)`` (unrolled);
- complex values: ``len(z)``, ``isinstance(z[0], complex)``, ``np.convolve``, a list of complex
  constants read at a run-time index (a constellation), pieces joined onto ``np.array([])`` in
  a loop of two iterations, ``z.compress(mask, axis=1)``; ``np.compress`` of a real array;
- lists of integers as int64 arrays (free degrees of freedom ``[i for i in range(n) if i not in
  fixed]``), ``K[np.ix_(keep, keep)]``, ``K[keep, 1]``, ``np.ix_`` of a boolean mask,
  ``np.delete`` along axis 1, ``np.block``;
- ``scipy.linalg.eigh(K, M, eigvals_only=True, subset_by_index=[0, 1], driver="gvx")``;
- ``self.C[1][1] *= f`` (anaStruct's ``update_stiffness``), the attribute read again after;
- ``scipy.interpolate.CubicSpline`` of values of the graph (natural, not-a-knot, clamped,
  ``nu=1``, extrapolated) and a spline made outside, called at values of the graph.

Each is checked against central finite differences at two steps as plain Python, in a process
of its own (``JITGRAD_DISABLE_JIT=1``), the splines also against SciPy's splines of the unit
vectors (a spline is linear in its values); one small gradient holding the two loop
mechanisms is checked compiled, against JAX where JAX is installed.
"""

from __future__ import annotations

import math
import os
import sys
from itertools import combinations_with_replacement, product

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
from scipy import interpolate

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against, check_two_steps
from plain_python import assert_runs_as_plain_python

import jitgrad

X = np.array([0.7, 0.3, 1.1, 0.45])
LT = (np.array([0, 1, 1, 2, 2, 2]), np.array([0, 0, 1, 0, 1, 2]))
TI = np.array([[0, 1, 3], [1, 2, 4], [3, 4, 5]])
KNOTS = np.array([0.0, 0.5, 0.8, 1.0, 1.3, 2.0, 3.0])
MADE_OUTSIDE = interpolate.CubicSpline(KNOTS, np.sin(KNOTS))
POINTS = [1 + 1j, -1 + 1j, -1 - 1j, 1 - 1j]


class Limits:
    def __init__(self):
        self.low = None
        self.high = None


class Params:
    def __init__(self):
        self.gain = None
        self.limits = Limits()


def make_params(gain):
    p = Params()
    p.gain = gain
    p.limits.low = -0.5
    p.limits.high = 0.8
    return p


def made_parts(x):
    p = make_params(x[0])
    return np.sum(np.clip(x * p.gain, p.limits.low, p.limits.high))


def rhs(t, u, c):
    pos, vel = u
    return [vel, -c * pos - 0.3 * vel + math.sin(t)]


def list_state(x):
    u = [x[1], 0.0]
    t, dt = 0.0, 0.05
    while t < 1.0:
        k1 = rhs(t, u, x[0])
        k2 = rhs(t + dt, [ui + dt * ki for ui, ki in zip(u, k1)], x[0])
        u = [ui + dt / 2 * (a + b) for ui, a, b in zip(u, k1, k2)]
        t += dt
    s = [x[2], x[3], 0.5]
    for _ in range(20):
        s = [s[i] + 0.05 * math.sin(s[(i + 1) % 3]) for i in range(len(s))]
    return u[0] + 2.0 * u[1] + s[0] * s[2]


def trapezoids(x):
    t = np.cumsum(x) + np.arange(4.0)
    c = scipy.integrate.cumulative_trapezoid(x ** 2, t, initial=0)
    return np.sum(c * c) + scipy.integrate.trapezoid(x * t, t) + \
        scipy.integrate.cumulative_trapezoid(x, dx=0.3)[-1]


def ellipsis_gathers(x):
    D = np.concatenate([x, x[:2] ** 2])
    T = D[..., TI]  # dipy's from_lower_triangular
    stack = np.stack([T, T * x[0]])
    low = stack[..., LT[0], LT[1]]  # lower_triangular
    return np.sum(low * np.arange(6.0)) + np.sum(stack[1, ..., [2, 0]] ** 3)


def itertools_known(x):
    combos = list(combinations_with_replacement(range(3), 2))
    s = 0.0
    for k, idx in enumerate(combos):
        s = s + x[idx[0]] * x[idx[1]] * (k + 1)
    for a, b in product((1.0, 2.0), repeat=2):
        s = s + a * b * x[3]
    return s


def triangle_of_columns(x):
    cols = []  # dipy's real_sh_basis: columns for m in -n..n, n over even orders
    for n in range(0, 5, 2):
        for m in range(-n, n + 1):
            cols.append(x * (m + n + 1.0))
    return np.sum(np.column_stack(cols) ** 2) * 1e-2


def growing_lists(x, n=30):
    temps = [x[0]]
    for k in range(n):
        T = temps[-1]
        temps.append(T + 0.05 * (x[1] * math.sin(k / 5.0) - T * T))
    xs = [x[2], x[3]]
    for k in range(8):
        xs.append(0.5 * xs[-1] + 0.3 * xs[-2] * x[1])
        if len(xs) > 6:
            xs.append(xs[-1] * 0.9)
    errs = []
    for v in temps:
        errs.append((v - 0.5) ** 2)
    return max(temps) + temps[-1] + np.sum(np.array(xs) ** 2) + np.mean(errs[len(errs) // 2:])


def complex_forms(x):
    y = x[:2] + 1j * x[2:]
    energy = np.sum(np.abs(y) ** 2) / len(y)
    if isinstance(y[0], complex):
        energy = energy * 2.0
    h = np.convolve(y, np.array([1.0, 0.5j]))
    llr = 0.0
    for k in np.arange(4):
        llr = llr + np.exp(-np.abs(y[0] - POINTS[k]) ** 2)
    signal = np.array([])
    for i in range(2):
        signal = np.concatenate((signal, y * (i + 1.0)))
    picked = np.outer(y, y).compress(np.array([True, False]), axis=1)  # CommPy's max-log
    return energy + np.sum(np.abs(h)) + np.log(llr) + np.sum(np.abs(signal) ** 2) + \
        np.sum(np.abs(picked)) + np.sum(np.compress(x > 0.5, x) ** 2)


def integer_lists(x):
    K = np.outer(x, x) + np.diag(x + 2.0)
    keep = [i for i in range(K.shape[0]) if i not in (0, 2)]
    free = np.ones(4, dtype=bool)
    free[[1, 3]] = False
    k = np.outer(x[:2], x[:2])
    ke = np.block([[k, -k], [-k, 2.0 * k]])
    reduced = np.delete(np.delete(ke, [0], axis=0), [1, 2], axis=1)
    return np.sum(K[np.ix_(keep, keep)] ** 2) + np.sum(K[keep, 1]) + \
        np.sum(K[np.ix_(free, free)]) + np.sum(reduced ** 3)


def eigh_subset(x):
    K = np.diag(x + 2.0) + 0.1 * np.outer(x, x)
    M = np.eye(4) + 0.05 * np.diag(x)
    w = scipy.linalg.eigh(K, M, eigvals_only=True, subset_by_index=[0, 1], driver="gvx")
    return w[0] + 2.0 * w[1]


class Element:
    def __init__(self, EI):
        self.C = np.array([[1.0, 0.0, 0.0], [0.0, 4 * EI, -2 * EI], [0.0, -2 * EI, 4 * EI]])
        self.K = self.C * 2.0

    def update_stiffness(self, factor):
        self.C[1][1] *= factor
        self.C[1][2] *= factor
        self.C[2][1] *= factor
        self.K = self.C * 2.0


def chained_write(x):
    e = Element(x[0])
    e.update_stiffness(x[1])
    return np.sum(e.K ** 2) + e.C[1, 1]


def splines(x):
    y = np.cos(KNOTS) * (1.0 + x[0]) + x[1] * KNOTS
    q = np.array([-0.2, 0.3, 0.97, 2.5, 3.4]) * (1.0 + x[2])
    natural = interpolate.CubicSpline(KNOTS, y, bc_type="natural")
    knot = interpolate.CubicSpline(KNOTS, y)
    clamped = interpolate.CubicSpline(KNOTS, y, bc_type=((1, 0.5), (2, 0.0)))
    return np.sum(natural(q) ** 2) + np.sum(knot(q, 1)) + clamped(1.7) + \
        np.sum(MADE_OUTSIDE(q * x[3]))


def spline_values(y):
    q = np.array([-0.2, 0.3, 0.97, 2.5, 3.4])
    return np.sum(interpolate.CubicSpline(KNOTS, y, bc_type="natural")(q))


FORMS = [made_parts, list_state, trapezoids, ellipsis_gathers, itertools_known, growing_lists,
         triangle_of_columns,
         complex_forms, integer_lists, eigh_subset, chained_write, splines]


def check_forms():
    for fn in FORMS:
        value, g = jitgrad.value_and_grad(fn)(X)
        check_two_steps(fn, (X,), (0,), value, (g,))
    y = np.cos(KNOTS)  # a spline is linear in its values: the gradient is SciPy's splines of
    q = np.array([-0.2, 0.3, 0.97, 2.5, 3.4])  # the unit vectors, summed at the points
    want = [np.sum(interpolate.CubicSpline(KNOTS, e, bc_type="natural")(q))
            for e in np.eye(len(KNOTS))]
    np.testing.assert_allclose(jitgrad.grad(spline_values)(y), want, rtol=1e-12, atol=1e-12)


def check_refused_and_raised():
    def read_empty_list(x):
        xs = []
        for k in range(3):
            xs.append(xs[-1] * x[0])  # IndexError in Python at the first read
        return np.sum(np.array(xs))
    with pytest.raises(IndexError):  # (as Python's list: the items appended so far, none)
        jitgrad.grad(read_empty_list)(X)

    def growing_state(x):
        u = [x[0], x[1]]
        for _ in range(20):
            u = u + [u[-1] * 0.5]
        return u[0]
    with pytest.raises(jitgrad.UnsupportedError, match="a loop carries a fixed number"):
        jitgrad.grad(growing_state)(X)

    def knots_at_run_time(x):
        return np.sum(interpolate.CubicSpline(np.cumsum(x), x)(0.5))
    with pytest.raises(jitgrad.UnsupportedError, match="knots known while building"):
        jitgrad.grad(knots_at_run_time)(X)

    def subset_by_value(x):
        return np.sum(scipy.linalg.eigh(np.diag(x), subset_by_value=(0.0, 1.0),
                                        eigvals_only=True))
    with pytest.raises(jitgrad.UnsupportedError, match="a subset by value"):
        jitgrad.grad(subset_by_value)(X)

    def generic(x):
        z = x[:2] + 1j * x[2:]
        return x[0] * isinstance(z[0], np.generic)
    with pytest.raises(jitgrad.UnsupportedError, match="answer differently"):
        jitgrad.grad(generic)(X)

    def initial_one(x):
        return np.sum(scipy.integrate.cumulative_trapezoid(x, initial=1))
    with pytest.raises(ValueError, match="`initial` must be `None` or `0`"):
        jitgrad.grad(initial_one)(X)  # (SciPy's ValueError)


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def loops(x):
    """The two loop mechanisms, small: a list state a while loop carries, a list read while
    it grows."""
    u = [x[1], 0.0]
    t = 0.0
    while t < 1.0:
        u = [u[0] + 0.05 * u[1], u[1] - 0.05 * x[0] * u[0]]
        t += 0.05
    temps = [x[0]]
    for _ in range(30):
        temps.append(temps[-1] + 0.05 * (x[1] - temps[-1] * temps[-1]))
    return u[0] + 2.0 * u[1] + temps[-1] * len(temps)


def loops_jax(jnp, x):
    u0, u1 = x[1], 0.0
    t = 0.0
    while t < 1.0:
        u0, u1 = u0 + 0.05 * u1, u1 - 0.05 * x[0] * u0
        t += 0.05
    temp = x[0]
    for _ in range(30):
        temp = temp + 0.05 * (x[1] - temp * temp)
    return u0 + 2.0 * u1 + temp * 31


def test_forms_compiled():
    """One compiled gradient holding the list state carried by a while loop and the list
    read while it grows (the rest: plain Python)."""
    value, g = jitgrad.value_and_grad(loops)(X)
    try:
        import jax
    except ImportError:  # (no JAX: central differences at two steps)
        check_two_steps(loops, (X,), (0,), value, (g,))
        return
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    want = [jax.grad(lambda x: loops_jax(jnp, x))(jnp.array(X))]
    check_against(loops, (X,), (0,), value, (g,), want)


if __name__ == "__main__":
    check_forms()
    check_refused_and_raised()
    print("hb8b's forms: gradients agree with central differences")
