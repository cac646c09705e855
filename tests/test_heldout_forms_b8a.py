"""Forms met in the eighth held-out batch of real code (issue #43, part hb8a), in functions of
our own:

- a sign ``(-1) ** (i + j + k)`` in loops over ``range(2)`` (SimPEG's prism kernel over its
  eight corners): the generated code wrote ``-1.0 ** i``, which Python reads as
  ``-(1.0 ** i)``: a wrong value and gradient before this batch;
- ``np.shape(z0)`` of a Python number, ``np.zeros_like`` of a complex array then written
  entry by entry, ``np.linalg.inv`` of a stack of complex matrices (scikit-rf's ``z2s`` over
  ``(nfreq, n, n)`` networks);
- a module variable the function sets before it reads it (colossus' ``setCosmology`` then
  ``getCurrent()``), left changed: every call's value is the same, so it is not refused (one
  read before it is set still is);
- ``for`` over ``zip``/``reversed`` of attributes of the user's objects holding lists
  (SimPEG's ``zip(self.multipliers, self.objfcts)``, ``reversed(self.maps)``; zfit's
  ``sum(f * p.pdf(x) for f, p in zip(self.fracs, self.pdfs))``);
- ``scipy.sparse.diags`` of a rectangular shape (a face divergence, ``shape=(n, n + 1)``),
  and an attribute holding a sparse matrix the function made (``self.W = sdiag(1 / std)``);
- an object made by the ``__init__`` of an object made in the function (climlab's
  ``self.ins = P2Insolation(...)``), whose method then sets its attributes;
- ``if E.size > 1: return E`` / ``else: return E[0]`` of an array made from an argument
  (radvel's Kepler solver): decided from the call's sizes, each size its own code;
- a dict of a class of the user's (radvel's ``Parameters(dict)`` with ``num_planets``) keeps its
  class and attributes when written, and ``params["k{}".format(n)]`` read in ``for n in
  range(1, 3)`` unrolls that loop.

Each is checked against central finite differences (at two steps) as plain Python, in a process
of its own (``JITGRAD_DISABLE_JIT=1``), and one gradient holding the sign, the module variable
and the zips over attributes is checked compiled, against JAX where JAX is installed.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against, check_two_steps
from plain_python import assert_runs_as_plain_python

import jitgrad

X = np.array([0.7, 0.3, 1.1, 0.45])


def corner_sum(x):
    """Eight corners of a box, each term signed by (-1) ** (i + j + k)."""
    dx = [x[0] - 2.0, x[0] + 1.5]
    dy = [x[1] - 1.0, x[1] + 2.5]
    dz = [x[2] - 3.0, x[2] + 0.5]
    val = 0.0
    for i in range(2):
        for j in range(2):
            for k in range(2):
                r = np.sqrt(dx[i] ** 2 + dy[j] ** 2 + dz[k] ** 2)
                val += (-1) ** (i + j + k) * (dx[i] * np.log(dy[j] + r) + dz[k] * r)
    return val + sum((-2.0) ** n * x[3] for n in range(3))


def _z0_shape(z0, nf, n):
    if np.shape(z0) == (nf, n):
        return z0
    return np.array(nf * [n * [z0]], dtype=complex)


def z_to_s(x):
    nf = 3
    z = np.zeros((nf, 2, 2), dtype=complex)
    z[:, 0, 0] = 40.0 * x[0] + 1j * np.linspace(1.0, 3.0, nf)
    z[:, 1, 1] = 30.0 * x[1] + 5j
    z[:, 0, 1] = z[:, 1, 0] = 10.0 * x[2]
    z0 = _z0_shape(50, nf, 2)
    F = np.zeros_like(z)
    G = np.zeros_like(z)
    for i in range(2):
        F[:, i, i] = 1.0 / np.sqrt(z0[:, i])
        G[:, i, i] = z0[:, i]
    s = F @ (z - G) @ np.linalg.inv(z + G) @ np.linalg.inv(F)
    return np.sum(np.abs(s) ** 2) * x[3]


class Model:
    def __init__(self, scale):
        self.scale = scale


_CURRENT = None


def set_model(scale):
    global _CURRENT
    _CURRENT = Model(scale)
    return _CURRENT


def get_model():
    if _CURRENT is None:
        raise RuntimeError("no model set")
    return _CURRENT


THIS = sys.modules[__name__]  # (its variables read as a module's attributes too)


def set_then_read(x):
    set_model(x[0] * 2.0)  # set before any read: left set, as colossus leaves it
    return get_model().scale * x[1] + THIS._CURRENT.scale ** 2


def read_then_set(x):
    before = get_model().scale if _CURRENT is not None else 1.0
    set_model(x[0])
    return before * x[1]


class Exp:
    def __call__(self, m):
        return np.exp(m)


class Half:
    def __call__(self, m):
        return 0.5 * m


class Chain:
    def __init__(self, maps, weights):
        self.maps = maps
        self.weights = weights

    def __call__(self, m):
        for f in reversed(self.maps):
            m = f(m)
        return m

    def weighted(self, m):
        t = 0.0
        for w, f in zip(self.weights, self.maps):
            t = t + w * np.sum(f(m))
        return t + sum(w * np.sum(f(m)) for w, f in zip(self.weights, self.maps))


def over_attributes(x):
    c = Chain([Exp(), Half()], [x[3], 2.0])
    return np.sum(c(x[:3])) + c.weighted(x[:2])


class Misfit:
    def __init__(self, std):
        self.W = sp.diags(1.0 / std, 0)

    def __call__(self, r):
        return 0.5 * np.sum((self.W @ r) ** 2)


def face_divergence(x):
    n = 3
    D = sp.diags([-np.ones(n), np.ones(n)], [0, 1], shape=(n, n + 1))
    H = sp.diags([x[:2], 2.0], [-1, 1], shape=(3, 2))  # a longer diagonal: its first entries
    d = D @ (x * x) + H @ x[2:]
    return Misfit(np.array([0.5, 1.0, 2.0]))(d)


class Inner:
    def __init__(self, lat):
        self.lat = lat

    def compute(self, s):
        self.value = s * np.cos(self.lat)
        return self.value


class Outer:
    def __init__(self, n):
        self.lat = np.linspace(-1.0, 1.0, n)
        self.inner = Inner(lat=self.lat)

    def run(self, s):
        self.inner.compute(s)
        return np.sum(self.inner.value ** 2)


def made_inside(x):
    return Outer(3).run(x[0]) + Outer(2).run(x[1] * x[2])


def solver(m):
    e = m + 0.3 * np.sin(m)
    for _ in range(4):
        e = e - (e - 0.3 * np.sin(e) - m) / (1.0 - 0.3 * np.cos(e))
    if e.size > 1:
        return e
    else:
        return e[0]


def size_branch(x):
    return np.sum(np.sin(solver(x.copy()))) + solver(x[1:2] * 2.0) ** 2


class Parameters(dict):
    def __init__(self, num_planets):
        super().__init__()
        self.num_planets = num_planets


def keyed_by_format(x):
    params = Parameters(2)
    for k, name in enumerate(("per1", "k1", "per2", "k2")):
        params[name] = x[k]
    total = 0.0
    for n in range(1, params.num_planets + 1):
        total = total + params["k{}".format(n)] * np.sin(params["per%d" % n])  # noqa: UP031, UP032
    return total


NAMES = ("per", "tc", "k")


def named_from_a_vector(x):
    """radvel's `for name, value in zip(names, vec)`: the vector's rows beside names known
    while building (the build holds for the call's length; zip stops at the shorter)."""
    params = {}
    for name, value in zip(NAMES, x):
        params[name] = value
    return params["k"] * np.sin(2.0 * np.pi * (0.7 - params["tc"]) / params["per"])


FORMS = [corner_sum, z_to_s, set_then_read, over_attributes, face_divergence, made_inside,
         size_branch, keyed_by_format, named_from_a_vector]


def check_forms():
    for fn in FORMS:
        value, g = jitgrad.value_and_grad(fn)(X)
        check_two_steps(fn, (X,), (0,), value, (g,))
    grad = jitgrad.grad(size_branch)  # another size: the other side, built for it
    y = np.array([0.2, 0.9])
    check_two_steps(size_branch, (y,), (0,), size_branch(y), (grad(y),))


def check_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="the global `_CURRENT` is left changed"):
        jitgrad.grad(read_then_set)(X)


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def all_forms(x):
    return corner_sum(x) + set_then_read(x) + over_attributes(x)


