"""Matrix decompositions inside a gradient (issue #43): np.linalg's eigh, eigvalsh, eig,
eigvals, svd, qr, pinv, lstsq, cond, matrix_rank and the matrix norms, inv and det of a
stack, np.roots, and scipy.linalg's sqrtm, solve_sylvester and solve_banded.

Four compiled gradients (two symmetric and rectangular, two general and square) each put
several of them in one function, on well-conditioned inputs with distinct eigenvalues and singular
values; they are checked against central finite differences and against JAX (jax.numpy's
linalg, and the eigh form of the square root for sqrtm). Functions of eigenvectors and
singular vectors are ones their sign does not change, as LAPACK picks the sign. What the run
time refuses (equal eigenvalues under eigenvectors, a non-square full SVD, complex
eigenvalues, a sqrtm of a matrix that is not positive definite) and the values are checked
as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.linalg

import jitgrad

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad
from plain_python import assert_runs_as_plain_python

X43 = np.array([[0.35, 0.72, 0.46], [0.91, 0.63, 0.28], [0.55, 0.82, 0.17],
                [0.12, 0.40, 0.77]])
X33 = np.array([[0.35, -0.72, 0.46], [0.21, 0.63, -0.28], [0.55, 0.32, 0.17]])
WEIGHTS = np.arange(1.0, 4.0)


# Four functions of several decompositions each: as two (spectral, general) their gradients took
# 22.9 and 33.9 s of CPU to compile, as four 8.8 + 8.1 and 4.2 + 15.0 s (fresh caches, a process
# each): LLVM's time grows faster than the function.
def spectral_eigh_svd(x):
    """Symmetric and rectangular: eigh, eigvalsh, the thin SVD and its values, the 2-norm."""
    a = x.T @ x + np.eye(x.shape[1])
    w, v = np.linalg.eigh(a)
    s = np.sum(w * WEIGHTS) + np.sum(v[:, 0] ** 4) + np.sum(np.linalg.eigvalsh(a) ** 2)
    u, sv, vt = np.linalg.svd(x, full_matrices=False)
    s += np.sum(sv ** 2 * WEIGHTS) + np.sum(np.outer(u[:, 0], vt[0]) ** 3)
    return s + np.sum(np.linalg.svd(x, compute_uv=False)) + np.linalg.norm(x, 2)


def spectral_solves(x):
    """Rectangular: the nuclear norm and cond of singular values, pinv, lstsq, matrix_rank, qr."""
    s = np.linalg.norm(x, "nuc") + np.linalg.cond(x) + np.sum(np.linalg.pinv(x) ** 2)
    sol, res, rank, sing = np.linalg.lstsq(x, x[:, 0] * 2.0 + 1.0, rcond=None)
    s += np.sum(sol ** 2) + np.sum(res) * rank + np.sum(sing * WEIGHTS)
    q, r = np.linalg.qr(x)
    return s + np.sum(np.abs(np.diag(r))) + np.sum((q * np.sign(np.diag(r))) ** 3)


def general_eig(x):
    """General and square: eig and eigvals (real eigenvalues), roots."""
    a = x + np.diag(np.array([1.0, 3.0, 5.0]))
    w, v = np.linalg.eig(a)
    s = np.sum(w.real ** 2 * WEIGHTS) + np.sum(np.linalg.eigvals(a) ** 3)
    s += np.sum(v[:, 0] ** 2 * WEIGHTS)
    return s + np.sum(np.roots(np.array([1.0, -x[0, 0] - 3.0, 2.0])) ** 2)


def general_solves(x):
    """Square: sqrtm, solve_sylvester, solve_banded, matrix norms 1 and inf, inv and det of a
    stack."""
    a = x + np.diag(np.array([1.0, 3.0, 5.0]))
    spd = x @ x.T + np.eye(3)
    s = np.sum(scipy.linalg.sqrtm(spd) * np.arange(9.0).reshape(3, 3))
    s += np.sum(scipy.linalg.solve_sylvester(a, spd, x) ** 2)
    ab = np.vstack((x[0] * 0.2, x[1] + 3.0, x[2] * 0.3))
    s += np.sum(scipy.linalg.solve_banded((1, 1), ab, x[:, 0]) ** 2)
    s += np.linalg.norm(a, 1) + np.linalg.norm(a, np.inf)
    stack = np.stack((a, spd))
    return s + np.sum(np.linalg.inv(stack) ** 2) + np.sum(np.linalg.det(stack) * WEIGHTS[:2])


FUNCTIONS = [(spectral_eigh_svd, X43), (spectral_solves, X43), (general_eig, X33),
             (general_solves, X33)]


# ----------------------------------------------------------------------------- compiled


@pytest.mark.parametrize(("fn", "x"), FUNCTIONS)
def test_gradient_matches_finite_differences(fn, x):
    g = jitgrad.value_and_grad(fn)
    for scale in (1.0, 0.9):
        point = x * scale
        value, grad = g(point)
        assert value == pytest.approx(fn(point), rel=1e-12)
        np.testing.assert_allclose(grad, numeric_grad(fn, (point,), 0), rtol=1e-6, atol=1e-7)


# ----------------------------------------------------------------------------- JAX


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def spectral_eigh_svd_jax(x):
    import jax.numpy as jnp

    a = x.T @ x + jnp.eye(x.shape[1])
    w, v = jnp.linalg.eigh(a)
    s = jnp.sum(w * WEIGHTS) + jnp.sum(v[:, 0] ** 4) + jnp.sum(jnp.linalg.eigvalsh(a) ** 2)
    u, sv, vt = jnp.linalg.svd(x, full_matrices=False)
    s += jnp.sum(sv ** 2 * WEIGHTS) + jnp.sum(jnp.outer(u[:, 0], vt[0]) ** 3)
    return s + jnp.sum(jnp.linalg.svd(x, compute_uv=False)) + jnp.linalg.norm(x, 2)


def spectral_solves_jax(x):
    import jax.numpy as jnp

    s = jnp.linalg.norm(x, "nuc") + jnp.linalg.cond(x) + jnp.sum(jnp.linalg.pinv(x) ** 2)
    sol, res, rank, sing = jnp.linalg.lstsq(x, x[:, 0] * 2.0 + 1.0)
    s += jnp.sum(sol ** 2) + jnp.sum(res) * rank + jnp.sum(sing * WEIGHTS)
    q, r = jnp.linalg.qr(x)
    return s + jnp.sum(jnp.abs(jnp.diag(r))) + jnp.sum((q * jnp.sign(jnp.diag(r))) ** 3)


def general_eig_jax(x):
    import jax
    import jax.numpy as jnp

    a = x + jnp.diag(jnp.array([1.0, 3.0, 5.0]))
    w, v = jax.lax.linalg.eig(a, compute_left_eigenvectors=False,
                              enable_eigvec_derivs=True)  # (the eigenvalues are distinct)
    s = jnp.sum(w.real ** 2 * WEIGHTS) + jnp.sum(jnp.linalg.eigvals(a).real ** 3)
    s += jnp.sum(jnp.abs(v[:, 0]) ** 2 * WEIGHTS)
    return s + jnp.sum(jnp.roots(jnp.array([1.0, -x[0, 0] - 3.0, 2.0]),
                                 strip_zeros=False).real ** 2)


def general_solves_jax(x):
    import jax.numpy as jnp

    a = x + jnp.diag(jnp.array([1.0, 3.0, 5.0]))
    spd = x @ x.T + jnp.eye(3)
    ws, vs = jnp.linalg.eigh(spd)  # the square root of a symmetric positive definite matrix
    s = jnp.sum((vs * jnp.sqrt(ws)) @ vs.T * jnp.arange(9.0).reshape(3, 3))
    # a x + x b = q, vectorised by rows: (kron(a, I) + kron(I, b.T)) vec(x) = vec(q)
    system = jnp.kron(a, jnp.eye(3)) + jnp.kron(jnp.eye(3), spd.T)
    s += jnp.sum(jnp.linalg.solve(system, x.ravel()) ** 2)
    dense = (jnp.diag(x[1] + 3.0) + jnp.diag(x[0, 1:] * 0.2, 1)
             + jnp.diag(x[2, :-1] * 0.3, -1))
    s += jnp.sum(jnp.linalg.solve(dense, x[:, 0]) ** 2)
    s += jnp.linalg.norm(a, 1) + jnp.linalg.norm(a, jnp.inf)
    stack = jnp.stack((a, spd))
    return s + jnp.sum(jnp.linalg.inv(stack) ** 2) + jnp.sum(jnp.linalg.det(stack) * WEIGHTS[:2])


@pytest.mark.parametrize(("fn", "oracle", "x"), [
    (spectral_eigh_svd, spectral_eigh_svd_jax, X43), (spectral_solves, spectral_solves_jax, X43),
    (general_eig, general_eig_jax, X33), (general_solves, general_solves_jax, X33)])
def test_against_jax(jax, fn, oracle, x):
    got = jitgrad.value_and_grad(fn)(x)[1]  # the module the test above compiled
    want = np.asarray(jax.jit(jax.grad(oracle))(jax.numpy.array(x)))  # one XLA compile
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


# ----------------------------------------------------------------------------- plain Python


def lqr(a, p, rr):
    """python-control's LQR: the Riccati solution (an unstable a) and its gain."""
    b = np.array([[0.0], [1.0], [0.5]])
    q = p @ p.T + np.eye(3)
    r = np.array([[rr[0] ** 2 + 0.5]])
    x = scipy.linalg.solve_continuous_are(a, b, q, r)
    k = np.linalg.solve(r, b.T @ x)
    return np.sum(x * x) + np.sum(k ** 2)


