"""``np.linalg``'s decompositions of a complex matrix, and what is made of them: ``svd``
(also ``compute_uv=False``), ``eigh``/``eigvalsh`` (Hermitian, read from one triangle),
``eig``/``eigvals``, and the matrix norms of singular values (``ord=2, -2, 'nuc'``), of one
matrix or of a stack of them (rank 3 or more: each matrix in turn, in a loop,
`numpy_written.complex_over_stack`); ``solve`` and ``lstsq`` through the real system of twice
the size (exact: the embedding keeps norms).

Takes `Complex` values (`complex_pairs`), or a real matrix where NumPy gives complex results
(``eig``: a real matrix's eigenvalues may be complex, so NumPy's dtype depends on the values;
jitgrad's real ``np.linalg.eig`` stays real, and ``np.linalg.eig(a + 0j)`` is this one).
Each result is the pair of real primitives of `prims.complex_decompositions`, whose docstring
states the conventions (eigenvectors up to phase: derivatives of gauge-invariant functions;
distinct eigenvalues for the vectors' derivative). Fills `complex_pairs.FUNCTIONS`.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import complex_numpy, complex_pairs
from jitgrad.lang import numpy_written as W
from jitgrad.lang.complex_pairs import FUNCTIONS, lift, pair
from jitgrad.lang.numpy_linalg import EighResult, EigResult, SVDResult
from jitgrad.lang.symbolic import NUMPY, loc_of, record, records, written


def _parts(z):
    """The two parts of the complex matrix (or stack) ``z``, each a float array of its shape."""
    z = lift(z)
    re, im = complex_pairs.full(z.re, z.im), complex_pairs.full(z.im, z.re)
    return (re if not records(re) or re.type.kind == "f" else re * 1.0,
            im if not records(im) or im.type.kind == "f" else im * 1.0)


def _refuse(what, x):
    raise UnsupportedError(what, loc_of(*_parts(x)))


def _each_matrix(numpy_fn, handler, kinds):
    """``handler`` (of one complex matrix) made to take a stack of them (rank above 2), as
    NumPy maps np.linalg over the leading axes: ``numpy_fn`` of each matrix in a loop
    (`W.complex_over_stack`). ``kinds(bound)``, of the bound arguments: whether the result is
    complex, or a tuple of that for a tuple of results."""
    signature = inspect.signature(handler)

    @functools.wraps(handler)
    def f(z, *args, **kwargs):
        z = lift(z)
        nd = z.ndim
        if nd == 2:
            return handler(z, *args, **kwargs)
        if nd < 2:
            _refuse(f"np.linalg.{numpy_fn.__name__} of a complex array of rank {nd} (a "
                    "matrix, or a stack of them)", z)
        bound = signature.bind(z, *args, **kwargs)
        bound.apply_defaults()
        settings = tuple(bound.args[1:])
        kind = kinds(bound.arguments)
        x, y = _parts(z)
        if not isinstance(kind, tuple):
            return written(W.complex_over_stack, numpy_fn, x, y, settings, kind)
        over = {2: W.complex_over_stack_pair, 3: W.complex_over_stack_triple}[len(kind)]
        result = {2: EighResult if not kind[0] else EigResult, 3: SVDResult}[len(kind)]
        return written(over, numpy_fn, x, y, settings, kind, result)
    return f


def svd(z, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian:
        _refuse("np.linalg.svd with hermitian=True of a complex matrix (leave hermitian "
                "False: the same singular values, by the general SVD)", z)
    x, y = _parts(z)
    s = record("csvdvals", x, y)
    if not compute_uv:
        return s
    full = bool(full_matrices)
    u = pair(record("csvd_u_re", x, y, full=full), record("csvd_u_im", x, y, full=full))
    vh = pair(record("csvd_vt_re", x, y, full=full), record("csvd_vt_im", x, y, full=full))
    return SVDResult(u, s, vh)


def eigh(z, UPLO="L"):
    """The Hermitian matrix of the lower triangle (``UPLO='U'``: of the upper one, the lower
    triangle of the conjugate transpose)."""
    if UPLO not in ("L", "U"):
        _refuse(f"np.linalg.eigh with UPLO={UPLO!r} (UPLO is 'L' or 'U')", z)
    x, y = _parts(z)
    if UPLO == "U":
        x, y = NUMPY[np.transpose](x), -NUMPY[np.transpose](y)
    v = pair(record("ceigh_vectors_re", x, y), record("ceigh_vectors_im", x, y))
    return EighResult(record("ceigvalsh", x, y), v)


def eigvalsh(z, UPLO="L"):
    return eigh(z, UPLO).eigenvalues


def eig(z):
    x, y = _parts(z)
    w = pair(record("ceig_values_re", x, y), record("ceig_values_im", x, y))
    v = pair(record("ceig_vectors_re", x, y), record("ceig_vectors_im", x, y))
    return EigResult(w, v)


def eigvals(z):
    return eig(z).eigenvalues


def _singular_norm(z, ord):
    s = svd(z, compute_uv=False)
    if ord == "nuc":
        return NUMPY[np.sum](s)
    return NUMPY[np.max](s) if ord == 2 else NUMPY[np.min](s)


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm`` of a complex array: the spectral and nuclear norms (``ord=2, -2,
    'nuc'`` of a matrix, or of the matrices along ``axis=(p, q)``) from singular values, the
    rest from the entries' moduli (`complex_numpy.norm`)."""
    z = lift(x)
    nd = z.ndim
    pair_axes = isinstance(axis, (tuple, list)) and len(axis) == 2
    if ord not in (2, -2, "nuc") or not ((axis is None and nd == 2) or pair_axes):
        return complex_numpy.norm(x, ord, axis, keepdims)
    if keepdims:
        _refuse(f"np.linalg.norm(..., ord={ord!r}, keepdims=True) of a complex matrix (drop "
                "keepdims and reshape)", z)
    if pair_axes:
        p, q = (int(a) % nd for a in axis)
        if p == q:
            _refuse(f"np.linalg.norm with axis={tuple(axis)!r} (two distinct axes)", z)
        rest = [k for k in range(nd) if k not in (p, q)]
        z = lift(FUNCTIONS[np.transpose](z, (*rest, p, q)))
    if nd == 2:
        return _singular_norm(z, ord)
    x, y = _parts(z)
    return written(W.complex_over_stack, np.linalg.norm, x, y, (ord,), False)


