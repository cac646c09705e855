"""``np.linalg``'s decompositions and what is made of them, and ``scipy.linalg``'s ``sqrtm``,
``solve_banded`` and ``solve_sylvester``: each result one primitive of
`jitgrad.prims.decompositions` (whose docstring states the conventions: eigh's lower triangle,
distinct eigenvalues for eigenvectors, the thin SVD), or a composition of them.

* ``eigh``, ``eigvalsh``, ``eig``, ``eigvals`` (real eigenvalues: the run time raises for
  complex ones, as Numba's eig does), ``svd``, ``qr`` (``mode='reduced'`` or ``'r'``),
  ``pinv`` (the default cutoff), ``matrix_rank`` (an integer, no derivative);
* ``lstsq``: ``pinv(a) @ b``, exact where ``a`` has full rank; its residuals are the sums of
  squared residuals whatever the rank (NumPy gives an empty array below full column rank or
  for ``m <= n``), its rank `matrix_rank`, its singular values ``svdvals``;
* ``cond``: the ratio of the extreme singular values (``p`` None, 2, -2), else
  ``norm(a, p) * norm(inv(a), p)``, as NumPy; ``norm`` of a matrix with ``ord`` 2, -2,
  ``'nuc'`` (singular values), 1, -1, inf, -inf (column and row sums);
* ``scipy.linalg.eigh``/``eigvalsh`` (also the generalized problem with ``b``, through the
  Cholesky factor of ``b``); ``sqrtm`` of a symmetric positive definite matrix;
  ``solve_banded`` as a dense
  solve of the matrix the bands make; ``solve_sylvester`` (``a x + x b = q``) as the dense
  solve of its Kronecker form, ``(kron(a, I) + kron(I, b.T)) vec(x) = vec(q)``, exact but
  of cost (m n)^3.

Takes values of the graph (`Sym`) or constants (a call on constants only is run by NumPy or
SciPy itself); fills `symbolic.NUMPY` when imported (by ``jitgrad.lang``), and the SciPy
functions join `scipy_stats.LINALG`.
"""

from __future__ import annotations

import collections
import functools
import inspect
import math
import sys

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import complex_pairs, numpy_shape
from jitgrad.lang import numpy_written as W
from jitgrad.lang.numpy_api import as_float, np_array, np_reduce, np_reshape, np_sum
from jitgrad.lang.symbolic import (
    NUMPY,
    all_known,
    builder_of,
    loc_of,
    ndim_of,
    numpy_handler,
    record,
    records,
    written,
)

# -- one matrix, and stacks of them ---------------------------------------------------


def matrix_operand(name, a):
    """``a`` as a float matrix for ``np.linalg.<name>``, refused unless it has rank 2."""
    if ndim_of(a) != 2:
        raise UnsupportedError(f"np.linalg.{name} of an array of rank {ndim_of(a)} (jitgrad "
                               "takes one matrix, as Numba)", loc_of(a))
    return as_float(a)


def over_stacks(numpy_fn, result=None, native=2):
    """The handler of ``numpy_fn`` (np.linalg's function of one matrix) made to take a stack
    of matrices too, as NumPy maps np.linalg over the leading axes: of an array of rank above
    ``native`` (the rank its primitive takes), ``numpy_fn`` of each matrix in a loop
    (`W.over_stack`, the one-matrix rule per matrix in the gradient). ``result``:
    None for one array, else a function of the bound arguments giving the named tuple class
    of the results (None where they are one array: svd with compute_uv=False)."""
    def wrap(handler):
        signature = inspect.signature(handler)

        @functools.wraps(handler)
        def f(a, *args, **kwargs):
            if not records(a) or ndim_of(a) <= native:
                return handler(a, *args, **kwargs)
            bound = signature.bind(a, *args, **kwargs)
            bound.apply_defaults()
            if bound.kwargs:  # (pinv's rtol=): the handler's own refusal, on one matrix
                return handler(a, *args, **kwargs)
            settings = tuple(bound.args[1:])
            kind = result(bound.arguments) if result is not None else None
            a = as_float(a)
            if kind is None:
                return written(W.over_stack, numpy_fn, a, settings)
            over = {2: W.over_stack_pair,
                    3: W.over_stack_triple}[len(kind._fields)]
            return written(over, numpy_fn, a, settings, kind)
        return f
    return wrap


