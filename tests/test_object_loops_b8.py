"""Forms of held-out batches 5-7 (issue #43, hobj), in functions of our own:

- an object of the user's class rebound in a loop over a run-time count (QuTiP's
  ``psi = psi + dt * (H * psi)`` of a complex state, TrueSkill's ``me = Rating(mu, sigma)``,
  also on both sides of a run-time ``if``): the loop carries its numbers and arrays
  (`frontend.object_carries`); a body that changes its class or its other attributes is
  refused;
- ``scipy.integrate.quad(f, a, b, args=...)`` of a bound method or a closure, finite and
  infinite limits (astropy's comoving distance and age): an adaptive Gauss-Kronrod rule
  written out (`frontend.build_quad`), checked against SciPy's value too;
- ``scipy.special.lambertw(z).real`` (pvlib's single-diode solution): W_0 of real z >= -1/e,
  another branch refused;
- ``x[i, idx] = v`` and ``x[idx, 1:, 0] += v``: one integer array beside integers and slices
  (topopt's ``u[free, 0] = ...``), written as NumPy writes (the last of a repeated index
  wins; ``+=`` adds once per index);
- ``try: return 1 / np.sqrt(info(theta, items)) except ZeroDivisionError:`` (catsim), a try
  catching only ZeroDivisionError around a call of the user's function: built, each division
  of numbers in it (callees included) checked at run time, raising where a divisor is zero
  (never the handler's value taken silently);
- ``setattr(self, f"c{i}", c)`` in a short loop, or in ``for i, c in enumerate(coeffs)`` of an
  argument (astropy's Polynomial1D; its size in the call assumed): unrolled, each name known.

Each form is checked against central differences (the object loop also against JAX where it
is installed; SciPy gives quad's and lambertw's values), as plain Python
(``JITGRAD_DISABLE_JIT=1``, a process of its own) for breadth; two gradients are checked
compiled.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import lambertw

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad
from plain_python import assert_runs_as_plain_python

import jitgrad
from jitgrad.core.errors import UnsupportedError
from jitgrad.prims import elementwise


class State:
    """A state vector with operators, rebuilt (never changed in place) by each step."""

    def __init__(self, v, scale, label="s"):
        self.v = v
        self.scale = scale
        self.label = label
        self.n = 2

    def __add__(self, other):
        return State(self.v + other.v, self.scale, self.label)

    def __rmul__(self, c):
        return State(c * self.v, self.scale, self.label)

    def rhs(self, A):
        return State(A @ self.v, self.scale, self.label)


def euler_states(x, A, ts):
    s = State(x, 2.0)
    for k in range(1, len(ts)):
        dt = ts[k] - ts[k - 1]
        s = s + dt * s.rhs(A)
    return np.sum(s.v ** 2) * s.scale + s.n


class Rating:
    def __init__(self, mu, sigma):
        self.mu = mu
        self.sigma = sigma


def update(r, outcome, drawn=False):
    w = 0.5 if drawn else 1.0
    return Rating(r.mu + w * r.sigma * (outcome - np.tanh(r.mu)), r.sigma * 0.9)


def season(mu0, outcomes):
    me = Rating(mu0, 0.8)
    for k in range(len(outcomes)):
        if outcomes[k] > 0.5:  # a run-time branch: the two objects merged by attribute
            me = update(me, outcomes[k])
        else:
            me = update(me, outcomes[k], drawn=True)
    return me.mu + me.sigma


def until_small(mu0, outcomes):
    me = Rating(mu0, 0.8)
    k = 0
    while me.sigma > 0.3 and k < len(outcomes):  # the test reads the carried object
        me = update(me, outcomes[k])
        k += 1
        if me.mu > 5.0:
            break
    return me.mu * me.sigma


class Ket:
    """A complex state, as QuTiP's Qobj holds one: data and dims."""

    def __init__(self, data, dims):
        self.data = data
        self.dims = dims

    def __mul__(self, other):
        if isinstance(other, Ket):
            return Ket(self.data @ other.data, other.dims)
        return Ket(self.data * other, self.dims)

    __rmul__ = __mul__

    def __add__(self, other):
        return Ket(self.data + other.data, self.dims)


def evolve(w, psi0, ts):
    H = Ket(np.array([[0.0, w], [w, 0.5]]) + 0j, [[2], [2]])
    psi = Ket(psi0 + 0j, [[2], [1]])
    for k in range(1, len(ts)):
        dt = ts[k] - ts[k - 1]
        k1 = -1j * (H * psi)
        k2 = -1j * (H * (psi + 0.5 * dt * k1))
        psi = psi + dt * k2
    return np.sum(np.abs(psi.data) ** 2 * np.array([0.0, 1.0]))


class Cosmo:
    def __init__(self, om, w0):
        self.om = om
        self.w0 = w0

    def inv_e(self, z):
        zp1 = 1.0 + z
        return 1.0 / np.sqrt(self.om * zp1 ** 3 + (1.0 - self.om) * zp1 ** (3.0 * (1.0 + self.w0)))

    def lookback(self, z):
        return self.inv_e(z) / (1.0 + z)


def distance(om, w0):
    return quad(Cosmo(om, w0).inv_e, 0.0, 1.5)[0]


def age(om, h):
    return h * quad(Cosmo(om, -1.0).lookback, 0, np.inf)[0]


def gaussian_tail(s, b):
    left = quad(lambda x, s: math.exp(-x * x / (s * s)), -np.inf, b, args=(s,))[0]
    return left + quad(lambda x: np.exp(-s * x), b, np.inf)[0] + quad(
        lambda x: np.exp(-x * x * s), np.inf, -np.inf)[0]


