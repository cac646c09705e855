"""Forms met in the seventh held-out batch of real code (issue #43, part hb7b), in functions of
our own: a global list of names read by a function and as a default parameter (UTide's
constituent names, ``names=NAMES``), a default dict of lists of names (radioactivedecay's
progeny table) sliced by the indices of loops of a few iterations (``nuclides[j:i]``, the
loops unrolled) and ``progeny[p].index(name)``, ``sum(activities.values())``; an attribute
set on every branch of an ``if``/``elif`` chain with no ``else`` (RC_BuildingSimulator's
energy demand: AttributeError at run time where no branch set it, as Python raises);
``self.at_node[name] = v`` and ``getattr(self, "at_" + at)[name] = v`` into a dict held by an
object (landlab's fields), the entry read after the array was written in place in a loop;
``np.atleast_1d(d).size == 1`` decided while building (girth's scalar discrimination);
``np.concatenate(([d[0] * 0.5], flux, [d[-1]]))`` (a Godunov scheme's ghost cells); ``mult =
1.0`` then ``mult += (s / sc) ** (2 * i)`` over a loop of a few iterations (landlab's Taylor
flux: unrolled); UTide's complex least squares: ``np.hstack`` of complex matrices,
``h.astype(complex)``, ``np.linalg.lstsq`` and ``np.linalg.solve`` of complex operands;
``x = [f(v) for v in x]``, a list rebound to a comprehension over itself (Gipps' platoon).

Every form runs as plain Python (a process of its own, `plain_python`), its gradient against
central finite differences and, where JAX is installed, JAX; one compiled gradient holds
them all.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_form, check_optional_oracle
from plain_python import assert_runs_as_plain_python

import jitgrad

NAMES = ["M2", "S2", "K1"]
FREQ = {"M2": 0.0805, "S2": 0.0833, "K1": 0.0418}
NUCLIDES = ["A", "B", "C"]
PROGENY = {"A": ["B", "C"], "B": ["C"], "C": []}
BRANCHING = {"A": [0.75, 0.25], "B": [1.0], "C": []}
T = np.arange(6.0)


def harmonics(amp, names=NAMES):
    freq = np.array([FREQ[n] for n in names])
    return np.sum((np.cos(2 * np.pi * np.outer(T, freq)) @ amp) ** 2)


def first_two(amp):
    freq = np.array([FREQ[n] for n in NAMES[:2]])
    return np.sum(np.sin(freq * amp[:2]))


def chain_matrix(lam, nuclides=NUCLIDES, progeny=PROGENY, bf=BRANCHING):
    n = len(nuclides)
    idx = {nuc: i for i, nuc in enumerate(nuclides)}
    c = np.zeros((n, n))
    for i in range(n):
        c[i, i] = 1.0
    for j in range(n):
        for i in range(j + 1, n):
            s = 0.0
            for parent in nuclides[j:i]:
                k = idx[parent]
                if nuclides[i] in progeny[parent]:
                    s += lam[k] * bf[parent][progeny[parent].index(nuclides[i])] * c[k, j]
            c[i, j] = s / (lam[j] - lam[i])
    out = {nuc: c[i] @ lam for i, nuc in enumerate(nuclides)}
    return sum(out.values())


class Zone:
    def __init__(self, lo, hi):
        self.lo = lo
        self.hi = hi

    def demand(self, x):
        if self.lo <= x <= self.hi:
            self.energy = x * x
        elif x > self.hi:
            self.energy = self.hi * x
        elif x < self.lo:
            self.energy = self.lo
        return 3.0 * self.energy


def zone_demand(x):
    return Zone(-1.0, 1.0).demand(x)


class Grid:
    def __init__(self, n):
        self.at_node = {}
        self.at_link = {}
        self.n = n

    def add_field(self, name, values, at="node"):
        getattr(self, "at_" + at)[name] = values
        return values


def diffused(z0, d):
    grid = Grid(z0.size)
    z = grid.add_field("elevation", z0.copy())
    grid.at_link["flux"] = np.zeros(z0.size - 1)
    for _ in range(3):
        q = -d * np.diff(z)
        z[1:-1] -= q[1:] - q[:-1]
    return np.sum(grid.at_node["elevation"] ** 2) + np.sum(grid.at_link["flux"])


def irt(difficulty, thetas, discrimination=1.7):
    if np.atleast_1d(discrimination).size == 1:
        discrimination = np.full_like(difficulty, discrimination, dtype="float")
    kernel = difficulty[:, None] - thetas
    kernel *= discrimination[:, None]
    return np.sum(np.log1p(np.exp(-kernel)))


def ghost_cells(d):
    flux = d[1:] * d[:-1]
    flux = np.concatenate(([d[0] * 0.5], flux, [d[-1]]))
    return np.sum(flux ** 2)


def taylor_terms(s, sc=0.8):
    nterms = 3
    mult = 1.0
    for i in range(1, nterms):
        mult += (s / sc) ** (2 * i)
    return np.sum(s * mult)


def complex_fit(h):
    E = np.exp(1j * np.outer(np.arange(h.size), [0.3, 0.7]))
    B = np.hstack((E, np.conj(E), np.ones((h.size, 1))))
    coef = np.linalg.lstsq(B, h.astype(complex), rcond=None)[0]
    x = np.linalg.solve(B[:5].T @ B[:5] + np.eye(5), B[:5].T @ h[:5])
    return np.sum(np.abs(coef[:2]) ** 2) + np.sum(np.angle(coef[2:4])) + np.sum(x.real * x.imag)


def rebound(v0):
    x = [2.0 * a for a in v0]
    x = [xi * xi + 1.0 for xi in x]
    return sum(x)


LAM = np.array([0.5, 0.2, 0.05])
H = np.cos(np.arange(8.0)) + 0.1 * np.arange(8.0)
Z0 = np.array([1.0, 0.4, 2.0, 0.7, 1.5])
AMP = np.array([1.2, 0.4, 0.3])
D = np.array([-0.3, 0.2, 0.5])
TH = np.linspace(-1.0, 1.0, 4)

FORMS = [  # (function, args, wrt, JAX's form of it or None)
    (harmonics, (AMP,), 0, lambda jnp, a: jnp.sum((jnp.cos(2 * np.pi * np.outer(
        T, [0.0805, 0.0833, 0.0418])) @ a) ** 2)),
    (first_two, (AMP,), 0, None),
    (chain_matrix, (LAM,), 0, None),
    (zone_demand, (0.4,), 0, lambda jnp, x: 3.0 * x * x),
    (zone_demand, (1.7,), 0, lambda jnp, x: 3.0 * x),
    (diffused, (Z0, 0.2), (0, 1), None),
    (irt, (D, TH), (0, 1), lambda jnp, d, th: jnp.sum(jnp.log1p(jnp.exp(
        -(d[:, None] - th) * 1.7)))),
    (ghost_cells, (Z0,), 0, lambda jnp, d: jnp.sum(jnp.concatenate(
        (jnp.array([d[0] * 0.5]), d[1:] * d[:-1], jnp.array([d[-1]]))) ** 2)),
    (taylor_terms, (D,), 0, lambda jnp, s: jnp.sum(s * (1 + (s / 0.8) ** 2 + (s / 0.8) ** 4))),
    (complex_fit, (H,), 0, None),
    (rebound, (D,), 0, lambda jnp, v: jnp.sum(4.0 * v * v + 1.0)),
]


def check_attribute_raises():
    """No branch of the chain sets the attribute (NaN compares false): AttributeError, as
    Python raises it."""
    with pytest.raises(AttributeError):
        jitgrad.grad(zone_demand)(float("nan"))


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def fields(z0, d):
    grid = Grid(z0.size)
    z = grid.add_field("elevation", z0 * d)
    z[1:] += z[:-1]
    return np.sum(grid.at_node["elevation"] ** 2)


def all_forms(amp, x, z0, d, h):
    """One compiled gradient per mechanism, small (the loops' unrolling runs as plain
    Python above): names read from a global list, an attribute set on some paths of an
    ``if``, a dict attribute changed in place and its entry followed after a write, lists of
    values joined to arrays, complex least squares."""
    return harmonics(amp) + zone_demand(x) + fields(z0, d) + ghost_cells(z0) + complex_fit(h)


def test_forms_compiled():
    args = (AMP, 0.4, Z0, 0.2, H)
    wrt = (0, 1, 2, 3, 4)
    value, grads = jitgrad.value_and_grad(all_forms, wrt=wrt)(*args)
    check_optional_oracle(all_forms, args, wrt, value, grads, None)


if __name__ == "__main__":
    for form in FORMS:
        check_form(*form)
    check_attribute_raises()