SlogdetResult = collections.namedtuple("SlogdetResult", "sign logabsdet")


def _linalg(name, stacks=False):
    """``np.linalg.<name>`` of a matrix (with ``stacks``, of a stack of them too: rank 3 by its
    primitive, more by `over_stacks`)."""
    @over_stacks(getattr(np.linalg, name), native=3 if stacks else 2)
    def f(a):
        if not records(a):
            return getattr(np.linalg, name)(a)
        if stacks and ndim_of(a) == 3:
            return record(name, as_float(a))
        return record(name, matrix_operand(name, a))
    return f


def np_solve(a, b):
    if not (records(a) or records(b)):
        return np.linalg.solve(a, b)
    if ndim_of(a) > 2 or ndim_of(b) > 2:  # stacks, as NumPy 2 reads them: b a vector only
        return _solve_stacks(a, b)  # of rank 1, else (a stack of) matrices
    return record("solve", matrix_operand("solve", a), as_float(b))


def _solve_stacks(a, b):
    """np.linalg.solve where ``a`` or ``b`` is a stack (rank above 2): one system per matrix,
    in a loop (`numpy_written`)."""
    a, b = as_float(a), as_float(b)
    if ndim_of(a) == 2:  # one matrix, a stack of right-hand sides
        return written(W.over_stack, W.solve_for, b, (a,))
    if ndim_of(b) <= 2:  # a stack of matrices, one right-hand side (a vector or a matrix)
        return written(W.over_stack, np.linalg.solve, a, (b,))
    if ndim_of(a) != ndim_of(b):
        raise UnsupportedError(f"np.linalg.solve of stacks of ranks {ndim_of(a)} and "
                               f"{ndim_of(b)} (jitgrad does not broadcast them: give both "
                               "the same leading axes)", loc_of(a, b))
    return written(W.solve_stacks, a, b)


@over_stacks(np.linalg.slogdet, lambda bound: SlogdetResult)
def np_slogdet(a):
    if not records(a):
        return np.linalg.slogdet(a)
    a = matrix_operand("slogdet", a)
    return SlogdetResult(record("signdet", a), record("logabsdet", a))


_np = numpy_handler

EighResult = collections.namedtuple("EighResult", "eigenvalues eigenvectors")
EigResult = collections.namedtuple("EigResult", "eigenvalues eigenvectors")
SVDResult = collections.namedtuple("SVDResult", "U S Vh")
QRResult = collections.namedtuple("QRResult", "Q R")
LstsqResult = collections.namedtuple("LstsqResult", "x residuals rank singular_values")


def _refuse(what, instead, a):
    raise UnsupportedError(f"{what} ({instead})", loc_of(a))


@over_stacks(np.linalg.eigh, lambda bound: EighResult)
def np_eigh(a, UPLO="L"):
    if all_known(a):
        return np.linalg.eigh(a, UPLO)
    if UPLO not in ("L", "U"):
        _refuse(f"np.linalg.eigh with UPLO={UPLO!r}", "UPLO is 'L' or 'U'", a)
    a = matrix_operand("eigh", a)
    if UPLO == "U":  # the upper triangle of a is the lower one of a.T; NumPy's signs of the
        a = _np(np.transpose)(a)  # eigenvectors are those of LAPACK's upper path on a
        return EighResult(record("eigvalsh", a), record("eigh_vectors_upper", a))
    return EighResult(record("eigvalsh", a), record("eigh_vectors", a))


@over_stacks(np.linalg.eigvalsh)
def np_eigvalsh(a, UPLO="L"):
    if all_known(a):
        return np.linalg.eigvalsh(a, UPLO)
    return np_eigh(a, UPLO).eigenvalues


