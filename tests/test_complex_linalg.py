"""np.linalg's decompositions of a complex matrix (issue #43): svd (and its singular values,
the nuclear and spectral norms), eigh of a Hermitian matrix (either triangle), eig, of one
matrix and of a stack (`jitgrad.prims.complex_decompositions`, `jitgrad.lang.complex_linalg`).

Each case is a real loss of a complex matrix, gauge-invariant where it reads eigenvectors or
singular vectors (their moduli, a projector, ``u_k vh_k``: the phases NumPy picks have no
derivative), checked three ways: its value against NumPy; its gradient (JAX's convention,
``dL/d(re) - 1j dL/d(im)``, as `test_complex_args`) against ``jax.grad`` of the same loss
where JAX computes it (JAX's eigh symmetrises its input where NumPy reads one triangle, so
its twin takes ``b + b^H``), and against central differences on the real and imaginary part
of every entry. The breadth runs as plain Python in a process of its own; one group (svd,
eigh and eig in one function) is compiled.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import jitgrad
from jitgrad import UnsupportedError

sys.path.insert(0, os.path.dirname(__file__))
from plain_python import assert_runs_as_plain_python
from test_complex_args import central

RNG = np.random.default_rng(11)


def _c(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


TALL, WIDE, SQUARE, STACK = _c(4, 3), _c(3, 5), _c(4, 4), _c(2, 4, 3)
C43 = _c(4, 3)
W43, W33, W44 = (RNG.normal(size=s) for s in ((4, 3), (3, 3), (4, 4)))
REAL = RNG.normal(size=(4, 4))


def singular_values(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) * np.arange(1.0, 4.0))


def norms(a):
    return np.linalg.norm(a, "nuc") + np.linalg.norm(a, 2) * 0.5 - np.linalg.norm(a, -2)


def factors_tall(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.abs(u) * W43) + np.sum(s) + np.sum(np.abs(vh) * W33)


def factors_wide(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.abs(u) * W33) + np.sum(s * s) + np.sum(np.abs(vh[:, 1:4]) * W33)


def relative_phase(a):
    """u_k vh_k does not depend on the phase of u_k, which vh_k follows: the one place the
    rule's term ``i Im diag(U^H G_U - V^H G_V) / 2s`` matters."""
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return (np.sum(np.real(np.outer(u[:, 1], vh[1, :]) * C43))
            + np.sum(np.imag(np.outer(u[:, 0], vh[0, :]) * C43)))


def hermitian(b):
    w, v = np.linalg.eigh(b + np.conj(b).T)
    return np.sum(w * np.arange(4.0)) + np.sum(np.abs(v) * W44)


def hermitian_upper(b):
    h = b + np.conj(b).T
    return np.sum(np.linalg.eigvalsh(h, "U") ** 2) + np.sum(np.abs(np.linalg.eigh(h, "U")[1]))


def lower_triangle(a):
    """NumPy's eigh reads the lower triangle (and the real part of the diagonal) only."""
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.arange(4.0)) + np.sum(np.abs(v) * W44)


def general(a):
    w, v = np.linalg.eig(a)
    return np.sum(w.real * np.arange(4.0)) + np.sum(w.imag * W44[0]) + np.sum(np.abs(v) * W44)


def projector(a):
    _, v = np.linalg.eig(a)
    p = np.outer(v[:, 1], np.conj(v[:, 1]))
    return np.sum(np.real(p * W44)) + np.sum(np.abs(np.linalg.eigvals(a)))


def real_matrix(r):
    """A real matrix's eigenvalues may be complex: ``eig(r + 0j)`` takes them so."""
    w, v = np.linalg.eig(r + 0j)
    return np.sum(np.abs(w) * np.arange(4.0)) + np.sum(np.abs(v) * W44)


def real_complex_eigenvalues(r):
    """A real matrix's eig as NumPy gives it (complex eigenvalues): built real first, then
    again complex where the call finds them complex (`errors.ComplexEigenvalues`)."""
    w, v = np.linalg.eig(r)
    return np.sum(np.abs(w) * np.arange(4.0)) + np.sum(np.abs(v) * W44) + np.sum(w.real ** 2)


def leslie_roots(r):
    """The dominant eigenvalue's modulus (a Leslie matrix's growth rate) and np.roots'."""
    leslie = np.zeros((4, 4))
    leslie[0] = np.abs(r[0])
    leslie[1, 0], leslie[2, 1], leslie[3, 2] = 0.5 + r[1, 0] ** 2, 0.7, 0.6
    return np.max(np.abs(np.linalg.eigvals(leslie))) + np.sum(np.abs(np.roots(r[2])) ** 2)


