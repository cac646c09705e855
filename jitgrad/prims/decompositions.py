"""Matrix decompositions of ``np.linalg`` and ``scipy.linalg``, one primitive per result:
``eigvalsh`` and ``eigh_vectors`` (np.linalg.eigh; ``eigh_vectors_upper`` with
``UPLO="U"``), ``eig_values`` and ``eig_vectors``
(np.linalg.eig of a matrix whose eigenvalues are real), ``svdvals``, ``svd_u`` and ``svd_vt``
(the thin SVD), ``qr_q`` and ``qr_r`` (the reduced QR), ``pinv``, ``sqrtm`` (of a symmetric
positive definite matrix), ``companion`` (np.roots's matrix) and ``matrix_rank`` (no
derivative).

Each result is its own primitive (the IR's equations have one result each); a decomposition
the program unpacks runs once per result it reads. The adjoints are the standard ones (Giles,
"An extended collection of matrix derivative results"; Townsend, "Differentiating the singular
value decomposition"; Walter and Lehmann for QR), written here as NumPy on the results, so
second derivatives follow from the same rules.

Conventions, chosen so the derivative is the one of the function NumPy computes:

* ``np.linalg.eigh`` reads the lower triangle only (LAPACK's ``UPLO='L'``), so its adjoint is
  folded onto the lower triangle: the gradient of an entry above the diagonal is zero, as
  finite differences of NumPy's eigh give. For a symmetric argument built as ``a + a.T`` or
  ``x @ x.T`` the chain rule gives the same symmetric gradient as JAX's (which symmetrises the
  input instead). To differentiate in both triangles, write ``np.linalg.eigh((a + a.T) / 2)``.
* Eigenvectors and singular vectors have a derivative only where the eigenvalues (singular
  values) are distinct: with two equal, the run time raises ValueError (`inverse_gaps`) rather
  than giving inf or nan, as JAX does. Eigenvalues and singular values alone never need that.
* ``svd_u``/``svd_vt`` are the thin factors (``full_matrices=False``); with
  ``full_matrices=True`` (NumPy's default) they are taken only of a square matrix, where both
  forms agree, and the run time raises for another shape.
* ``qr_q``/``qr_r`` differentiate for a matrix with at least as many rows as columns (then R
  is square and invertible); a wide matrix raises at run time in the adjoint.
* ``sqrtm``: the principal square root of a symmetric positive definite matrix (the run time
  checks both and raises otherwise), whose derivative solves the Sylvester equation
  ``X dX + dX X = dA`` in any direction, symmetric or not. Its adjoint's own derivative is
  refused.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import ComplexEigenvalues, UnsupportedError
from jitgrad.core.types import Type
from jitgrad.prims import alloc
from jitgrad.prims.indexing import getitem
from jitgrad.prims.linalg import matmul, solve
from jitgrad.prims.primitive import defjvp, defvjp, no_tangent_rule, primitive
from jitgrad.prims.shape import transpose


def _inverse_gaps_impl(w):
    gaps = w[None, :] - w[:, None]
    off = ~np.eye(len(w), dtype=bool)
    if np.any(gaps[off] == 0.0):
        raise ValueError("jitgrad: two eigenvalues (or singular values) are equal: the "
                         "eigenvectors' (singular vectors') derivative is undefined there")
    out = np.zeros_like(gaps)
    out[off] = 1.0 / gaps[off]
    return out


def _eigh_vectors_impl(a):
    return np.linalg.eigh(a)[1]


def _svd_factor(which):
    def impl(a, full=False):
        if full and a.shape[0] != a.shape[1]:
            raise ValueError("jitgrad: np.linalg.svd with full_matrices=True of a non-square "
                             "matrix (pass full_matrices=False)")
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        return u if which == "u" else vt
    return impl


# where the build typed eig real and the values are complex (`ComplexEigenvalues`: a
# gradient's caller builds again with complex eigenvalues)
_COMPLEX_EIGENVALUES = ("jitgrad: np.linalg.eig of a matrix with complex eigenvalues, built "
                        "real (take np.linalg.eig(a + 0j) for complex ones)")


def _eig_part(k):
    def impl(a):
        w, v = np.linalg.eig(a)
        if np.iscomplexobj(w):
            if np.any(w.imag != 0.0):
                raise ComplexEigenvalues(_COMPLEX_EIGENVALUES)
            w, v = w.real, v.real
        return (w, v)[k]
    return impl


def _sqrtm_impl(a):
    if np.max(np.abs(a - a.T)) > 1e-10 * np.max(np.abs(a)):  # as the run time checks
        raise ValueError("jitgrad: scipy.linalg.sqrtm of a matrix that is not symmetric")
    w, v = np.linalg.eigh(a)
    if np.any(w <= 0.0):
        raise ValueError("jitgrad: scipy.linalg.sqrtm of a matrix that is not positive definite")
    return (v * np.sqrt(w)) @ v.T


def _sqrtm_adjoint_impl(x, g):
    """Y with ``X Y + Y X = G``, X symmetric positive definite (its square root's factors)."""
    w, v = np.linalg.eigh(x)
    return v @ ((v.T @ g @ v) / (w[:, None] + w[None, :])) @ v.T


def _companion_impl(p):
    if p[0] == 0.0 or p[-1] == 0.0:
        raise ValueError("jitgrad: np.roots of coefficients whose first or last is zero "
                         "(NumPy strips them; jitgrad takes nonzero end coefficients)")
    n = len(p) - 1
    out = np.eye(n, k=-1)
    out[0, :] = -p[1:] / p[0]
    return out


def _pseudo_covariance_derivative(*args, **kwargs):
    raise UnsupportedError(
        "the derivative of scipy.stats.multivariate_normal with allow_singular=True with "
        "respect to its covariance: the density jumps where the covariance's rank changes, and "
        "its pseudo-inverse (through eigh) has no derivative at a singular covariance; "
        "differentiate with respect to x and mean, or use allow_singular=False for a "
        "covariance of full rank")


def _vector(ts, p):
    return Type("f", 1)


def _matrix(ts, p):
    return Type("f", 2)


inverse_gaps = primitive("inverse_gaps", _inverse_gaps_impl, _matrix)
# multivariate_normal's covariance with allow_singular=True: itself, its derivative refused
pseudo_covariance = primitive("pseudo_covariance", lambda a: a, _matrix)
defvjp("pseudo_covariance", _pseudo_covariance_derivative)
defjvp("pseudo_covariance", _pseudo_covariance_derivative)
eigvalsh = primitive("eigvalsh", np.linalg.eigvalsh, _vector)
eigh_vectors = primitive("eigh_vectors", _eigh_vectors_impl, _matrix)
eigh_vectors_upper = primitive("eigh_vectors_upper", lambda b: np.linalg.eigh(b.T, "U")[1],
                               _matrix)
eig_values = primitive("eig_values", _eig_part(0), _vector)
eig_vectors = primitive("eig_vectors", _eig_part(1), _matrix)
svdvals = primitive("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), _vector)
svd_u = primitive("svd_u", _svd_factor("u"), _matrix)
svd_vt = primitive("svd_vt", _svd_factor("vt"), _matrix)
qr_q = primitive("qr_q", lambda a: np.linalg.qr(a)[0], _matrix)
qr_r = primitive("qr_r", lambda a: np.linalg.qr(a)[1], _matrix)
pinv = primitive("pinv", np.linalg.pinv, _matrix)
sqrtm = primitive("sqrtm", _sqrtm_impl, _matrix)
sqrtm_adjoint = primitive("sqrtm_adjoint", _sqrtm_adjoint_impl, _matrix)
companion = primitive("companion", _companion_impl, _matrix)
matrix_rank = primitive("matrix_rank", np.linalg.matrix_rank, lambda ts, p: Type("i", 0),
                        differentiable=False, zero_tangent=True)


def _cholesky_fails_impl(a):
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return True
    return False


# whether a Cholesky factorisation of ``a`` fails (not positive definite): the test a
# ``try``/``except LinAlgError`` around one makes at run time (`build_stmts.guarded_try`)
cholesky_fails = primitive("cholesky_fails", _cholesky_fails_impl, lambda ts, p: Type("b", 0),
                           differentiable=False, zero_tangent=True)


def _eye_like(a, axis=0):
    return alloc.eye(np.shape(a)[axis])


def diag_of(v):
    """The square matrix with ``v`` on its diagonal."""
    return _eye_like(v) * v


def diagonal_of(m):
    return np.diagonal(m)


# ---- inverse_gaps: F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it


def _inverse_gaps_vjp(g, ans, w):
    h = g * ans * ans  # dF[i, j] = F[i, j]^2 (dw[i] - dw[j])
    return np.sum(h, axis=1) - np.sum(h, axis=0)


def _inverse_gaps_jvp(t, ans, w):
    return ans * ans * (np.reshape(t, (-1, 1)) - np.reshape(t, (1, -1)))


defvjp("inverse_gaps", _inverse_gaps_vjp)
defjvp("inverse_gaps", _inverse_gaps_jvp)

# ---- eigh: A = V diag(w) V^T, A read from its lower triangle


def fold_lower(g):
    """The gradient in the entries eigh reads: ``g`` is the gradient with respect to the
    symmetric matrix S that the lower triangle makes (S[i, j] = S[j, i] = A[i, j] for i >= j),
    so A[i, j] below the diagonal gets g[i, j] + g[j, i], the diagonal g[i, i], above it 0."""
    return np.tril(g + transpose(g)) - g * _eye_like(g)


def _symmetric_from_lower(t):
    return np.tril(t) + transpose(np.tril(t, -1))


def _eigvalsh_vjp(g, ans, a):
    v = eigh_vectors(a)
    return fold_lower(matmul(v * g, transpose(v)))


def _eigh_vectors_vjp(g, ans, a):
    f = inverse_gaps(eigvalsh(a))
    return fold_lower(matmul(matmul(ans, f * matmul(transpose(ans), g)), transpose(ans)))


def _eigvalsh_jvp(t, ans, a):
    v = eigh_vectors(a)
    return diagonal_of(matmul(matmul(transpose(v), _symmetric_from_lower(t)), v))


def _eigh_vectors_jvp(t, ans, a):
    f = inverse_gaps(eigvalsh(a))
    return matmul(ans, f * matmul(matmul(transpose(ans), _symmetric_from_lower(t)), ans))


defvjp("eigvalsh", _eigvalsh_vjp)
defvjp("eigh_vectors", _eigh_vectors_vjp)
defjvp("eigvalsh", _eigvalsh_jvp)
defjvp("eigh_vectors", _eigh_vectors_jvp)
# eigh(a, "U") is eigh_vectors_upper(a.T): the same matrix as eigh_vectors(a.T) and the same
# rules (on ``ans``, whichever signs LAPACK gave), NumPy's signs from LAPACK's upper path
defvjp("eigh_vectors_upper", _eigh_vectors_vjp)
defjvp("eigh_vectors_upper", _eigh_vectors_jvp)

# ---- eig: A V = V diag(w), real w, columns of V of unit length


def _eig_values_vjp(g, ans, a):
    v = eig_vectors(a)
    return solve(transpose(v), matmul(diag_of(g), transpose(v)))  # V^-T diag(g) V^T


def _eig_vectors_vjp(g, ans, a):
    """dV = V (F o (V^-1 dA V)), less each column's part along itself (unit length kept)."""
    f = inverse_gaps(eig_values(a))
    g = g - ans * diagonal_of(matmul(transpose(ans), g))
    return solve(transpose(ans), matmul(f * matmul(transpose(ans), g), transpose(ans)))


def _eig_values_jvp(t, ans, a):
    v = eig_vectors(a)
    return diagonal_of(solve(v, matmul(t, v)))


defvjp("eig_values", _eig_values_vjp)
defvjp("eig_vectors", _eig_vectors_vjp)
defjvp("eig_values", _eig_values_jvp)
def _eig_vectors_jvp(t, ans, a):
    f = inverse_gaps(eig_values(a))
    raw = matmul(ans, f * solve(ans, matmul(t, ans)))
    return raw - ans * diagonal_of(matmul(transpose(ans), raw))


defjvp("eig_vectors", _eig_vectors_jvp)

# ---- the thin SVD: A = U diag(s) V^T, U m x k, V n x k, k = min(m, n)


def _svdvals_vjp(g, ans, a):
    u, vt = svd_u(a), svd_vt(a)
    return matmul(u * g, vt)


def _svd_u_vjp(g, ans, a, full=False):
    s, vt = svdvals(a), svd_vt(a)
    f = inverse_gaps(s * s)
    utg = matmul(transpose(ans), g)
    inner = matmul(ans, (f * (utg - transpose(utg))) * s)
    outer_part = (g - matmul(ans, utg)) / s  # (I - U U^T) G S^-1
    return matmul(inner + outer_part, vt)


def _svd_vt_vjp(g, ans, a, full=False):
    s, u = svdvals(a), svd_u(a)
    v, gv = transpose(ans), transpose(g)
    f = inverse_gaps(s * s)
    vtg = matmul(ans, gv)
    inner = matmul(u, np.reshape(s, (-1, 1)) * (f * (vtg - transpose(vtg))))
    outer_part = matmul(u / s, transpose(gv - matmul(v, vtg)))  # U S^-1 G_V^T (I - V V^T)
    return matmul(inner, ans) + outer_part


def _svd_parts(t, a):
    u, s, vt = svd_u(a), svdvals(a), svd_vt(a)
    return u, s, vt, matmul(matmul(transpose(u), t), transpose(vt))


def _svdvals_jvp(t, ans, a):
    return diagonal_of(_svd_parts(t, a)[3])


def _svd_u_jvp(t, ans, a, full=False):
    u, s, vt, p = _svd_parts(t, a)
    f = inverse_gaps(s * s)
    inner = matmul(u, f * (p * s + np.reshape(s, (-1, 1)) * transpose(p)))
    rest = matmul(t, transpose(vt)) - matmul(u, p)  # (I - U U^T) dA V
    return inner + rest / s


def _svd_vt_jvp(t, ans, a, full=False):
    u, s, vt, p = _svd_parts(t, a)
    f = inverse_gaps(s * s)
    inner = matmul(transpose(vt), f * (np.reshape(s, (-1, 1)) * p + transpose(p) * s))
    rest = matmul(transpose(t), u) - matmul(transpose(vt), transpose(p))  # (I - V V^T) dA^T U
    return transpose(inner + rest / s)


defvjp("svdvals", _svdvals_vjp)
defvjp("svd_u", _svd_u_vjp)
defvjp("svd_vt", _svd_vt_vjp)
defjvp("svdvals", _svdvals_jvp)
defjvp("svd_u", _svd_u_jvp)
defjvp("svd_vt", _svd_vt_jvp)

# ---- the reduced QR of a matrix with m >= n: A = Q R, R square upper triangular


def _copy_lower_to_upper(m):
    return np.tril(m) + transpose(np.tril(m, -1))


def _qr_adjoint(gq, gr, q, r):
    """(G_Q + Q copyltu(M)) R^-T with M = R G_R^T - G_Q^T Q (either G may be zero)."""
    m = 0.0
    if gr is not None:
        m = matmul(r, transpose(gr))
    if gq is not None:
        m = m - matmul(transpose(gq), q)
    b = matmul(q, _copy_lower_to_upper(m))
    if gq is not None:
        b = b + gq
    return transpose(solve(r, transpose(b)))


defvjp("qr_q", lambda g, ans, a: _qr_adjoint(g, None, ans, qr_r(a)))
defvjp("qr_r", lambda g, ans, a: _qr_adjoint(None, g, qr_q(a), ans))
def _qr_tangents(t, a):
    """dA R^-1 and X - Omega, where X = Q^T dA R^-1 = Omega + dR R^-1 splits into a skew
    part Omega (Q^T dQ) and an upper triangular one."""
    q, r = qr_q(a), qr_r(a)
    da_rinv = transpose(solve(transpose(r), transpose(t)))
    x = matmul(transpose(q), da_rinv)
    low = np.tril(x, -1)
    return q, r, da_rinv, x - (low - transpose(low))


def _qr_q_jvp(t, ans, a):
    q, _, da_rinv, upper = _qr_tangents(t, a)
    return da_rinv - matmul(q, upper)


def _qr_r_jvp(t, ans, a):
    _, r, _, upper = _qr_tangents(t, a)
    return matmul(upper, r)


defjvp("qr_q", _qr_q_jvp)
defjvp("qr_r", _qr_r_jvp)

# ---- pinv, where the rank does not change (any full-rank matrix)


def _pinv_vjp(g, ans, a):
    p, pt = ans, transpose(ans)
    gt = transpose(g)
    left = _eye_like(a) - matmul(a, p)   # I - A A+ (m x m)
    right = _eye_like(a, 1) - matmul(p, a)  # I - A+ A (n x n)
    return (-matmul(matmul(pt, g), pt) + matmul(matmul(left, gt), matmul(p, pt))
            + matmul(matmul(pt, p), matmul(gt, right)))


def _pinv_jvp(t, ans, a):
    p = ans
    tt = transpose(t)
    left = _eye_like(a) - matmul(a, p)
    right = _eye_like(a, 1) - matmul(p, a)
    return (-matmul(matmul(p, t), p) + matmul(matmul(p, transpose(p)), matmul(tt, left))
            + matmul(matmul(right, tt), matmul(transpose(p), p)))


defvjp("pinv", _pinv_vjp)
defjvp("pinv", _pinv_jvp)

# ---- sqrtm of a symmetric positive definite matrix: X X = A


def _refuse_second(g, ans, x, h):
    raise UnsupportedError("the second derivative of scipy.linalg.sqrtm (jitgrad "
                           "differentiates it once)")


defvjp("sqrtm", lambda g, ans, a: sqrtm_adjoint(ans, g))
defjvp("sqrtm", lambda t, ans, a: sqrtm_adjoint(ans, t))
defvjp("sqrtm_adjoint", _refuse_second, _refuse_second)
defjvp("sqrtm_adjoint", no_tangent_rule("the derivative of scipy.linalg.sqrtm"),
       no_tangent_rule("the derivative of scipy.linalg.sqrtm"))

# ---- companion: the matrix whose eigenvalues are the roots of the polynomial p (np.roots)


def _entry(v, k):
    return getitem(v, k, index_spec=("i",))


def _tail(v):
    return getitem(v, 1, index_spec=(("s", True, False, False),))  # v[1:]


def _companion_vjp(g, ans, p):
    """Row 0 is -p[1:] / p[0]; the rows below are constant."""
    first, lead = _entry(g, 0), _entry(p, 0)
    return np.concatenate([np.reshape(np.sum(first * _tail(p)) / (lead * lead), (1,)),
                           -first / lead])


def _companion_jvp(t, ans, p):
    lead = _entry(p, 0)
    first = -_tail(t) / lead + _tail(p) * (_entry(t, 0) / (lead * lead))
    return np.concatenate([np.reshape(first, (1, -1)), _tail(np.zeros_like(ans))])


defvjp("companion", _companion_vjp)
defjvp("companion", _companion_jvp)