@over_stacks(np.linalg.eig, lambda bound: EigResult)
def np_eig(a):
    if all_known(a):
        return np.linalg.eig(a)
    a = matrix_operand("eig", a)
    return EigResult(record("eig_values", a), record("eig_vectors", a))


@over_stacks(np.linalg.eigvals)
def np_eigvals(a):
    if all_known(a):
        return np.linalg.eigvals(a)
    return record("eig_values", matrix_operand("eigvals", a))


def complex_eigenvalues(a) -> bool:
    """Whether the build takes a real matrix's eigenvalues as complex (`GraphBuilder.
    complex_eig`: a call found them complex in the build that typed them real, so the
    function is built again this way; NumPy's result dtype depends on the values)."""
    builder = builder_of(a)
    return builder is not None and builder.complex_eig


def _real_or_complex(numpy_fn, real):
    """np.linalg.eig or eigvals of a real matrix: ``real`` (the eigenvalues typed real:
    complex ones raise `ComplexEigenvalues` at run time), or the complex eig
    (`complex_linalg`) in the build made after that."""
    def f(a, *args, **kwargs):
        if records(a) and complex_eigenvalues(a):
            return complex_pairs.FUNCTIONS[numpy_fn](a, *args, **kwargs)
        return real(a, *args, **kwargs)
    return functools.wraps(real)(f)


@over_stacks(np.linalg.svd, lambda bound: SVDResult if bound["compute_uv"] else None)
def np_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    if all_known(a):
        return np.linalg.svd(a, full_matrices, compute_uv, hermitian)
    if hermitian:
        _refuse("np.linalg.svd with hermitian=True", "leave hermitian False: the same "
                "singular values, by the general SVD", a)
    a = matrix_operand("svd", a)
    s = record("svdvals", a)
    if not compute_uv:
        return s
    full = bool(full_matrices)
    return SVDResult(record("svd_u", a, full=full), s, record("svd_vt", a, full=full))


@over_stacks(np.linalg.qr, lambda bound: QRResult if bound["mode"] != "r" else None)
def np_qr(a, mode="reduced"):
    if all_known(a):
        return np.linalg.qr(a, mode)
    if mode not in ("reduced", "r"):
        _refuse(f"np.linalg.qr with mode={mode!r}", "jitgrad takes mode='reduced' or 'r'", a)
    a = matrix_operand("qr", a)
    if mode == "r":
        return record("qr_r", a)
    return QRResult(record("qr_q", a), record("qr_r", a))


@over_stacks(np.linalg.pinv)
def np_pinv(a, rcond=None, hermitian=False, **rtol):
    if all_known(a):
        return np.linalg.pinv(a, rcond, hermitian, **rtol)
    if rtol or rcond not in (None, 1e-15) or hermitian:
        _refuse("np.linalg.pinv with rcond, rtol or hermitian", "jitgrad takes the default "
                "cutoff, as Numba", a)
    return record("pinv", matrix_operand("pinv", a))


def linalg_pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True, cond=None,
                rcond=None):
    """scipy.linalg.pinv with its default cutoff: the pseudo-inverse primitive (NumPy's, whose
    cutoff, 1e-15 of the largest singular value, differs from SciPy's max(M, N) eps only for
    a matrix of condition number beyond 1e15, where neither has a usable derivative)."""
    if all_known(a):
        return sys.modules["scipy.linalg"].pinv(a, atol=atol, rtol=rtol,
                                                return_rank=return_rank)
    if atol is not None or rtol is not None or cond is not None or rcond is not None:
        _refuse("scipy.linalg.pinv with atol, rtol, cond or rcond", "jitgrad takes the "
                "default cutoff", a)
    if return_rank:
        _refuse("scipy.linalg.pinv(..., return_rank=True)", "the rank is an integer with no "
                "derivative: take np.linalg.matrix_rank(a) apart", a)
    return record("pinv", matrix_operand("pinv", a))