def stacked(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return (np.sum(np.abs(u) * W43) + np.sum(s * s) + np.sum(np.abs(vh) * W33)
            + np.sum(np.linalg.norm(a, "nuc", axis=(1, 2)) * np.array([1.0, 2.0])))


def jax_twin(fn):
    """``fn`` with jax.numpy for np, its eig's eigenvector derivative enabled (JAX asks for
    the opt-in: it holds for distinct eigenvalues and gauge-invariant losses, as here)."""
    import types

    import jax.numpy as jnp
    from jax.lax import linalg as lax_linalg

    def eig(a):
        w, v = lax_linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
        return w, v

    linalg = types.SimpleNamespace(**{k: getattr(jnp.linalg, k) for k in dir(jnp.linalg)
                                      if not k.startswith("_")})
    linalg.eig, linalg.eigvals = eig, lambda a: eig(a)[0]
    shim = types.SimpleNamespace(**{k: getattr(jnp, k) for k in dir(jnp)
                                    if not k.startswith("_")})
    shim.linalg = linalg
    return types.FunctionType(fn.__code__, dict(fn.__globals__, np=shim), fn.__name__)


# (name, loss, argument, whether JAX computes the same function's gradient)
CASES = [
    ("singular values", singular_values, TALL, True),
    ("nuclear, spectral and smallest-singular-value norms", norms, TALL, True),
    ("svd factors' moduli, tall", factors_tall, TALL, True),
    ("svd factors' moduli, wide", factors_wide, WIDE, True),
    ("u_k vh_k: the relative phase", relative_phase, TALL, True),
    ("eigh of b + b^H", hermitian, SQUARE, True),
    ("eigh and eigvalsh, UPLO='U'", hermitian_upper, SQUARE, True),
    ("eigh reads the lower triangle", lower_triangle, SQUARE, False),
    ("eig", general, SQUARE, True),
    ("eig: a projector, eigvals", projector, SQUARE, True),
    ("eig of a real matrix + 0j", real_matrix, REAL, True),
    ("eig of a real matrix, complex eigenvalues", real_complex_eigenvalues, REAL, True),
    ("a Leslie matrix's eigvals, np.roots", leslie_roots, REAL, False),
    ("a stack: svd and nuclear norms", stacked, STACK, False),  # JAX's svd/norm of stacks: also
]


def check(name, fn, a, with_jax):
    value, g = jitgrad.value_and_grad(fn)(a)
    np.testing.assert_allclose(value, fn(a), rtol=1e-12, err_msg=name)
    assert np.iscomplexobj(g) == np.iscomplexobj(a) and g.shape == a.shape, name
    np.testing.assert_allclose(g, central(fn, (a,), 0), rtol=1e-6, atol=1e-7, err_msg=name)
    if with_jax:
        import jax
        jax.config.update("jax_enable_x64", True)
        want = np.asarray(jax.grad(jax_twin(fn))(a))
        np.testing.assert_allclose(g, want, rtol=1e-8, atol=1e-10, err_msg=name)


def run_all():
    for case in CASES:
        check(*case)
    equal_eigenvalues_refuse_the_vectors_derivative()


def both(a):
    """svd's values, eigh's and eig's, in one function, compiled (the rules of the vectors
    are the same code, run as plain Python in the breadth)."""
    s = np.linalg.svd(a[:, :3], compute_uv=False)
    w = np.linalg.eigvalsh(a + np.conj(a).T)
    e = np.linalg.eigvals(a)
    return np.sum(s) + np.sum(w * np.arange(4.0)) + np.sum(np.abs(e))


def test_compiled_svd_eigh_eig():
    pytest.importorskip("jax")
    check("svd, eigh, eig (compiled)", both, SQUARE, True)


def test_compiled_real_eig_built_again_complex():
    """Compiled: a real matrix's eigvals built real answers a call with real eigenvalues; a
    call with complex ones builds it again complex (kept for the signature)."""
    f = jitgrad.grad(lambda r: np.sum(np.abs(np.linalg.eigvals(r))))
    symmetric = REAL + REAL.T
    for r in (symmetric, REAL, symmetric):
        fn = lambda r: np.sum(np.abs(np.linalg.eigvals(r)))
        np.testing.assert_allclose(f(r), central(fn, (r,), 0), rtol=1e-6, atol=1e-7)


def test_breadth_as_plain_python():
    """Every case of `CASES` against NumPy, JAX and central differences, and equal
    eigenvalues' refusal, as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own)."""
    pytest.importorskip("jax")
    assert_runs_as_plain_python(__file__)


def equal_eigenvalues_refuse_the_vectors_derivative():
    """Eigenvectors of equal eigenvalues have no derivative: the run time raises (the
    eigenvalues alone still have one). Run in the breadth's plain-Python process: compiled,
    it costs half a minute of Numba's time for complex eigh's helpers alone."""
    a = np.diag([1.0, 1.0, 2.0]) + 0j

    def vectors(a):
        return np.sum(np.abs(np.linalg.eigh(a)[1]))

    with pytest.raises(Exception, match="two eigenvalues"):
        jitgrad.grad(vectors)(a)
    g = jitgrad.grad(lambda a: np.sum(np.linalg.eigvalsh(a) ** 2))(a)
    np.testing.assert_allclose(g, 2 * np.diag([1.0, 1.0, 2.0]), atol=1e-12)


def _rotated_singular_values(x):
    return singular_values(x * (0.6 + 0.8j))


def test_forward_mode_refuses():
    """The complex decompositions have adjoint rules only: forward mode says so."""
    with pytest.raises(UnsupportedError, match="forward mode"):
        jitgrad.jvp(_rotated_singular_values, (TALL.real,), (TALL.imag,))


if __name__ == "__main__":
    run_all()
    print(f"{len(CASES)} cases agree with NumPy, JAX and central differences")