def diode(z, x):
    w = lambertw(z * x).real
    return np.sum(w ** 2) + lambertw(z).real + lambertw(-0.3 * z, 0).real


W3 = np.arange(64.0).reshape(4, 4, 4) / 7.0


def column_writes(x, v, idx):
    y = x * 1.0
    y[idx, 1:, 0] += v  # [3, 1, 3]: NumPy adds v's first row once, at 3
    y[2, idx, 1] = v[:, 0]  # adjacent: the array's axis in place
    y[1, :, idx] = v[:, :1] * 2.0  # apart: the array's axis first
    return np.sum(np.sin(y) * W3)


class Poly:
    def __init__(self, coeffs):
        for i in range(3):
            setattr(self, f"c{i}", coeffs[i])


class PolyOf:
    def __init__(self, coeffs):
        for i, c in enumerate(coeffs):  # over an argument: its size in this call assumed
            setattr(self, f"c{i}", c)


def poly(coeffs, x):
    p, q = Poly(coeffs), PolyOf(coeffs * 2.0)
    return np.sum(p.c0 + p.c1 * x + p.c2 * x * x) + q.c2


def information(theta, items):
    return np.sum([it[0] ** 2 / (1.0 + np.exp(-it[0] * (theta - it[1]))) for it in items])


def standard_error(theta, items):
    try:
        return 1 / np.sqrt(information(theta, items))
    except ZeroDivisionError:
        return float("inf")


def scaled(a, b):
    return a / b + 1.0


def guarded_call(a, b):
    try:
        return scaled(a, b) * 2.0
    except ZeroDivisionError:
        return 0.0


def other_branch(z):
    return lambertw(z, -1).real


TS = np.linspace(0.0, 1.0, 6)
A = np.array([[0.0, 1.0], [-1.0, -0.1]])
OUT = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
FORMS = [
    (euler_states, (np.array([1.0, 0.5]), A, TS)),
    (season, (0.3, OUT)),
    (until_small, (0.3, OUT)),
    (evolve, (0.7, np.array([0.6, 0.8]), TS)),
    (distance, (0.3, -0.9)),
    (age, (0.3, 0.7)),
    (gaussian_tail, (1.3, 0.4)),
    (diode, (0.7, np.array([-0.2, 0.0, 0.5, 4.0, 100.0]))),
    (column_writes, (np.cos(np.arange(64.0)).reshape(4, 4, 4), np.arange(9.0).reshape(3, 3)
                     / 5.0, np.array([3, 1, 3]))),
    (poly, (np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.5]))),
    (standard_error, (0.3, np.array([[1.2, -0.5], [0.8, 0.3], [1.6, 1.1]]))),
    (guarded_call, (1.0, 2.0)),
]


def check_form(fn, args):
    """Value as Python's (SciPy's quad: to its tolerance) and every float argument's
    derivative as central differences."""
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, float) or (
        isinstance(a, np.ndarray) and a.dtype == float))
    value, g = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-8)
    for k, gk in zip(wrt, g):
        np.testing.assert_allclose(gk, numeric_grad(fn, args, k), rtol=1e-6, atol=1e-8)


def changes_class(x, n):
    s = State(x, 1.0)
    for _ in range(n):
        s = s.v * 2.0
    return np.sum(s)


def changes_label(x, n):
    s = State(x, 1.0)
    for k in range(n):
        s = State(s.v * 2.0, 1.0, "t")
    return np.sum(s.v)


def check_against_jax():
    """The object loop's gradient against JAX's (where JAX is installed): State's operators
    take JAX's arrays as they are."""
    try:
        import jax
    except ImportError:
        return
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def euler_states_jax(x, A, ts):
        s = State(x, 2.0)
        for k in range(1, len(ts)):
            s = s + (ts[k] - ts[k - 1]) * s.rhs(A)
        return jnp.sum(s.v ** 2) * s.scale + s.n

    args = (np.array([1.0, 0.5]), A, TS)
    want = jax.grad(euler_states_jax, argnums=(0, 1, 2))(*(jnp.array(a) for a in args))
    got = jitgrad.grad(euler_states, wrt=(0, 1, 2))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12)


def check_lambertw_values():
    z = np.concatenate([-1 / np.e + np.logspace(-6, -1, 9), np.linspace(-0.3, 5.0, 23),
                        np.logspace(0.5, 300.0, 30)])
    ours = [elementwise.lambertw_scalar(v) for v in z]  # (near -1/e both lose digits)
    np.testing.assert_allclose(ours, lambertw(z).real, rtol=1e-9)
    np.testing.assert_allclose(ours[9:], lambertw(z[9:]).real, rtol=1e-14)


def check_refusals():
    with pytest.raises(ZeroDivisionError, match="does not take the handler"):
        jitgrad.grad(guarded_call)(1.0, 0.0)  # Python returns 0.0 there: refused at run time
    with pytest.raises(UnsupportedError, match="principal one"):
        jitgrad.grad(other_branch)(-0.2)
    for fn, words in ((changes_class, "a State before this loop"), (changes_label, ".label")):
        with pytest.raises(UnsupportedError, match=words):
            jitgrad.grad(fn)(np.array([1.0, 2.0]), 3)


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def season_and_age(mu0, outcomes):
    return season(mu0, outcomes) + age(mu0, 1.0) + np.sum(lambertw(mu0 * outcomes).real)


def test_object_carried_and_quad_compiled():
    check_form(season_and_age, (0.3, OUT))


def test_axis_writes_compiled():
    check_form(*next(form for form in FORMS if form[0] is column_writes))


if __name__ == "__main__":
    for form in FORMS:
        check_form(*form)
    check_refusals()
    check_lambertw_values()
    check_against_jax()
    print("objects in loops: values and gradients agree with central differences")
