"""Forms met in the sixth held-out batch of real code (issue #43, part hb6b), in functions of our
own: ``np.diag([1.0, 1.0, d])`` of a list holding a value of the graph (Kabsch's reflection,
Gohlke's ``rotation_matrix``); a complex array allocated with ``dtype=complex``, written in
place (``S[pv] += 0.4``, ``V[1] = ...``) and put on a diagonal (``np.diag(Yff) @ Cf``, as
PYPOWER's makeYbus and dSbus_dV write them); ``K[np.ix_(dofs, dofs)] += ke`` and
``K[np.ix_(free, free)]`` (finite-element assembly, Newton's Jacobian blocks); ``b[i, 1]``
with ``i = np.nonzero(m)`` (PYPOWER's taps); ``np.add.at`` / ``np.subtract.at`` with an index
vector or a tuple of them (trimesh's vertex normals, batched Elo updates, assembly);
``self.b[i] = ...`` into an array attribute (scikit-fem's MappingAffine); ``mu, sigma =
rating`` through the class's ``__iter__`` (trueskill); ``if not series:`` on a tuple (glicko2);
``np.require`` (ObsPy's STA/LTA).

One compiled gradient holds them all, checked against central finite differences and against
JAX (the same computation written with jax.numpy). The refusals are checked while building,
with no compile.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against

X = np.array([0.4, -0.3, 0.8, 0.25, -0.6])
E = np.array([1.0, 2.0, 1.5, 0.8])
P = np.array([[0.0, 1.0, 0.0, 1.1], [0.0, 0.1, 1.0, 0.9]])
T = np.array([[0, 1], [1, 3], [2, 2]])          # (3 nodes, 2 triangles), scikit-fem's layout
BRANCH = np.array([[0, 1, 0.01, 0.06, 0.0], [0, 2, 0.02, 0.08, 0.98], [1, 2, 0.015, 0.07, 0.0]])


class Rating:
    def __init__(self, mu, sigma):
        self.mu = mu
        self.sigma = sigma

    def __iter__(self):
        return iter((self.mu, self.sigma))


class Mapping:
    def __init__(self, p, t):
        self.A = np.empty((2, 2, t.shape[1]))
        self.b = np.empty((2, t.shape[1]))
        for i in range(2):
            self.b[i] = p[i, t[0]]
            for j in range(2):
                self.A[i, j] = p[i, t[j + 1]] - p[i, t[0]]


def rotation(angle, direction):
    cosa = math.cos(angle)
    R = np.diag([cosa, cosa, cosa])
    R += np.outer(direction, direction) * (1.0 - cosa)
    return R


def ybus_mismatch(x, branch):
    nb, nl = 3, branch.shape[0]
    Ys = 1.0 / (branch[:, 2] + 1j * branch[:, 3] * (1.0 + x[:nl]))
    tap = np.ones(nl)
    i = np.nonzero(branch[:, 4])
    tap[i] = branch[i, 4]
    f = branch[:, 0].astype(int)
    t = branch[:, 1].astype(int)
    Cf = np.zeros((nl, nb))
    Ct = np.zeros((nl, nb))
    Cf[np.arange(nl), f] = 1
    Ct[np.arange(nl), t] = 1
    Yf = np.diag(Ys / tap ** 2) @ Cf - np.diag(Ys / tap) @ Ct
    Yt = np.diag(-Ys / tap) @ Cf + np.diag(Ys) @ Ct
    Ybus = Cf.T @ Yf + Ct.T @ Yt
    S = -(x[:nb] + 1j * x[1:nb + 1]) / 10.0
    S[1] += 0.4
    V = np.ones(nb, dtype=complex)
    V[1:] = 1.0 + 0.1j * x[2:4]
    mis = V * np.conj(Ybus @ V) - S
    J = np.diag(V) @ np.conj(Ybus)
    pq = np.array([1, 2])
    return np.sum(mis.real ** 2 + mis.imag ** 2) * 1e-3 + np.sum(J[np.ix_(pq, pq)].imag) * 1e-2


def assembled(e, x):
    n = e.shape[0] + 1
    K = np.zeros((n, n))
    for k in range(e.shape[0]):
        dofs = [k, k + 1]
        K[np.ix_(dofs, dofs)] += e[k] * np.array([[1.0, -1.0], [-1.0, 1.0]])
    free = np.arange(1, n)
    u = np.linalg.solve(K[np.ix_(free, free)], x[:n - 1])
    return x[:n - 1] @ u


def scattered(x):
    new = x.copy()
    w = np.array([0, 2, 0, 1])
    lose = np.array([1, 0, 3, 3])
    np.add.at(new, w, x[lose] * x[w])
    np.subtract.at(new, lose, 0.5 * x[:4])
    M = np.zeros((4, 2))
    np.add.at(M, (w, np.array([0, 1, 1, 0])), x[:4] ** 2)
    np.add.at(M, lose, 1.0)
    return np.sum(new ** 2) + np.sum(np.sin(M))


def loss(x, e, p):
    d = np.sign(x[0])
    D = np.diag([1.0, x[1], d * x[2]])
    R = rotation(x[3], np.array([0.6, 0.0, 0.8]))
    m = Mapping(p, T)
    a = m.A
    m.A[0, 1] += 0.5 * x[4]
    mu, sigma = Rating(x[0], x[1] ** 2)
    series = (mu, sigma)
    extra = sigma if not series else mu * sigma
    sta = np.require(np.cumsum(x ** 2), dtype=np.float64)
    sta[2:] = sta[2:] - sta[:-2]
    return (np.sum(D * R) + np.sum(a ** 2) + np.sum(m.b * x[1]) + extra + np.sum(sta)
            + ybus_mismatch(x, BRANCH) + assembled(e, x) + scattered(x))


def loss_jax(jnp, x, e, p):
    d = jnp.sign(x[0])
    D = jnp.diag(jnp.array([1.0, x[1], d * x[2]]))
    cosa = jnp.cos(x[3])
    u = jnp.array([0.6, 0.0, 0.8])
    R = cosa * jnp.eye(3) + jnp.outer(u, u) * (1.0 - cosa)
    A = jnp.stack([jnp.stack([p[i, T[j + 1]] - p[i, T[0]] for j in range(2)]) for i in range(2)])
    b = jnp.stack([p[i, T[0]] for i in range(2)])
    A = A.at[0, 1].add(0.5 * x[4])
    mu, sigma = x[0], x[1] ** 2
    cs = jnp.cumsum(x ** 2)
    sta = cs.at[2:].set(cs[2:] - cs[:-2])
    # ybus_mismatch
    br = BRANCH
    nl = 3
    Ys = 1.0 / (br[:, 2] + 1j * br[:, 3] * (1.0 + x[:nl]))
    tap = np.where(br[:, 4] != 0, br[:, 4], 1.0)
    Cf = np.eye(3)[br[:, 0].astype(int)]
    Ct = np.eye(3)[br[:, 1].astype(int)]
    Yf = jnp.diag(Ys / tap ** 2) @ Cf - jnp.diag(Ys / tap) @ Ct
    Yt = jnp.diag(-Ys / tap) @ Cf + jnp.diag(Ys) @ Ct
    Ybus = Cf.T @ Yf + Ct.T @ Yt
    S = -(x[:3] + 1j * x[1:4]) / 10.0
    S = S.at[1].add(0.4)
    V = jnp.concatenate([jnp.ones(1, complex), 1.0 + 0.1j * x[2:4]])
    mis = V * jnp.conj(Ybus @ V) - S
    J = jnp.diag(V) @ jnp.conj(Ybus)
    yb = jnp.sum(mis.real ** 2 + mis.imag ** 2) * 1e-3 + jnp.sum(J[1:, 1:].imag) * 1e-2
    # assembled
    n = e.shape[0] + 1
    K = jnp.zeros((n, n))
    for k in range(e.shape[0]):
        K = K.at[k:k + 2, k:k + 2].add(e[k] * jnp.array([[1.0, -1.0], [-1.0, 1.0]]))
    u = jnp.linalg.solve(K[1:, 1:], x[:n - 1])
    asm = x[:n - 1] @ u
    # scattered
    w, lose = np.array([0, 2, 0, 1]), np.array([1, 0, 3, 3])
    new = x.at[w].add(x[lose] * x[w]).at[lose].add(-0.5 * x[:4])
    M = jnp.zeros((4, 2)).at[w, np.array([0, 1, 1, 0])].add(x[:4] ** 2).at[lose].add(1.0)
    sc = jnp.sum(new ** 2) + jnp.sum(jnp.sin(M))
    return (jnp.sum(D * R) + jnp.sum(A ** 2) + jnp.sum(b * x[1]) + mu * sigma + jnp.sum(sta)
            + yb + asm + sc)


def test_gradient_matches_finite_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    args = (X, E, P)
    wrt = (0, 1, 2)
    value, grads = jitgrad.value_and_grad(loss, wrt=wrt)(*args)
    want = jax.grad(lambda *a: loss_jax(jnp, *a), argnums=wrt)(*(jnp.array(a) for a in args))
    check_against(loss, args, wrt, value, grads, want)


def require_owndata(x):
    return np.sum(np.require(x[1:], requirements="O"))


def ix_of_three(x):
    A = np.zeros((2, 2, 2))
    return np.sum(A[np.ix_([0], [1], [0])] * x[0])


def add_at_floats(x):
    out = np.zeros(3)
    np.add.at(out, x[:2], 1.0)
    return np.sum(out * x[0])


class Rows:
    def __init__(self, values):
        self.values = values

    def __iter__(self):
        return iter(self.values)


def unpack_run_time_iter(x):
    a, b = Rows(x)
    return a + b


@pytest.mark.parametrize("fn, message", [
    (require_owndata, "requirements='O'"),
    (ix_of_three, "np.ix_ of other than two vectors"),
    (add_at_floats, "np.add.at with an index other than an integer vector"),
])
def test_refusals(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn).source(X)


def test_unpacking_an_object_that_iterates_an_array():
    """``a, b = Rows(x)`` whose ``__iter__`` is ``iter(self.values)``: the array's rows, their
    number checked at run time as Python checks it."""
    x = np.array([2.0, 3.0])
    g = jitgrad.grad(lambda x: unpack_run_time_iter(x) * x[0])(x)
    np.testing.assert_allclose(g, [2 * x[0] + x[1], x[0]], rtol=1e-12)
    with pytest.raises(jitgrad.JitgradError, match="cannot unpack"):
        jitgrad.grad(lambda x: unpack_run_time_iter(x) * x[0])(X)
