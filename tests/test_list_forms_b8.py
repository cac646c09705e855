"""List forms the held-out batches still refused (issue #43, part hleft7), in functions of our
own: ``list(x)`` of an array whose length is known only at run time, joined by ``+`` to list
displays (``[inf] + list(d) + [inf]``, a thin-film stack's thicknesses) or appended to in a
loop that reads the items so far (``partials = list(tips)``, then ``partials[left]``: a
pruning over a tree's nodes); a list rebound to the list a loop appended (``v = new_v``, a
platoon of cars); ``traj[-1]`` read in the loop that appends to ``traj``; ``dict(zip(NAMES,
x))``; a dict comprehension over a global dict's ``.items()`` and ``enumerate`` of a string;
``S["S1"][j] = v`` into a dict's array; ``a, b = [], []`` appended in a run-time loop; a list
of objects over ``range(d)`` of ``n, d = obs.shape``, iterated as an object's attribute;
``np.atleast_1d(x, a, b)``; ``np.concatenate`` of a list of arrays of lengths known only in
the loop (``np.nonzero``'s); complex matrices over a run-time ``zip`` folded by
``functools.reduce(np.dot, mats)`` (a thin-film stack), ``B, C = M @ v`` of a complex vector; ``log["err"].append(err)`` into a dict's list in a run-time
loop with ``break`` (its appends the list's, stored back after the loop); a list of tuples over
``combinations_with_replacement(range(n_features), k)`` and ``(i,) * k`` of an argument's axis
(pysindy's library terms, unrolled for the call's sizes), ``x[:, ()]`` (no column). And what stays refused or raises: ``+`` of such a list and a name
(never NumPy's addition), appends to a dict's list another name holds too, a read past the items appended so far (IndexError, as
Python's list raises).

Every form runs as plain Python (a process of its own, `plain_python`), its gradient against
central finite differences and, where JAX is installed, JAX; one compiled gradient holds
the mechanisms.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_form, check_optional_oracle
from plain_python import assert_runs_as_plain_python

import jitgrad
from jitgrad.core.errors import UnsupportedError

NAMES = ("a", "b", "c")
PAIRS = np.array([[0, 1], [2, 3], [4, 5]])
SEQS = {"h": "ACG", "c": "AGG"}
CODE = {"A": 0, "C": 1, "G": 2, "T": 3}


def layer_sum(d_list):
    d = np.array(d_list, dtype=float)
    assert d[0] == d[-1] == np.inf
    return np.sum(np.exp(-1.0 / d[1:-1]) * np.arange(1.0, d.size - 1))


def joined(d_mid):
    d = [np.inf] + list(d_mid) + [np.inf]
    return layer_sum(d) + len(d)


def pruned(t):
    nodes = list(t)
    for left, right in PAIRS:
        nodes.append((nodes[left] * nodes[right]) @ np.eye(t.shape[1]) * 0.5)
    return np.sum(nodes[-1]) + np.sum(nodes[len(nodes) - 2])


def platoon(v0, lead):
    v = list(v0)
    x = [-(i + 1) * 20.0 for i in range(len(v))]
    total = 0.0
    for k in range(len(lead)):
        new_v = []
        for i in range(len(v)):
            gap = lead[k] - x[i] if i == 0 else x[i - 1] - x[i]
            new_v.append(v[i] * 0.9 + 0.01 * gap)
        v = new_v
        x = [xi + vi * 0.5 for xi, vi in zip(x, v)]
        total += sum(v)
    return total


def trajectories(x0):
    traj = [x0]
    for k in range(3):
        prev = traj[-1]
        nxt = np.empty_like(prev)
        nxt[1:] = prev[:-1] - 0.3
        nxt[:1] = prev[0] * 1.5
        traj.append(nxt)
    return np.sum(traj[-1] ** 2)


def by_name(x):
    d = dict(zip(NAMES, x))
    return d["a"] * d["c"] + d["b"]


def one_hot(seq):
    out = np.zeros((len(seq), 4))
    for i, ch in enumerate(seq):
        out[i, CODE[ch]] = 1.0
    return out


def tips(x):
    rows = {name: one_hot(s) for name, s in SEQS.items()}
    return np.sum(rows["h"] * x) + np.sum(rows["c"] * x * x)


def entries(x):
    S = {k: np.zeros(3) for k in ["S1", "ST"]}
    for j in range(3):
        S["S1"][j] = x[j] ** 2
        S["ST"][j] = x[j] * x[-1]
    return np.sum(S["S1"]) + np.sum(S["ST"] ** 2)


def two_lists(x):
    a, b = [], []
    for i in range(x.shape[0]):
        a.append(x[i] * 2.0)
        b.append(np.sin(x[i]))
    return sum(a) * sum(b)


class Kernel:
    def __init__(self, mu, sigma):
        self.mu = mu
        self.sigma = sigma


class Mixture:
    def __init__(self, kernels):
        self.kernels = kernels

    def log_pdf(self, x):
        out = np.zeros(x.shape[0])
        for i, k in enumerate(self.kernels):
            z, m, s = np.atleast_1d(x[:, i], k.mu, k.sigma)
            out += np.sum(-0.5 * ((z[:, None] - m[None, :]) / s[None, :]) ** 2, axis=1)
        return out


def mixture(obs, x):
    n, d = obs.shape
    sig = np.std(obs, axis=0)
    kernels = [Kernel(obs[:, j], np.full(n, sig[j])) for j in range(d)]
    return np.sum(Mixture(kernels).log_pdf(x))


def ragged(x):
    out = []
    for i in range(x.shape[0]):
        out.append(np.nonzero(x > x[i])[0])
    return np.sum(x[np.concatenate(out)])


def iterate(x, n=20, log=False):
    if log:
        log = {"err": []}
    u = x.copy()
    for i in range(n):
        u = 0.5 * (u + x / u)
        if i % 5 == 0:
            err = np.sum((u * u - x) ** 2)
            if log:
                log["err"].append(err)
            if err < 1e-20:
                break
    if log:
        log["u"] = u
        return u, log
    return u


def logged(x):
    u, log = iterate(x, log=True)
    return np.sum(u) + np.sum(iterate(x)) + 0.1 * np.sum(log["err"])


def entry_values(x):
    d = {"v": [1.0]}
    for i in range(3):
        d["v"].append(x * i)
    return sum(d["v"]) * len(d["v"])


def powers(n_features, degree):
    return [c for k in range(degree + 1)
            for c in itertools.combinations_with_replacement(range(n_features), k)]


def library(x, coef):
    n_samples, n_features = x.shape
    combs = powers(n_features, 2)
    singles = [()] + [(i,) * k for k in range(1, 3) for i in range(n_features)]
    terms = combs + singles
    xp = np.empty((n_samples, len(terms)))
    for i, c in enumerate(terms):
        xp[:, i] = x[:, c].prod(1)  # (x[:, ()]: no column, a product of 1)
    return np.sum((xp @ coef) ** 2)


def layer(n, d, lam=550.0):
    delta = 2 * np.pi * n * d / lam
    return np.array([[np.cos(delta), 1j * np.sin(delta) / n], [1j * n * np.sin(delta),
                                                              np.cos(delta)]])


def stack(ns, ds):
    mats = [layer(n, d) for n, d in zip(ns, ds)]
    M = functools.reduce(np.dot, mats)
    B, C = M @ np.array([1.0, 1.52])
    r = (1.0 - C / B) / (1.0 + C / B)
    return np.abs(r) ** 2


D5 = np.array([65.0, 103.0, 65.0, 103.0])
T6 = np.linspace(0.2, 1.4, 18).reshape(6, 3)
V0 = np.array([10.0, 11.0, 12.0])
LEAD = np.array([1.0, 2.0, 3.0, 4.0])
X3 = np.array([0.7, -1.2, 0.4])
X4 = np.array([1.0, 0.5, -0.3, 2.0])
OBS = np.array([[0.1, 1.0], [0.5, 0.2], [-0.4, 0.7], [0.3, -0.6]])
XC = np.array([[0.2, 0.3], [-0.1, 0.8], [0.5, -0.2]])

FORMS = [  # (function, args, wrt, JAX's form of it or None)
    (joined, (D5,), 0, lambda jnp, d: jnp.sum(jnp.exp(-1.0 / d) * jnp.arange(1.0, 5.0)) + 6),
    (pruned, (T6,), 0, None),
    (platoon, (V0, LEAD), (0, 1), None),
    (trajectories, (X4,), 0, None),
    (by_name, (X4,), 0, lambda jnp, x: x[0] * x[2] + x[1]),
    (tips, (X4,), 0, None),
    (entries, (X3,), 0, lambda jnp, x: jnp.sum(x ** 2) + jnp.sum((x * x[-1]) ** 2)),
    (two_lists, (X4,), 0, lambda jnp, x: jnp.sum(2.0 * x) * jnp.sum(jnp.sin(x))),
    (mixture, (OBS, XC), (0, 1), None),
    (ragged, (X4,), 0, None),
    (stack, (np.array([2.3, 1.45, 2.3]), np.array([60.0, 95.0, 60.0])), (0, 1), None),
    (logged, (np.array([2.0, 3.0]),), 0, None),
    (library, (T6[:3, :2], np.linspace(-1.0, 1.0, 11)), (0, 1), None),
    (entry_values, (0.7,), 0, lambda jnp, x: (1.0 + 3.0 * x) * 4),
]


def doubled(x):
    d = list(x)
    return np.sum(d + d)  # Python's join: never NumPy's addition


def entry_held_twice(x):
    d = {"err": []}
    keep = d["err"]
    for i in range(x.shape[0]):
        d["err"].append(x[i])  # keep sees it in Python
    return np.sum(np.array(keep))


def past_the_end(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] + out[i])  # out[i] is not appended yet: IndexError
    return sum(out)


def check_refusals():
    for fn in (doubled, entry_held_twice):
        with pytest.raises(UnsupportedError):
            jitgrad.grad(fn)(X4)
    with pytest.raises(IndexError):
        past_the_end(X4)
    with pytest.raises(IndexError):
        jitgrad.grad(past_the_end)(X4)
    g = jitgrad.grad(by_name)
    np.testing.assert_allclose(g(np.array([1.0, 2.0, 5.0])), [5.0, 1.0, 1.0])  # built again
    with pytest.raises(UnsupportedError):  # (Python: KeyError, 'c' not in the dict)
        g(np.array([1.0, 2.0]))


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def all_forms(d_mid, t, x):
    """One compiled gradient: list(x) joined to displays, list(x) appended to in a loop
    that reads the items so far, dict(zip(...)), writes into a dict's arrays."""
    return joined(d_mid) + pruned(t) + by_name(x) + entries(x)


def test_forms_compiled():
    args = (D5, T6, X3)
    wrt = (0, 1, 2)
    value, grads = jitgrad.value_and_grad(all_forms, wrt=wrt)(*args)
    check_optional_oracle(all_forms, args, wrt, value, grads, None)


if __name__ == "__main__":
    for form in FORMS:
        check_form(*form)
    check_refusals()