def all_forms_jax(jnp, x):
    dx, dy, dz = [x[0] - 2.0, x[0] + 1.5], [x[1] - 1.0, x[1] + 2.5], [x[2] - 3.0, x[2] + 0.5]
    corners = sum((-1) ** (i + j + k) * (dx[i] * jnp.log(dy[j] + jnp.sqrt(
        dx[i] ** 2 + dy[j] ** 2 + dz[k] ** 2)) + dz[k] * jnp.sqrt(
        dx[i] ** 2 + dy[j] ** 2 + dz[k] ** 2)) for i in range(2) for j in range(2)
        for k in range(2)) + x[3] * (1.0 - 2.0 + 4.0)
    maps = jnp.sum(jnp.exp(0.5 * x[:3])) + 2.0 * (
        x[3] * jnp.sum(jnp.exp(x[:2])) + 2.0 * jnp.sum(0.5 * x[:2]))
    return corners + 2.0 * x[0] * x[1] + 4.0 * x[0] ** 2 + maps


def test_forms_compiled():
    """One compiled gradient holding the signed corners (the emitter's fix), the module
    variable set then read and the loops over attributes (the complex stack, the sparse
    diagonals, the objects made inside and the size branch: plain Python,
    `test_forms_as_plain_python`)."""
    value, g = jitgrad.value_and_grad(all_forms)(X)
    try:
        import jax
    except ImportError:  # (no JAX: central differences at two steps)
        check_two_steps(all_forms, (X,), (0,), value, (g,))
        return
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    want = [jax.grad(lambda x: all_forms_jax(jnp, x))(jnp.array(X))]
    check_against(all_forms, (X,), (0,), value, (g,), want)


if __name__ == "__main__":
    check_forms()
    check_refused()
    print("hb8a's forms: gradients agree with central differences")