def check_plain():
    """As plain Python: the values are NumPy's and SciPy's, the adjoint of eigh reads the
    lower triangle, and the run time refuses what has no derivative or no real value."""
    bad = []
    for fn, x in FUNCTIONS:
        if not np.isclose(jitgrad.value_and_grad(fn)(x)[0], fn(x), rtol=1e-12):
            bad.append(f"{fn.__name__}: value")

    def upper_ignored(a):
        w, v = np.linalg.eigh(a)
        return np.sum(w * WEIGHTS) + np.sum(v[:, 0] ** 4)

    args = (np.array([[0.0, 1.0, 0.0], [2.0, -0.3, 0.1], [0.0, 0.4, -1.0]]), X33, np.array([0.7]))
    value, grads = jitgrad.value_and_grad(lqr, wrt=(0, 1, 2))(*args)
    if not np.isclose(value, lqr(*args), rtol=1e-10):
        bad.append("solve_continuous_are: value")
    for k, g in enumerate(grads):
        if not np.allclose(g, numeric_grad(lqr, args, k), rtol=1e-6, atol=1e-6):
            bad.append(f"solve_continuous_are: gradient {k}")

    a = X33 + X33.T + np.diag([0.0, 1.0, 2.0])
    a[0, 2] += 5.0  # NumPy reads the lower triangle: the gradient above the diagonal is 0
    got = jitgrad.grad(upper_ignored)(a)
    if not np.allclose(got, numeric_grad(upper_ignored, (a,), 0), rtol=1e-6, atol=1e-8):
        bad.append(f"eigh of a non-symmetric matrix: {got}")
    raising = [
        (lambda x: np.sum(np.linalg.eigh(np.eye(3) * x[0, 0])[1] ** 3), "two eigenvalues"),
        (lambda x: np.sum(np.linalg.svd(x)[0]), "full_matrices=True of a non-square"),
        # complex eigenvalues of a real matrix: built again complex, as NumPy gives them, so
        # their sum is a complex result (refused: a gradient is of a real value)
        (lambda x: np.sum(np.linalg.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]]) * x[0, 0])),
         "returns a complex number"),
        (lambda x: np.sum(scipy.linalg.sqrtm(x @ x.T - np.eye(x.shape[0]) * 9.0)),
         "not positive definite"),
    ]
    for k, (fn, message) in enumerate(raising):
        try:
            jitgrad.grad(fn)(X43)
            bad.append(f"raising case {k}: no error")
        except (ValueError, np.linalg.LinAlgError, jitgrad.JitgradError) as e:
            if message not in str(e):
                bad.append(f"raising case {k}: {e}")
    return bad


def test_plain_values_and_run_time_refusals():
    assert_runs_as_plain_python(__file__)


@pytest.mark.parametrize(("fn", "message"), [
    (lambda x: np.sum(np.linalg.qr(x, mode="complete")[0]), r"np\.linalg\.qr with mode"),
    (lambda x: np.sum(np.linalg.pinv(x, rcond=1e-3)), r"np\.linalg\.pinv with rcond"),
    (lambda x: np.linalg.norm(x, 3), r"np\.linalg\.norm with ord=3"),
    (lambda x: np.sum(np.linalg.svd(x, hermitian=True)[1]), r"hermitian=True"),
])
def test_refused_with_the_reason(fn, message):
    with pytest.raises(jitgrad.UnsupportedError, match=message):
        jitgrad.grad(fn)(X43)


if __name__ == "__main__":
    problems = check_plain()
    print("\n".join(problems) or "plain Python agrees")
    sys.exit(1 if problems else 0)