def np_matrix_rank(A, tol=None, hermitian=False, **rtol):
    if all_known(A):
        return np.linalg.matrix_rank(A, tol, hermitian, **rtol)
    if tol is not None or hermitian or rtol:
        _refuse("np.linalg.matrix_rank with tol, rtol or hermitian", "jitgrad takes the "
                "default tolerance, as Numba", A)
    return record("matrix_rank", matrix_operand("matrix_rank", A))


def np_lstsq(a, b, rcond=None):
    if all_known(a, b):
        return np.linalg.lstsq(a, b, rcond)
    if rcond is not None and rcond != -1:
        _refuse("np.linalg.lstsq with rcond", "jitgrad takes the default cutoff", a)
    if ndim_of(b) not in (1, 2):
        _refuse("np.linalg.lstsq with a right-hand side of rank other than 1 or 2",
                "a vector or a matrix", a)
    a = matrix_operand("lstsq", a)
    x = _np(np.matmul)(record("pinv", a), b)
    residual = b - _np(np.matmul)(a, x)
    sums = np_sum(residual * residual, axis=0)
    if ndim_of(b) == 1:
        sums = np_reshape(sums, (1,))
    return LstsqResult(x, sums, record("matrix_rank", a), record("svdvals", a))


def np_polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """``np.polyfit``: the least-squares fit NumPy computes, the Vandermonde matrix's columns
    scaled to unit norm, `np_lstsq` (the pseudo-inverse's derivative), the scale undone.
    ``deg`` must be known while building; ``w``, ``full``, ``cov`` and ``rcond`` are refused."""
    if all_known(x, y):
        return np.polyfit(x, y, deg, rcond, full, w, cov)
    if records(deg) or w is not None or full or cov or rcond is not None:
        _refuse("np.polyfit with weights, full, cov, rcond or a degree known only at run time",
                "np.polyfit(x, y, deg) with an integer deg", x if records(x) else y)
    if ndim_of(x) != 1 or ndim_of(y) not in (1, 2):
        _refuse("np.polyfit of other than a vector of points", "x a vector, y a vector or a "
                "matrix of columns", x if records(x) else y)
    lhs = NUMPY[np.vander](as_float(x), int(deg) + 1)
    scale = _np(np.sqrt)(np_sum(lhs * lhs, axis=0))
    c = np_lstsq(lhs / scale, y).x
    return c / (scale if ndim_of(y) == 1 else np_reshape(scale, (-1, 1)))


def _matrix_norm(x, ord, keepdims):
    """``np.linalg.norm(x, ord)`` of a matrix for the orders the Frobenius branch leaves."""
    if ord in (2, -2, "nuc"):
        s = record("svdvals", matrix_operand("norm", x))
        value = np_sum(s) if ord == "nuc" else np_reduce("max" if ord == 2 else "min", s)
    elif ord in (1, -1, math.inf, -math.inf):
        axis = 0 if ord in (1, -1) else 1  # column sums for 1, row sums for inf
        sums = np_sum(_np(np.abs)(x), axis=axis)
        value = np_reduce("max" if ord > 0 else "min", sums)
    else:
        raise UnsupportedError(f"np.linalg.norm of a matrix with ord={ord!r} (jitgrad: "
                               "None, 'fro', 'nuc', 2, -2, 1, -1, inf, -inf)", loc_of(x))
    return np_reshape(value, (1, 1)) if keepdims else value