def _embedded(a):
    """The real matrix [[Re a, -Im a], [Im a, Re a]] of the complex matrix ``a``: a x = b is
    the real system of it and of [Re b; Im b], norms kept (|x| and |a x - b| the same)."""
    re, im = _parts(a)
    return NUMPY[np.vstack]([NUMPY[np.hstack]([re, -im]), NUMPY[np.hstack]([im, re])])


def _stacked(b):
    re, im = _parts(b)
    return NUMPY[np.concatenate]([re, im], axis=0)


def _unstacked(x, n):
    rest = (":",) * (x.ndim - 1)
    return pair(record("getitem", x, n, index_spec=(("s", False, True, False), *rest)),
                record("getitem", x, n, index_spec=(("s", True, False, False), *rest)))


def solve(a, b):
    """``np.linalg.solve`` of complex operands: the real system of twice the size."""
    if lift(a).ndim != 2:
        _refuse("np.linalg.solve of a stack of complex matrices", a)
    return _unstacked(NUMPY[np.linalg.solve](_embedded(a), _stacked(b)), lift(a).shape[1])


def lstsq(a, b, rcond=None):
    """``np.linalg.lstsq`` of complex operands: the real least squares of the embedding,
    whose minimum-norm solution is the complex one's (its singular values each twice: the
    rank halved, every other singular value)."""
    if lift(a).ndim != 2:
        _refuse("np.linalg.lstsq of a stack of complex matrices", a)
    x, res, rank, s = NUMPY[np.linalg.lstsq](_embedded(a), _stacked(b), rcond=rcond)
    every_other = record("getitem", s, 2, index_spec=(("s", False, False, True),))
    return _unstacked(x, lift(a).shape[1]), res, rank // 2, every_other


FUNCTIONS.update({
    np.linalg.solve: solve, np.linalg.lstsq: lstsq,
    np.linalg.svd: _each_matrix(np.linalg.svd, svd,
                                lambda b: (True, False, True) if b["compute_uv"] else False),
    np.linalg.eigh: _each_matrix(np.linalg.eigh, eigh, lambda b: (False, True)),
    np.linalg.eigvalsh: _each_matrix(np.linalg.eigvalsh, eigvalsh, lambda b: False),
    np.linalg.eig: _each_matrix(np.linalg.eig, eig, lambda b: (True, True)),
    np.linalg.eigvals: _each_matrix(np.linalg.eigvals, eigvals, lambda b: True),
    np.linalg.norm: norm,
    # the named tuples of results (`W.complex_over_stack_pair` makes them of complex values)
    EighResult: EighResult, EigResult: EigResult, SVDResult: SVDResult,
})


def _square(name, z):
    z = lift(z)
    if z.ndim != 2:
        _refuse(f"{name} of a complex array of rank {z.ndim} (of one square matrix)", z)
    return _parts(z)


def expm(z):
    """scipy.linalg.expm of a complex matrix (`W.complex_expm`)."""
    return written(W.complex_expm, *_square("scipy.linalg.expm", z))


def inv(z):
    return written(W.complex_inv, *_square("np.linalg.inv", z))


def solve(a, b):
    """np.linalg.solve with a complex matrix or right-hand side (a vector or a matrix)."""
    x, y = _square("np.linalg.solve", a)
    if lift(b).ndim not in (1, 2):
        _refuse("np.linalg.solve of a complex system with b of rank other than 1 or 2", b)
    br, bi = _parts(b)
    return written(W.complex_solve, x, y, br, bi)


# (inv of a stack, scikit-rf's (nfreq, n, n) networks: each matrix in turn, as the others)
FUNCTIONS.update({np.linalg.inv: _each_matrix(np.linalg.inv, inv, lambda b: True),
                  np.linalg.solve: solve})
complex_pairs.SCIPY_LINALG.update({"expm": expm, "inv": inv, "solve": solve})
