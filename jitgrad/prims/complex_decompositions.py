"""Decompositions of a complex matrix ``A = X + iY``, as real primitives of its two parts
``(X, Y)``: ``np.linalg.svd`` (``csvdvals``, ``csvd_u_re``/``_im``, ``csvd_vt_re``/``_im``),
``np.linalg.eigh`` of a Hermitian matrix read from its lower triangle (``ceigvalsh``,
``ceigh_vectors_re``/``_im``) and ``np.linalg.eig`` of any square matrix (``ceig_values_re``/
``_im``, ``ceig_vectors_re``/``_im``); ``inverse_square_gaps`` is eig's helper.

jitgrad computes complex values as pairs of real values (`lang.complex_pairs`), so each result
is one real primitive of the two parts, computed by forming the complex matrix at the call
(NumPy's LAPACK, and Numba's, take complex128). The adjoint rules are those of the real
decompositions (`decompositions`) written in complex arithmetic on pairs of real matrices:
Giles's eig and eigh, and the complex SVD of Wan and Zhang ("Automatic differentiation for
complex valued SVD", 2019), derived here for the cotangent ``dL/dRe + i dL/dIm`` of each result
and giving ``dL/dX + i dL/dY``. They are written with real primitives (``matmul``, ``solve``,
``inverse_gaps``) on the results, so second derivatives follow from the same rules.

Conventions (what is refused, and what the derivative is):

* Eigenvectors and singular vectors are defined up to a phase per column (NumPy's is LAPACK's
  choice): the derivative of such a vector is that of a gauge-invariant function of it (``abs``
  of its entries, ``u @ diag(s) @ vh``, projectors ``v v^H``...), as JAX's and autograd's are.
  For a function that depends on the phase, no derivative exists; jitgrad cannot tell the
  difference and gives the gauge-invariant rule's value (said in docs/supported.md).
  Singular vectors keep the phase of u relative to v (``u_k^H A v_k`` real), the one
  combination the phase freedom leaves fixed.
* Distinct eigenvalues (singular values) for the vectors' derivative: with two equal, the run
  time raises ValueError (``inverse_gaps``, ``inverse_square_gaps``). Values alone never need
  that.
* eigh reads the lower triangle, and the real part of the diagonal (LAPACK's ``zheevd``); the
  gradient of the entries it does not read is zero. ``UPLO='U'`` is eigh of the conjugate
  transpose (the same eigenvalues; eigenvectors up to phase, which NumPy's upper path may
  choose otherwise).
* svd's factors are the thin ones; ``full_matrices=True`` only of a square matrix (raised at
  run time otherwise), as the real ``svd_u``.
* No tangent rules: forward mode refuses them (`primitive.no_tangent_rule`).
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.types import Type
from jitgrad.prims.decompositions import diag_of, diagonal_of, fold_lower, inverse_gaps
from jitgrad.prims.indexing import getitem
from jitgrad.prims.linalg import matmul, solve
from jitgrad.prims.primitive import PRIMITIVES, defvjp, primitive
from jitgrad.prims.shape import transpose


def _complex(x, y):
    return np.asarray(x, dtype=float) + 1j * np.asarray(y, dtype=float)


def _square_for_full(x, full):
    if full and x.shape[0] != x.shape[1]:
        raise ValueError("jitgrad: np.linalg.svd with full_matrices=True of a non-square "
                         "matrix (pass full_matrices=False)")


def _svd_part(k, part):
    def impl(x, y, full=False):
        _square_for_full(np.asarray(x), full)
        out = np.linalg.svd(_complex(x, y), full_matrices=False)[k]
        return out.imag.copy() if part else out.real.copy()
    return impl


def _eigh_part(k, part):
    def impl(x, y):
        out = np.linalg.eigh(_complex(x, y))[k]
        return out.imag.copy() if part else out.real.copy()
    return impl


def _eig_part(k, part):
    def impl(x, y):
        out = np.linalg.eig(_complex(x, y))[k].astype(complex)
        return out.imag.copy() if part else out.real.copy()
    return impl


def _inverse_square_gaps_impl(wr, wi):
    dr = wr[None, :] - wr[:, None]
    di = wi[None, :] - wi[:, None]
    d2 = dr * dr + di * di
    off = ~np.eye(len(wr), dtype=bool)
    if np.any(d2[off] == 0.0):
        raise ValueError("jitgrad: two eigenvalues are equal: the eigenvectors' derivative "
                         "is undefined there")
    out = np.zeros_like(d2)
    out[off] = 1.0 / d2[off]
    return out


def _vector(ts, p):
    return Type("f", 1)


def _matrix(ts, p):
    return Type("f", 2)


# name -> (NumPy's value, the type of the result): the rows, each read by the backend's
# lowering and run time under the same name
RESULTS = {
    "csvdvals": (_svd_part(1, 0), _vector),
    "csvd_u_re": (_svd_part(0, 0), _matrix), "csvd_u_im": (_svd_part(0, 1), _matrix),
    "csvd_vt_re": (_svd_part(2, 0), _matrix), "csvd_vt_im": (_svd_part(2, 1), _matrix),
    "ceigvalsh": (_eigh_part(0, 0), _vector),
    "ceigh_vectors_re": (_eigh_part(1, 0), _matrix),
    "ceigh_vectors_im": (_eigh_part(1, 1), _matrix),
    "ceig_values_re": (_eig_part(0, 0), _vector), "ceig_values_im": (_eig_part(0, 1), _vector),
    "ceig_vectors_re": (_eig_part(1, 0), _matrix), "ceig_vectors_im": (_eig_part(1, 1), _matrix),
}
for _name, (_impl, _type) in RESULTS.items():
    primitive(_name, _impl, _type)
# 1 / |w[j] - w[i]|^2 off the diagonal, 0 on it (raises where two are equal)
inverse_square_gaps = primitive("inverse_square_gaps", _inverse_square_gaps_impl, _matrix)


def _inverse_square_gaps_vjp(k):
    """dQ[i, j] = -2 Q[i, j]^2 (d[i, j] . dd[i, j]), d = w[j] - w[i] (part k's gaps)."""
    def vjp(g, ans, wr, wi):
        w = (wr, wi)[k]
        d = np.reshape(w, (1, -1)) - np.reshape(w, (-1, 1))
        h = g * ans * ans * d * -2.0
        return np.sum(h, axis=0) - np.sum(h, axis=1)
    return vjp


defvjp("inverse_square_gaps", _inverse_square_gaps_vjp(0), _inverse_square_gaps_vjp(1))

# ---- complex matrices as pairs (re, im) of real ones


def _mm(a, b):
    (ar, ai), (br, bi) = a, b
    return matmul(ar, br) - matmul(ai, bi), matmul(ar, bi) + matmul(ai, br)


def _h(a):
    """The conjugate transpose."""
    return transpose(a[0]), -transpose(a[1])


def _plus(a, b):
    return a[0] + b[0], a[1] + b[1]


def _minus(a, b):
    return a[0] - b[0], a[1] - b[1]


def _times(a, f):
    """Entry by entry by the real ``f`` (or columns by a real vector)."""
    return a[0] * f, a[1] * f


def _zero_part(g):
    return np.zeros_like(g)


def _rows(m, start, stop):
    """``m[start:stop]`` (``stop`` None: to the end)."""
    if stop is None:
        return getitem(m, start, index_spec=(("s", True, False, False),))
    return getitem(m, start, stop, index_spec=(("s", True, True, False),))


def _solve(a, b):
    """``a^-1 b`` for complex ``a`` (n x n) and ``b``: the real system of twice the size,
    [[Ar, -Ai], [Ai, Ar]] [Xr; Xi] = [Br; Bi]."""
    (ar, ai), (br, bi) = a, b
    n = np.shape(ar)[0]
    big = np.concatenate([np.concatenate([ar, -ai], axis=1),
                          np.concatenate([ai, ar], axis=1)], axis=0)
    x = solve(big, np.concatenate([br, bi], axis=0))
    return _rows(x, 0, n), _rows(x, n, None)


# ---- svd: A = U diag(s) V^H, U m x k, V n x k, k = min(m, n); NumPy returns Vh = V^H


def _svd_adjoint(x, y, gu=None, gs=None, gvh=None, full=False):
    """dL/dX + i dL/dY from the cotangents of U, s and Vh (each may be None):
    U [(J + J^H) S + S (K + K^H) + diag(gs) + i diag(Im J0 - Im K0) / (2 S)] V^H
    + (I - U U^H) G_U S^-1 V^H + U S^-1 G_Vh (I - V V^H), with J0 = U^H G_U, J = F o J0,
    K0 = V^H G_V, K = F o K0, F[i, j] = 1 / (s[j]^2 - s[i]^2)."""
    u = (PRIMITIVES["csvd_u_re"](x, y, full=full), PRIMITIVES["csvd_u_im"](x, y, full=full))
    vh = (PRIMITIVES["csvd_vt_re"](x, y, full=full), PRIMITIVES["csvd_vt_im"](x, y, full=full))
    s = PRIMITIVES["csvdvals"](x, y)
    col = np.reshape(s, (-1, 1))
    out = None
    if gu is not None or gvh is not None:
        f = inverse_gaps(s * s)
    if gs is not None:
        out = matmul(u[0] * gs, vh[0]) - matmul(u[1] * gs, vh[1]), \
            matmul(u[0] * gs, vh[1]) + matmul(u[1] * gs, vh[0])
    if gu is not None:
        j0 = _mm(_h(u), gu)
        j = _times(j0, f)
        inner = _times(_plus(j, _h(j)), s)
        inner = inner[0], inner[1] + diag_of(diagonal_of(j0[1]) / (2.0 * s))
        outer_part = _times(_minus(gu, _mm(u, j0)), 1.0 / s)  # (I - U U^H) G_U S^-1
        part = _mm(_plus(_mm(u, inner), outer_part), vh)
        out = part if out is None else _plus(out, part)
    if gvh is not None:
        v = _h(vh)
        k0 = _h(_mm(gvh, v))  # V^H G_V, G_V = G_Vh^H
        k = _times(k0, f)
        inner = _times(_plus(k, _h(k)), col)
        inner = inner[0], inner[1] - diag_of(diagonal_of(k0[1]) / (2.0 * s))
        rest = _minus(gvh, _mm(_mm(gvh, v), vh))  # G_Vh (I - V V^H)
        part = _plus(_mm(_mm(u, inner), vh), _mm(_times(u, 1.0 / s), rest))
        out = part if out is None else _plus(out, part)
    return out


def _svd_rule(which, k):
    """The rule of the result ``which`` ("u", "s", "vt"; part ``k`` of it) for input ``x``
    (``grad_part`` 0) or ``y`` (1)."""
    def rules(grad_part):
        def vjp(g, ans, x, y, full=False):
            z = _zero_part(g)
            cot = g if which == "s" else ((g, z) if k == 0 else (z, g))
            key = {"u": "gu", "s": "gs", "vt": "gvh"}[which]
            return _svd_adjoint(x, y, full=full, **{key: cot})[grad_part]
        return vjp
    return rules(0), rules(1)


defvjp("csvdvals", *_svd_rule("s", 0))
defvjp("csvd_u_re", *_svd_rule("u", 0))
defvjp("csvd_u_im", *_svd_rule("u", 1))
defvjp("csvd_vt_re", *_svd_rule("vt", 0))
defvjp("csvd_vt_im", *_svd_rule("vt", 1))

# ---- eigh: H = V diag(w) V^H, H read from the lower triangle of A (and Re of its diagonal)


def _eigh_adjoint(x, y, gw=None, gv=None):
    """G_H = V (diag(gw) + F o (V^H G_V)) V^H, F[i, j] = 1 / (w[j] - w[i]), folded onto
    the entries eigh reads: H[i, j] = A[i, j] and H[j, i] = conj A[i, j] below the diagonal,
    so dL/dA[i, j] = G_H[i, j] + conj G_H[j, i] there, Re G_H[i, i] on it, 0 above."""
    v = (PRIMITIVES["ceigh_vectors_re"](x, y), PRIMITIVES["ceigh_vectors_im"](x, y))
    w = PRIMITIVES["ceigvalsh"](x, y)
    inner = None
    if gw is not None:
        inner = (diag_of(gw), _zero_part(diag_of(gw)))
    if gv is not None:
        part = _times(_mm(_h(v), gv), inverse_gaps(w))
        inner = part if inner is None else _plus(inner, part)
    gr, gi = _mm(_mm(v, inner), _h(v))
    return fold_lower(gr), np.tril(gi - transpose(gi), -1)


def _eigh_rule(which, k):
    def rules(grad_part):
        def vjp(g, ans, x, y):
            if which == "w":
                return _eigh_adjoint(x, y, gw=g)[grad_part]
            z = _zero_part(g)
            return _eigh_adjoint(x, y, gv=(g, z) if k == 0 else (z, g))[grad_part]
        return vjp
    return rules(0), rules(1)


defvjp("ceigvalsh", *_eigh_rule("w", 0))
defvjp("ceigh_vectors_re", *_eigh_rule("v", 0))
defvjp("ceigh_vectors_im", *_eigh_rule("v", 1))

# ---- eig: A V = V diag(w), columns of V of unit length


def _eig_adjoint(x, y, gw=None, gv=None):
    """V^-H (diag(gw) + conj(F) o (V^H G')) V^H, F[i, j] = 1 / (w[j] - w[i]), where
    G' = G_V - V diag(Re diag(V^H G_V)) keeps each column's length (dV = V (F o V^-1 dA V),
    less each column's part along itself)."""
    v = (PRIMITIVES["ceig_vectors_re"](x, y), PRIMITIVES["ceig_vectors_im"](x, y))
    inner = None
    if gw is not None:
        inner = (diag_of(gw[0]), diag_of(gw[1]))
    if gv is not None:
        wr, wi = PRIMITIVES["ceig_values_re"](x, y), PRIMITIVES["ceig_values_im"](x, y)
        q = inverse_square_gaps(wr, wi)
        dr = np.reshape(wr, (1, -1)) - np.reshape(wr, (-1, 1))
        di = np.reshape(wi, (1, -1)) - np.reshape(wi, (-1, 1))
        along = np.sum(v[0] * gv[0] + v[1] * gv[1], axis=0)  # Re diag(V^H G_V)
        gv = _minus(gv, _times(v, along))
        a0 = _mm(_h(v), gv)
        cr, ci = dr * q, di * q  # conj(F)
        part = (a0[0] * cr - a0[1] * ci, a0[0] * ci + a0[1] * cr)
        inner = part if inner is None else _plus(inner, part)
    return _solve(_h(v), _mm(inner, _h(v)))


def _eig_rule(which, k):
    def rules(grad_part):
        def vjp(g, ans, x, y):
            z = _zero_part(g)
            cot = (g, z) if k == 0 else (z, g)
            return _eig_adjoint(x, y, **{"gw" if which == "w" else "gv": cot})[grad_part]
        return vjp
    return rules(0), rules(1)


defvjp("ceig_values_re", *_eig_rule("w", 0))
defvjp("ceig_values_im", *_eig_rule("w", 1))
defvjp("ceig_vectors_re", *_eig_rule("v", 0))
defvjp("ceig_vectors_im", *_eig_rule("v", 1))