def np_norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: the matrix orders of singular values and of absolute sums here,
    the rest in `numpy_shape.np_norm`."""
    matrix = ndim_of(x) == 2 and (axis is None or isinstance(axis, (tuple, list))
                                  and tuple(axis) in ((0, 1), (-2, -1)))
    if not all_known(x) and matrix and ord in (2, -2, "nuc", 1, -1, math.inf, -math.inf):
        return _matrix_norm(x, ord, keepdims)
    if not all_known(x) and ndim_of(x) > 2 and isinstance(axis, (tuple, list)) and \
            len(axis) == 2 and ord in (2, -2, "nuc", 1, -1, math.inf, -math.inf):
        return _stacked_matrix_norm(x, ord, axis, keepdims)
    return numpy_shape.np_norm(x, ord, axis, keepdims)


def _stacked_matrix_norm(x, ord, axis, keepdims):
    """``np.linalg.norm(x, ord, axis=(p, q))`` of an array of rank 3 or more: the matrices
    along axes p (rows) and q moved last, each one's norm (singular values of the stack, or
    its absolute column or row sums)."""
    n = ndim_of(x)
    p, q = (int(a) % n if -n <= int(a) < n else None for a in axis)
    if p is None or q is None or p == q:
        raise UnsupportedError(f"np.linalg.norm with axis={tuple(axis)!r}: two distinct axes "
                               f"of an array of rank {n}", loc_of(x))
    rest = [k for k in range(n) if k not in (p, q)]
    moved = _np(np.transpose)(x * 1.0, (*rest, p, q))
    shape = tuple(1 if k in (p, q) else x.shape[k] for k in range(n)) if keepdims else None
    return written(W.matrix_norms, moved, ord, shape)


def np_cond(x, p=None):
    if all_known(x):
        return np.linalg.cond(x, p)
    if p in (None, 2, -2):
        s = record("svdvals", matrix_operand("cond", x))
        big, small = np_reduce("max", s), np_reduce("min", s)
        return big / small if p != -2 else small / big
    return np_norm(x, p) * np_norm(record("inv", matrix_operand("cond", x)), p)


def np_roots(p):
    """The eigenvalues of the companion matrix, as NumPy (real roots: the run time raises
    for complex ones; nonzero first and last coefficients, checked at run time)."""
    if isinstance(p, (list, tuple)) and not all_known(*p):  # np.roots([1.0, -b, c]): NumPy
        p = np_array(p)  # would hand the list back here (its dispatcher returns p itself)
    if all_known(p):
        return np.roots(p)
    if ndim_of(p) != 1:
        _refuse("np.roots of an array of rank other than 1", "a vector of coefficients", p)
    if p.dtype.kind != "f":
        p = record("cast", p, kind="f")
    if complex_eigenvalues(p):  # (complex roots found at run time: built again so)
        return complex_pairs.FUNCTIONS[np.linalg.eigvals](record("companion", p))
    return record("eig_values", record("companion", p))


# ---- scipy.linalg


def linalg_sqrtm(A, disp=True, blocksize=64):
    import scipy.linalg

    if all_known(A):
        return scipy.linalg.sqrtm(A, disp, blocksize)
    if not disp:
        _refuse("scipy.linalg.sqrtm with disp=False", "leave disp True", A)
    return record("sqrtm", matrix_operand("sqrtm", A))


def linalg_solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False,
                        check_finite=True):
    import scipy.linalg

    if all_known(ab, b):
        return scipy.linalg.solve_banded(l_and_u, ab, b)
    lower, upper = l_and_u
    if records(lower) or records(upper):
        _refuse("scipy.linalg.solve_banded with (l, u) known only at run time", "constant "
                "numbers of bands", ab)
    ab = matrix_operand("solve_banded", ab)
    diag = NUMPY[np.diag]

    def band(row, start=None, stop=None):  # ab[row, start:stop]
        bounds = [v for v in (start, stop) if v is not None]
        spec = ("i", ("s", start is not None, stop is not None, False))
        return record("getitem", ab, row, *bounds, index_spec=spec)

    # the matrix the bands make: ab[u + i - j, j] is its entry (i, j)
    dense = diag(band(upper))
    for k in range(1, upper + 1):
        dense = dense + diag(band(upper - k, start=k), k)
    for k in range(1, lower + 1):
        dense = dense + diag(band(upper + k, stop=-k), -k)
    return NUMPY[np.linalg.solve](dense, b)


def linalg_solve_sylvester(a, b, q):
    import scipy.linalg

    if all_known(a, b, q):
        return scipy.linalg.solve_sylvester(a, b, q)
    a, b, q = (matrix_operand("solve_sylvester", m) for m in (a, b, q))
    eye = NUMPY[np.eye]
    kron = NUMPY[np.kron]
    # row-major vec: vec(a x) = kron(a, I_n) vec(x), vec(x b) = kron(I_m, b.T) vec(x)
    system = kron(a, eye(b.shape[0])) + kron(eye(a.shape[0]), _np(np.transpose)(b))
    x = NUMPY[np.linalg.solve](system, _np(np.ravel)(q))
    return np_reshape(x, q.shape)


def linalg_solve_continuous_lyapunov(a, q):
    """``scipy.linalg.solve_continuous_lyapunov``: ``a x + x a^T = q``, the Sylvester equation
    with ``b = a^T`` (real matrices; SciPy's ``a^H`` is ``a^T`` for them)."""
    import scipy.linalg

    if all_known(a, q):
        return scipy.linalg.solve_continuous_lyapunov(a, q)
    a = matrix_operand("solve_continuous_lyapunov", a)
    return linalg_solve_sylvester(a, _np(np.transpose)(a), q)


def linalg_solve_continuous_are(a, b, q, r, e=None, s=None, balanced=True):
    """``scipy.linalg.solve_continuous_are``: ``a^T x + x a - x b r^-1 b^T x + q = 0`` from
    the stable invariant subspace of the Hamiltonian matrix (`W.continuous_are`), its
    derivative through that eigendecomposition (distinct eigenvalues). ``e`` and ``s`` (the
    generalized equation) are refused; ``balanced`` changes SciPy's rounding only."""
    import scipy.linalg

    if all_known(a, b, q, r, e, s):
        return scipy.linalg.solve_continuous_are(a, b, q, r, e, s, balanced)
    if e is not None or s is not None:
        _refuse("scipy.linalg.solve_continuous_are with e= or s=", "the generalized "
                "equation: jitgrad takes a, b, q, r", a)
    a, b, q, r = (matrix_operand("solve_continuous_are", m) for m in (a, b, q, r))
    return written(W.continuous_are, a, b, q, r)


def linalg_solve_discrete_lyapunov(a, q, method=None):
    """``scipy.linalg.solve_discrete_lyapunov``: ``x - a x a^T = q`` as the linear system
    ``(I - kron(a, a)) vec(x) = vec(q)``, SciPy's ``method="direct"`` (its default for
    matrices of fewer than 10 rows; the bilinear method solves the same equation)."""
    import scipy.linalg

    if all_known(a, q):
        return scipy.linalg.solve_discrete_lyapunov(a, q, method=method)
    a, q = (matrix_operand("solve_discrete_lyapunov", m) for m in (a, q))
    n = a.shape[0]
    system = NUMPY[np.eye](n * n) - NUMPY[np.kron](a, a)
    return np_reshape(NUMPY[np.linalg.solve](system, _np(np.ravel)(q)), q.shape)


def linalg_expm(a):
    """``scipy.linalg.expm`` of a real matrix: scaling and squaring with the [13/13] Pade
    approximant (`numpy_written.expm`), differentiated through its products and solve."""
    import scipy.linalg

    if all_known(a):
        return scipy.linalg.expm(a)
    return written(W.expm, matrix_operand("expm", a))


def _symmetric_from_lower(m):
    tril = NUMPY[np.tril]
    return tril(m) + _np(np.transpose)(tril(m, -1))


def linalg_eigh(a, b=None, *args, lower=True, eigvals_only=False, overwrite_a=False,
                overwrite_b=False, type=1, check_finite=True, subset_by_index=None,
                subset_by_value=None, driver=None, **old):
    """``scipy.linalg.eigh``: of ``a`` alone, np.linalg.eigh of the triangle SciPy reads;
    with ``b`` (the generalized problem ``a v = w b v``), with ``b = L L^T``, the eigh of
    ``L^-1 a L^-T`` (the same eigenvalues) and the vectors ``L^-T u`` (``v^T b v = 1``, as
    SciPy's). Only the triangles SciPy reads get a gradient."""
    import scipy.linalg

    if all_known(a, b):
        return scipy.linalg.eigh(a, b, *args, lower=lower, eigvals_only=eigvals_only,
                                 type=type, subset_by_index=subset_by_index,
                                 subset_by_value=subset_by_value, driver=driver, **old)
    subset = _index_subset(subset_by_index)
    if args or old or type != 1 or subset is None or subset_by_value is not None or \
            driver not in (None, "ev", "evd", "evr", "evx", "gv", "gvd", "gvx"):
        _refuse("scipy.linalg.eigh with type, a subset by value, a subset of indices known "
                "only at run time, or positional options",
                "jitgrad takes a, b, lower, eigvals_only, subset_by_index and driver", a)
    if subset != slice(None) and driver in ("ev", "evd", "gv", "gvd"):
        raise ValueError(f'"{driver}" cannot compute subsets of eigenvalues')  # (SciPy's)
    read = (lambda m: m) if lower else _np(np.transpose)  # the upper triangle: m.T's lower
    a = read(matrix_operand("eigh", a))
    if b is None:
        w, v = np_eigh(a)
    else:
        factor = record("cholesky", _symmetric_from_lower(read(matrix_operand("eigh", b))))
        solve = NUMPY[np.linalg.solve]
        half = solve(factor, _np(np.transpose)(_symmetric_from_lower(a)))  # L^-1 A
        w, u = np_eigh(solve(factor, _np(np.transpose)(half)))  # of L^-1 A L^-T
        v = solve(_np(np.transpose)(factor), u) if not eigvals_only else None
    if subset != slice(None):  # the eigenvalues lo..hi in ascending order, and their vectors
        spec = ("s", True, True, False)
        w = record("getitem", w, subset.start, subset.stop, index_spec=(spec,))
        v = None if v is None else record("getitem", v, subset.start, subset.stop,
                                          index_spec=(":", spec))
    return w if eigvals_only else (w, v)


def _index_subset(subset_by_index):
    """scipy.linalg.eigh's ``subset_by_index=[lo, hi]`` (integers known while building) as
    the slice of the ascending eigenvalues it keeps; None if it is known only at run time."""
    if subset_by_index is None:
        return slice(None)
    lo, hi = subset_by_index
    if not all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in (lo, hi)):
        return None
    return slice(int(lo), int(hi) + 1)


