"""Products and linear algebra for generated code (``_rt.<name>``, re-exported by `runtime`):
NumPy's functions as Numba compiles them.

Takes float arrays (`lowering` converts integer operands to float first); guarantees NumPy's
results. Why they are here and not inline in the generated code: Numba's BLAS and LAPACK
wrappers take 0.5-2 s to compile in each process; here they compile once per machine and
signature (`compile.jit`, cache=True), not in every generated module.
"""

from __future__ import annotations

import numpy as np

from jitgrad.backend.numba.compile import jit

# The helpers that call BLAS or LAPACK, which Numba finds through SciPy when they first run: a
# helper loaded from the disk cache never asks for SciPy while compiling, and without SciPy
# the process would abort at the call (`compile.require_scipy` refuses the module first).
USES_SCIPY = ("matmul", "dot", "inv", "solve", "det", "cholesky", "logabsdet", "signdet",
              "eigvalsh", "eigh_vectors", "eig_values", "eig_vectors", "svdvals", "svd_u",
              "svd_vt", "qr_q", "qr_r", "pinv", "matrix_rank", "sqrtm", "sqrtm_adjoint",
              "inv_stack", "det_stack")


@jit
def matmul(a, b):
    """``a @ b`` (a matrix among them): Numba's BLAS wrappers take 0.5-2 s to compile in each
    process; here once per machine and layout."""
    return a @ b


@jit
def dot(a, b):
    """``np.dot(a, b)`` of two vectors, or of a number and an array; see `matmul`."""
    return np.dot(a, b)


@jit
def inv(a):
    return np.linalg.inv(a)


@jit
def inv_stack(a):
    """np.linalg.inv of a stack of matrices (Numba's takes one): each in turn."""
    out = np.empty(a.shape)
    for k in range(a.shape[0]):
        out[k] = np.linalg.inv(a[k])
    return out


@jit
def det_stack(a):
    out = np.empty(a.shape[0])
    for k in range(a.shape[0]):
        out[k] = np.linalg.det(a[k])
    return out


@jit
def solve(a, b):
    return np.linalg.solve(a, b)


@jit
def det(a):
    return np.linalg.det(a)


@jit
def cholesky(a):
    return np.linalg.cholesky(a)


@jit
def logabsdet(a):
    return np.linalg.slogdet(a)[1]


@jit
def signdet(a):
    return np.linalg.slogdet(a)[0]


# ---- decompositions (`prims.decompositions`): one helper per result, NumPy's values


@jit
def eigvalsh(a):
    return np.linalg.eigvalsh(a)


@jit
def eigh_vectors(a):
    return np.linalg.eigh(a)[1]


@jit
def _check_real(w):
    """Numba's eig raises for complex eigenvalues; this raises for them as plain Python
    (JITGRAD_DISABLE_JIT) too, where NumPy's eig returns them."""
    if np.any(w.imag != 0.0):
        raise ValueError("jitgrad: np.linalg.eig of a matrix with complex eigenvalues "
                         "(jitgrad's eig is real)")


@jit
def eig_values(a):
    w = np.linalg.eig(a)[0]
    _check_real(w)
    return w.real.copy()


@jit
def eig_vectors(a):
    w, v = np.linalg.eig(a)
    _check_real(w)
    return v.real.copy()


@jit
def svdvals(a):
    return np.linalg.svd(a, False)[1]


@jit
def _square_for_full(a, full):
    if full and a.shape[0] != a.shape[1]:
        raise ValueError("jitgrad: np.linalg.svd with full_matrices=True of a non-square "
                         "matrix (pass full_matrices=False)")


@jit
def svd_u(a, full):
    _square_for_full(a, full)
    return np.linalg.svd(a, False)[0]


@jit
def svd_vt(a, full):
    _square_for_full(a, full)
    return np.linalg.svd(a, False)[2]


@jit
def qr_q(a):
    return np.linalg.qr(a)[0]


@jit
def qr_r(a):
    return np.linalg.qr(a)[1]


@jit
def pinv(a):
    return np.linalg.pinv(a)


@jit
def matrix_rank(a):
    return np.linalg.matrix_rank(a)


@jit
def inverse_gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it: the eigenvectors' (singular
    vectors') derivative, which does not exist where two are equal (raised, not inf)."""
    n = w.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                gap = w[j] - w[i]
                if gap == 0.0:
                    raise ValueError("jitgrad: two eigenvalues (or singular values) are equal: "
                                     "the eigenvectors' (singular vectors') derivative is "
                                     "undefined there")
                out[i, j] = 1.0 / gap
    return out


@jit
def sqrtm(a):
    """The principal square root of a symmetric positive definite matrix (scipy.linalg.sqrtm's
    value there); raises for another matrix."""
    scale = np.max(np.abs(a))
    if np.max(np.abs(a - a.T)) > 1e-10 * scale:
        raise ValueError("jitgrad: scipy.linalg.sqrtm of a matrix that is not symmetric")
    w, v = np.linalg.eigh(a)
    if np.min(w) <= 0.0:
        raise ValueError("jitgrad: scipy.linalg.sqrtm of a matrix that is not positive "
                         "definite")
    return (v * np.sqrt(w)) @ v.T


@jit
def sqrtm_adjoint(x, g):
    """Y with X Y + Y X = G, for X symmetric positive definite: in X's eigenbasis, entry
    (i, j) divided by w[i] + w[j]."""
    w, v = np.linalg.eigh(x)
    inner = v.T @ g @ v
    n = w.shape[0]
    for i in range(n):
        for j in range(n):
            inner[i, j] /= w[i] + w[j]
    return v @ inner @ v.T


@jit
def companion(p):
    """The companion matrix of the polynomial p (np.roots takes its eigenvalues)."""
    if p[0] == 0.0 or p[-1] == 0.0:
        raise ValueError("jitgrad: np.roots of coefficients whose first or last is zero "
                         "(NumPy strips them; jitgrad takes nonzero end coefficients)")
    n = p.shape[0] - 1
    out = np.zeros((n, n))
    for j in range(n):
        out[0, j] = -p[j + 1] / p[0]
    for i in range(1, n):
        out[i, i - 1] = 1.0
    return out
