"""Products and linear algebra: ``matmul``, ``outer``, and ``np.linalg``'s ``inv``, ``solve``,
``det``, ``slogdet`` (as ``logabsdet`` and ``signdet``) and ``cholesky``, on float matrices
(``inv`` and ``det`` on stacks of them too).

``matmul`` covers vector and matrix operands alike (vector @ vector is a dot product), and its
rules follow the operands' ranks. The adjoints are the standard ones (Giles, "An extended
collection of matrix derivative results"), with A^-T written as ``transpose(inv(A))``; the
tangents are their forward counterparts. ``signdet`` is piecewise constant: a zero tangent.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.types import Type, promote_kinds
from jitgrad.prims import alloc, reductions
from jitgrad.prims.primitive import defjvp, defvjp, primitive
from jitgrad.prims.shape import transpose

# ----------------------------------------------------------------------------- products


def _matmul_type(ts, p):
    a, b = ts
    ndim = {(1, 1): 0, (1, 2): 1, (2, 1): 1, (2, 2): 2}[(a.ndim, b.ndim)]
    return Type(promote_kinds("f", a.kind, b.kind), ndim)


matmul = primitive("matmul", np.matmul, _matmul_type, contracts=True)
outer = primitive("outer", np.outer, lambda ts, p: Type("f", 2), outer_of="mul")


def _matmul_a(g, ans, a, b):
    if np.ndim(b) == 1:
        return outer(g, b) if np.ndim(a) == 2 else g * b
    return matmul(g, transpose(b))


def _matmul_b(g, ans, a, b):
    if np.ndim(a) == 1:
        return outer(a, g) if np.ndim(b) == 2 else g * a
    return matmul(transpose(a), g)


defvjp("matmul", _matmul_a, _matmul_b)
defvjp("outer", lambda g, ans, x, y: matmul(g, y), lambda g, ans, x, y: matmul(x, g))
defjvp("matmul", lambda t, ans, a, b: matmul(t, b), lambda t, ans, a, b: matmul(a, t))
defjvp("outer", lambda t, ans, x, y: outer(t, y), lambda t, ans, x, y: outer(x, t))

# ----------------------------------------------------------------------------- np.linalg

# Linear algebra Numba compiles (LAPACK through SciPy), on float matrices.
# inv and det take a stack of matrices too (rank 3), each matrix on its own, as NumPy.
inv = primitive("inv", np.linalg.inv, lambda ts, p: Type("f", ts[0].ndim), square=True)
solve = primitive("solve", np.linalg.solve, lambda ts, p: Type("f", ts[1].ndim))
det = primitive("det", np.linalg.det, lambda ts, p: Type("f", ts[0].ndim - 2))
cholesky = primitive("cholesky", np.linalg.cholesky, lambda ts, p: Type("f", 2), square=True)
logabsdet = primitive("logabsdet", lambda a: np.linalg.slogdet(a)[1], lambda ts, p: Type("f", 0))
signdet = primitive("signdet", lambda a: np.linalg.slogdet(a)[0], lambda ts, p: Type("f", 0),
                    differentiable=False, zero_tangent=True)


def _solve_a(g, ans, a, b):
    gb = solve(transpose(a), g)
    return -(outer(gb, ans) if np.ndim(ans) == 1 else matmul(gb, transpose(ans)))


# np.linalg.cholesky reads the lower triangle only (LAPACK's potrf with UPLO='L'), as eigh
# does (`decompositions`): the factor is that of the symmetric matrix S the lower triangle
# makes, so the adjoint with respect to S is folded onto the lower triangle (an entry below the
# diagonal gets S's two, one above it none), as finite differences of NumPy's cholesky give.
# For a matrix built symmetric (``x @ x.T``) the chain rule gives JAX's symmetric gradient.


def _cholesky_vjp(g, ans, a):
    """A = L L^T: Phi(L^T g) keeps the lower triangle with the diagonal halved;
    S = L^-T Phi L^-1; the gradient with respect to the symmetric matrix is S made
    symmetric, (S + S^T) / 2, and folded onto the lower triangle: tril(S + S^T) with
    the diagonal S's."""
    x = matmul(transpose(ans), g)
    eye = alloc.eye(np.shape(x)[0])
    phi = np.tril(x) - eye * x * 0.5
    l_inv = inv(ans)
    s = matmul(matmul(transpose(l_inv), phi), l_inv)
    return np.tril(s + transpose(s)) - eye * s


def _cholesky_jvp(t, ans, a):
    """A = L L^T: dL = L Phi(L^-1 dS L^-T), Phi keeping the lower triangle, diagonal halved,
    dS the symmetric matrix the lower triangle of dA makes."""
    l_inv = inv(ans)
    t = np.tril(t) + transpose(np.tril(t, -1))
    y = matmul(matmul(l_inv, t), transpose(l_inv))
    phi = np.tril(y) - alloc.eye(np.shape(y)[0]) * y * 0.5
    return matmul(ans, phi)


def _inv_vjp(g, ans, a):
    if np.ndim(ans) == 2:
        return -matmul(matmul(transpose(ans), g), transpose(ans))
    ans_t = np.swapaxes(ans, 1, 2)  # a stack: each matrix's rule (np.matmul of stacks)
    return -np.matmul(np.matmul(ans_t, g), ans_t)


def _inv_jvp(t, ans, a):
    if np.ndim(ans) == 2:
        return -matmul(matmul(ans, t), ans)
    return -np.matmul(np.matmul(ans, t), ans)


def _det_vjp(g, ans, a):
    if np.ndim(a) == 2:
        return g * ans * transpose(inv(a))
    return np.reshape(g * ans, (-1, 1, 1)) * np.swapaxes(inv(a), 1, 2)


def _det_jvp(t, ans, a):
    if np.ndim(a) == 2:
        return ans * reductions.sum_all(transpose(inv(a)) * t)
    return ans * np.sum(np.sum(np.swapaxes(inv(a), 1, 2) * t, axis=2), axis=1)


defvjp("inv", _inv_vjp)
defvjp("solve", _solve_a, lambda g, ans, a, b: solve(transpose(a), g))
defvjp("det", _det_vjp)
defvjp("logabsdet", lambda g, ans, a: g * transpose(inv(a)))
defvjp("cholesky", _cholesky_vjp)
defjvp("inv", _inv_jvp)
defjvp("solve", lambda t, ans, a, b: -solve(a, matmul(t, ans)),
       lambda t, ans, a, b: solve(a, t))
defjvp("det", _det_jvp)
defjvp("logabsdet", lambda t, ans, a: reductions.sum_all(transpose(inv(a)) * t))
defjvp("cholesky", _cholesky_jvp)