def linalg_eigvalsh(a, b=None, *args, lower=True, **kw):
    import scipy.linalg

    if all_known(a, b):
        return scipy.linalg.eigvalsh(a, b, *args, lower=lower, **kw)
    return linalg_eigh(a, b, *args, lower=lower, eigvals_only=True, **kw)


LINALG = {"sqrtm": linalg_sqrtm, "solve_banded": linalg_solve_banded,
          "solve_sylvester": linalg_solve_sylvester, "eigh": linalg_eigh,
          "solve_continuous_lyapunov": linalg_solve_continuous_lyapunov,
          "solve_lyapunov": linalg_solve_continuous_lyapunov,
          "solve_discrete_lyapunov": linalg_solve_discrete_lyapunov, "expm": linalg_expm,
          "eigvalsh": linalg_eigvalsh, "pinv": linalg_pinv,
          "solve_continuous_are": linalg_solve_continuous_are}

NUMPY.update({
    np.linalg.inv: _linalg("inv", stacks=True), np.linalg.det: _linalg("det", stacks=True),
    np.linalg.cholesky: _linalg("cholesky"), np.linalg.solve: np_solve,
    np.linalg.slogdet: np_slogdet,
    np.linalg.eigh: np_eigh, np.linalg.eigvalsh: np_eigvalsh,
    np.linalg.eig: _real_or_complex(np.linalg.eig, np_eig),
    np.linalg.eigvals: _real_or_complex(np.linalg.eigvals, np_eigvals),
    np.linalg.svd: np_svd, np.linalg.qr: np_qr,
    np.linalg.pinv: np_pinv, np.linalg.matrix_rank: np_matrix_rank,
    np.linalg.lstsq: np_lstsq, np.linalg.cond: np_cond, np.linalg.norm: np_norm,
    np.polyfit: np_polyfit,
    np.roots: np_roots,
})
