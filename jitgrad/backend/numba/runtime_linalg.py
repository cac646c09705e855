"""Products and linear algebra for generated code (``_rt.<name>``, re-exported by `runtime`),
calling BLAS and LAPACK directly.

Takes float arrays (`lowering` converts integer operands to float first); float64 arrays of any
layout (C-ordered, F-ordered, or copied first) go to BLAS and LAPACK, other dtypes to Numba's
own ``np.linalg`` and ``@``. Guarantees NumPy's results (the routines NumPy calls: ``dgesv`` for
``solve``, ``dgetrf`` + ``dgetri`` for ``inv``, ``dpotrf`` for ``cholesky``, ``dgemm``/``dgemv``/
``ddot`` for products) and NumPy's errors: ``LinAlgError`` for a singular matrix or one that is
not positive definite; Numba's ``ValueError`` for products whose shapes do not align.

Why not Numba's own: its ``np.linalg`` and ``@`` are generic over dtypes, layouts and shapes,
check every input for finite values and format their error messages with the shapes, and take
0.5-4 s each to compile (``np.linalg.solve`` 4.7 s here, a call of ``dgesv`` 0.5 s). On a
machine where jitgrad has not run, the helpers compile on a gradient's first call (issue #46:
a first gradient within 1.5x Numba's compile of the plain function); once compiled they stay
in Numba's disk cache (`compile.jit`), keyed by this file, which is why the routines' code
lives here and not in a module of its own: Numba's cache would not see a change to it.

How: SciPy publishes its BLAS and LAPACK as C function pointers (``scipy.linalg.cython_blas``,
``cython_lapack``: SciPy's documented Cython API, the BLAS Numba itself calls). Compiled code calls
each routine by a name of ours (``jitgrad_dgesv``, `compile.scipy_c_function`), which
`link_routines` binds to its address, so Numba's disk cache keeps the code (a ctypes pointer would
be a constant address, which the cache refuses). `link_routines` runs
before any code calling them is compiled or loaded (`compile.jit`'s ``needs=``, and
the backend's `load` for generated modules). Fortran takes every argument by address: a
product passes the addresses of stack slots (`_by_address`); a factorisation, whose ``info``
it reads back, passes an array of its integers (``ints``).

Layouts: BLAS and LAPACK read matrices by columns. A C-ordered (rows) array seen by columns is
its transpose, so ``a @ b`` of C-ordered arrays is computed as ``(b.T @ a.T).T`` with no copy,
and a transposed operand (F-ordered) is passed with the routine's "transpose" flag.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable

from jitgrad.backend.numba.compile import jit, link_scipy, scipy_c_function
from jitgrad.backend.numba.runtime_alloc import empty, zeros
from jitgrad.core.errors import ComplexEigenvalues

_INT = types.CPointer(types.int32)
_DBL = types.CPointer(types.float64)
_CHR = types.CPointer(types.uint8)

# The routines, as `compile.scipy_c_function`s (Fortran signatures: every argument by address)
_BLAS = {
    "dgemm": types.void(_CHR, _CHR, _INT, _INT, _INT, _DBL, _DBL, _INT, _DBL, _INT, _DBL, _DBL,
                        _INT),
    "dgemv": types.void(_CHR, _INT, _INT, _DBL, _DBL, _INT, _DBL, _INT, _DBL, _DBL, _INT),
    "ddot": types.float64(_INT, _DBL, _INT, _DBL, _INT),
}
_LAPACK = {
    "dgesv": types.void(_INT, _INT, _DBL, _INT, _INT, _DBL, _INT, _INT),
    "dgetrf": types.void(_INT, _INT, _DBL, _INT, _INT, _INT),
    "dgetri": types.void(_INT, _DBL, _INT, _INT, _DBL, _INT, _INT),
    "dpotrf": types.void(_CHR, _INT, _DBL, _INT, _INT),
    "dsyevd": types.void(_CHR, _CHR, _INT, _DBL, _INT, _DBL, _DBL, _INT, _INT, _INT, _INT),
}
dgemm, dgemv, ddot = (scipy_c_function(name, sig) for name, sig in _BLAS.items())
dgesv, dgetrf, dgetri, dpotrf, dsyevd = (scipy_c_function(name, sig) for name, sig in _LAPACK.items())
_OPTIONS = {"error_model": "numpy"}  # as every runtime helper (`compile.ERROR_MODEL`)


def link_routines() -> None:
    """Bind the routines' names in this process (`compile.link_scipy`: imports SciPy's BLAS and
    LAPACK, 0.2 s, at the first call). Raises ImportError when SciPy is missing
    (`compile.require_scipy` says so first)."""
    link_scipy("scipy.linalg.cython_blas", _BLAS)
    link_scipy("scipy.linalg.cython_lapack", _LAPACK)


# ---- arguments by address --------------------------------------------------------------------


def _by_address(llvm_type, numba_type):
    """An intrinsic ``ref(value)``: the address of a slot on the calling function's stack that
    holds ``value`` converted to ``numba_type`` (Fortran takes every argument by address; a
    stack slot costs nothing where a NumPy array per call costs an allocation)."""

    @intrinsic
    def ref(typingctx, value):
        if not isinstance(value, (types.Integer, types.Float)):
            return None

        def codegen(context, builder, signature, args):
            slot = cgutils.alloca_once(builder, llvm_type)
            builder.store(context.cast(builder, args[0], signature.args[0], numba_type), slot)
            return slot

        return types.CPointer(numba_type)(value), codegen

    return ref


_int_ref = _by_address(ir.IntType(32), types.int32)  # Fortran INTEGER
_char_ref = _by_address(ir.IntType(8), types.uint8)  # CHARACTER: 'N', 'T', 'U'
_double_ref = _by_address(ir.DoubleType(), types.float64)  # DOUBLE PRECISION
_N, _T, _U, _V = ord("N"), ord("T"), ord("U"), ord("V")


def _matmul_any(a, b):
    """``a @ b`` of float64 arrays, one of them a matrix."""
    return a @ b


# Each product is compiled for its operands' layouts, known while compiling: BLAS reads memory
# by columns, so it sees a C-ordered matrix (m x k) as its transpose, leading dimension k, and
# an F-ordered one as itself, m. One function per layout pair, with no calls of its own (each
# compiled function costs Numba 0.1-0.3 s: a product written with helpers took longer to
# compile than Numba's own).


def _matrix_product(a_rows, b_rows):
    """``a @ b`` of two matrices; ``a_rows``/``b_rows``: whether each is C-ordered."""
    op_a = _N if a_rows else _T  # the routine computes out.T = b.T @ a.T, by columns
    op_b = _N if b_rows else _T

    def product(a, b):
        m, k = a.shape
        if b.shape[0] != k:
            raise ValueError("incompatible array sizes for np.dot(a, b)")
        n = b.shape[1]
        if k == 0:
            return zeros((m, n))
        out = empty((m, n))
        if m == 0 or n == 0:
            return out
        lda = a.shape[1] if a_rows else a.shape[0]
        lda = lda if lda > 1 else 1  # noqa: FURB136 - Numba's max is a compile of its own
        ldb = b.shape[1] if b_rows else b.shape[0]
        ldb = ldb if ldb > 1 else 1  # noqa: FURB136
        dgemm(_char_ref(op_b), _char_ref(op_a), _int_ref(n), _int_ref(m), _int_ref(k),
              _double_ref(1.0), b.ctypes, _int_ref(ldb), a.ctypes, _int_ref(lda),
              _double_ref(0.0), out.ctypes, _int_ref(n))
        return out

    return product


def _matrix_vector(a_rows, transposed):
    """``a @ x`` (``transposed``: ``a.T @ x``) of a matrix and a C-ordered vector."""
    op = _T if a_rows != transposed else _N

    def product(a, b):  # (the names the overload's typing has: b is the vector)
        x = b
        m, k = (a.shape[1], a.shape[0]) if transposed else (a.shape[0], a.shape[1])
        if x.shape[0] != k:
            raise ValueError("incompatible array sizes for np.dot(a, b)")
        if k == 0:
            return zeros(m)
        out = empty(m)
        if m == 0:
            return out
        rows, cols = (a.shape[1], a.shape[0]) if a_rows else (a.shape[0], a.shape[1])
        lda = rows if rows > 1 else 1  # noqa: FURB136 - Numba's max is a compile of its own
        dgemv(_char_ref(op), _int_ref(rows), _int_ref(cols), _double_ref(1.0), a.ctypes,
              _int_ref(lda), x.ctypes, _int_ref(1), _double_ref(0.0), out.ctypes, _int_ref(1))
        return out

    return product


def _strided_matrix_vector(transposed):
    """``a @ x`` (``transposed``: ``a.T @ x``) where ``a`` or ``x`` is a strided view
    (``data[:, i:m]``, ``data[:, i]``): BLAS reads a matrix whose rows (or columns) are
    contiguous with the distance between them as its leading dimension, and a vector with a
    stride, so no copy is made (covariance's loop of products of column slices copied both
    operands once per iteration, in the forward and in the adjoint pass); other layouts
    (negative or zero strides, neither axis contiguous) are copied to C order first."""

    def product(a, b):
        x = b
        m, k = (a.shape[1], a.shape[0]) if transposed else (a.shape[0], a.shape[1])
        if x.shape[0] != k:
            raise ValueError("incompatible array sizes for np.dot(a, b)")
        out = np.empty(m)
        if m == 0:
            return out
        if k == 0:
            out[:] = 0.0
            return out
        s0, s1, step = a.strides[0] // 8, a.strides[1] // 8, x.strides[0] // 8
        if a.strides[1] == 8 and a.strides[0] % 8 == 0 and s0 >= max(a.shape[1], 1):
            rows, cols, lead, op = a.shape[1], a.shape[0], s0, _N if transposed else _T
        elif a.strides[0] == 8 and a.strides[1] % 8 == 0 and s1 >= max(a.shape[0], 1):
            rows, cols, lead, op = a.shape[0], a.shape[1], s1, _T if transposed else _N
        else:
            lead = 0
        if lead == 0 or x.strides[0] % 8 != 0 or step < 1:
            c = np.ascontiguousarray(a)
            y = np.ascontiguousarray(x)
            dgemv(_char_ref(_N if transposed else _T), _int_ref(c.shape[1]),
                  _int_ref(c.shape[0]), _double_ref(1.0), c.ctypes, _int_ref(max(c.shape[1], 1)),
                  y.ctypes, _int_ref(1), _double_ref(0.0), out.ctypes, _int_ref(1))
            return out
        dgemv(_char_ref(op), _int_ref(rows), _int_ref(cols), _double_ref(1.0), a.ctypes,
              _int_ref(lead), x.ctypes, _int_ref(step), _double_ref(0.0), out.ctypes,
              _int_ref(1))
        return out

    return product


def _dot_any(a, b):
    """``np.dot(a, b)`` of two float64 vectors (else NumPy's own)."""
    return np.dot(a, b)


def _dot_vv(a, b):
    if a.shape[0] != b.shape[0]:
        raise ValueError("incompatible array sizes for np.dot(a, b)")
    if a.shape[0] == 0:
        return 0.0
    return ddot(_int_ref(a.shape[0]), a.ctypes, _int_ref(1), b.ctypes, _int_ref(1))


def _f64(*ts):
    return all(isinstance(t, types.Array) and t.dtype == types.float64 for t in ts)


def _contiguous(t):
    return t.layout == "C" or t.ndim == 2 and t.layout == "F"


@overload(_matmul_any, jit_options=_OPTIONS)
def _matmul_impl(a, b):
    if not (_f64(a, b) and a.ndim + b.ndim in (3, 4)):
        return lambda a, b: a @ b
    if a.ndim == 2 and b.ndim == 1 and not (_contiguous(a) and b.layout == "C"):
        return _strided_matrix_vector(False)  # a strided view: read in place
    if a.ndim == 1 and b.ndim == 2 and not (_contiguous(b) and a.layout == "C"):
        strided_times = register_jitable(_strided_matrix_vector(True))
        return lambda a, b: strided_times(b, a)  # x @ a is a.T @ x
    if not (_contiguous(a) and _contiguous(b)):  # a strided view: copied to C order first
        return lambda a, b: _matmul_any(np.ascontiguousarray(a), np.ascontiguousarray(b))
    if a.ndim == 2 and b.ndim == 2:
        return _matrix_product(a.layout == "C", b.layout == "C")
    if a.ndim == 2:
        return _matrix_vector(a.layout == "C", False)
    vector_times = register_jitable(_matrix_vector(b.layout == "C", True))
    return lambda a, b: vector_times(b, a)  # x @ a is a.T @ x


@overload(_dot_any, jit_options=_OPTIONS)
def _dot_impl(a, b):
    if not (_f64(a, b) and a.ndim == 1 and b.ndim == 1):
        return lambda a, b: np.dot(a, b)
    if not (a.layout == "C" and b.layout == "C"):
        return lambda a, b: _dot_any(np.ascontiguousarray(a), np.ascontiguousarray(b))
    return _dot_vv


# ---- LAPACK -----------------------------------------------------------------------------------


def _solve_any(a, b):
    """``np.linalg.solve(a, b)``: ``b`` a vector or a matrix of right-hand sides."""
    return np.linalg.solve(a, b)


@register_jitable
def _square(a):
    if a.shape[0] != a.shape[1]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


def _solve_matrix(a, b):
    """``np.linalg.solve`` of a matrix of right-hand sides: by columns, a.T's C-ordered copy
    holds a, and b.T's holds b (n x nrhs); LAPACK overwrites it with the solution."""
    _square(a)
    n = a.shape[0]
    if b.shape[0] != n:
        raise ValueError("solve: the matrix and the right-hand side do not agree in size")
    x = np.ascontiguousarray(b.T).copy()
    _gesv(a, x, b.shape[1])
    return np.ascontiguousarray(x.T)


def _solve_vector(a, b):
    _square(a)
    if b.shape[0] != a.shape[0]:
        raise ValueError("solve: the matrix and the right-hand side do not agree in size")
    x = np.ascontiguousarray(b).copy()
    _gesv(a, x, 1)
    return x


@register_jitable
def _gesv(a, x, nrhs):
    n = a.shape[0]
    if n == 0 or nrhs == 0:
        return
    lu = np.ascontiguousarray(a.T).copy()
    pivots = empty(n, np.int32)
    ints = np.array([n, nrhs, n, 0], np.int32)
    dgesv(ints[0:].ctypes, ints[1:].ctypes, lu.ctypes, ints[2:].ctypes, pivots.ctypes,
          x.ctypes, ints[2:].ctypes, ints[3:].ctypes)
    if ints[3] > 0:
        raise np.linalg.LinAlgError("Singular matrix")


@register_jitable
def _lu(a):
    """(LU factors of ``a`` by columns, pivots, info): LAPACK's ``dgetrf`` of a's transpose's
    copy, which by columns is ``a`` itself."""
    _square(a)
    n = a.shape[0]
    lu = np.ascontiguousarray(a.T).copy()
    pivots = empty(max(n, 1), np.int32)
    ints = np.array([n, n, max(n, 1), 0], np.int32)
    if n > 0:
        dgetrf(ints[0:].ctypes, ints[1:].ctypes, lu.ctypes, ints[2:].ctypes, pivots.ctypes,
               ints[3:].ctypes)
    return lu, pivots, ints[3]


def _inv_any(a):
    """``np.linalg.inv(a)``."""
    return np.linalg.inv(a)


def _inv(a):
    lu, pivots, info = _lu(a)
    n = a.shape[0]
    if info > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    if n == 0:
        return lu
    work = empty(max(n, 1) * 64)
    ints = np.array([n, max(n, 1), work.size, 0], np.int32)
    dgetri(ints[0:].ctypes, lu.ctypes, ints[1:].ctypes, pivots.ctypes, work.ctypes,
           ints[2:].ctypes, ints[3:].ctypes)
    if ints[3] > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    return np.ascontiguousarray(lu.T)


def _slogdet_any(a):
    """``np.linalg.slogdet(a)``: (sign, log|det|)."""
    return np.linalg.slogdet(a)


def _slogdet(a):
    lu, pivots, info = _lu(a)
    n = a.shape[0]
    if info > 0:
        return 0.0, -np.inf
    sign = 1.0
    logdet = 0.0
    for k in range(n):
        d = lu[k, k]
        if pivots[k] != k + 1:
            sign = -sign
        if d < 0.0:
            sign = -sign
            d = -d
        logdet += np.log(d)
    return sign, logdet


def _det_any(a):
    """``np.linalg.det(a)``."""
    return np.linalg.det(a)


def _det(a):
    lu, pivots, info = _lu(a)
    n = a.shape[0]
    if info > 0:
        return 0.0
    out = 1.0
    for k in range(n):
        out *= lu[k, k] if pivots[k] == k + 1 else -lu[k, k]
    return out


def _cholesky_any(a):
    """``np.linalg.cholesky(a)``: the lower factor, from the lower triangle of ``a``."""
    return np.linalg.cholesky(a)


@register_jitable
def _potrf(a):
    """LAPACK's Cholesky factorisation of a copy of ``a``: the copy (by columns the factor U
    of a.T, whose upper triangle is a's lower one: by rows L) and LAPACK's status (> 0: not
    positive definite)."""
    _square(a)
    n = a.shape[0]
    out = np.ascontiguousarray(a).copy()  # by columns, a C-ordered copy of a holds a.T
    if n == 0:
        return out, 0
    ints = np.array([n, max(n, 1), 0], np.int32)
    dpotrf(_char_ref(_U), ints[0:].ctypes, out.ctypes, ints[1:].ctypes, ints[2:].ctypes)
    return out, ints[2]


def _cholesky(a):
    out, info = _potrf(a)
    if info > 0:
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    n = out.shape[0]
    for i in range(n):  # the factor U by columns is L by rows: clear what lies above it
        for j in range(i + 1, n):
            out[i, j] = 0.0
    return out


def _eigh_upper_any(b):
    """The eigenvectors of ``np.linalg.eigh(b.T, "U")``: of the symmetric matrix that the
    upper triangle of ``b.T`` (the lower one of ``b``) makes, with NumPy's signs. Numba's eigh
    reads the lower triangle only, and LAPACK's two paths give the same eigenvalues but not
    always the same signs of the eigenvectors, so this calls LAPACK's upper path as NumPy
    does (``dsyevd``, workspace sizes asked first)."""
    return np.linalg.eigh(b.T, "U")[1]


def _eigh_upper(b):
    _square(b)
    n = b.shape[0]
    # by columns, a C-ordered copy of b holds b.T, the matrix NumPy hands LAPACK
    out = np.ascontiguousarray(b).copy()
    if n == 0:
        return out
    w = np.empty(n)
    ints = np.array([n, max(n, 1), -1, -1, 0], np.int32)  # n, lda, lwork, liwork, info
    size, isize = np.empty(1), np.zeros(1, np.int32)
    dsyevd(_char_ref(_V), _char_ref(_U), ints[0:].ctypes, out.ctypes, ints[1:].ctypes,
           w.ctypes, size.ctypes, ints[2:].ctypes, isize.ctypes, ints[3:].ctypes,
           ints[4:].ctypes)
    work, iwork = np.empty(int(size[0])), np.empty(isize[0], np.int32)
    ints[2], ints[3] = work.size, iwork.size
    dsyevd(_char_ref(_V), _char_ref(_U), ints[0:].ctypes, out.ctypes, ints[1:].ctypes,
           w.ctypes, work.ctypes, ints[2:].ctypes, iwork.ctypes, ints[3:].ctypes,
           ints[4:].ctypes)
    if ints[4] > 0:
        raise np.linalg.LinAlgError("Eigenvalues did not converge")
    return np.ascontiguousarray(out.T)  # by columns the buffer holds V: by rows, V.T


def _cholesky_fails_any(a):
    """Whether ``np.linalg.cholesky(a)`` raises LinAlgError (run as Python: NumPy's answer)."""
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return True
    return False


def _cholesky_fails(a):
    """The same LAPACK factorisation as `_cholesky`, on a copy, its status read instead of
    raised."""
    return _potrf(a)[1] > 0


@overload(_cholesky_fails_any, jit_options=_OPTIONS)
def _cholesky_fails_impl(a):
    if _f64(a) and a.ndim == 2:
        return _cholesky_fails
    return None


# Compiled code calls these for float64 matrices, Numba's own NumPy for anything else.


@overload(_solve_any, jit_options=_OPTIONS)
def _solve_impl(a, b):
    if _f64(a, b) and a.ndim == 2:
        return _solve_matrix if b.ndim == 2 else _solve_vector
    return lambda a, b: np.linalg.solve(a, b)


@overload(_inv_any, jit_options=_OPTIONS)
def _inv_impl(a):
    return _inv if _f64(a) and a.ndim == 2 else (lambda a: np.linalg.inv(a))


@overload(_slogdet_any, jit_options=_OPTIONS)
def _slogdet_impl(a):
    return _slogdet if _f64(a) and a.ndim == 2 else (lambda a: np.linalg.slogdet(a))


@overload(_det_any, jit_options=_OPTIONS)
def _det_impl(a):
    return _det if _f64(a) and a.ndim == 2 else (lambda a: np.linalg.det(a))


@overload(_eigh_upper_any, jit_options=_OPTIONS)
def _eigh_upper_impl(b):
    return _eigh_upper  # float64: generated code passes `_as_float` operands


@overload(_cholesky_any, jit_options=_OPTIONS)
def _cholesky_impl(a):
    return _cholesky if _f64(a) and a.ndim == 2 else (lambda a: np.linalg.cholesky(a))


# ---- the helpers generated code calls -----------------------------------------------------------

# The helpers that call BLAS or LAPACK, which Numba finds through SciPy when they first run: a
# helper loaded from the disk cache never asks for SciPy while compiling, and without SciPy
# the process would abort at the call (`compile.require_scipy` refuses the module first).
USES_SCIPY = ("matmul", "dot", "inv", "solve", "det", "cholesky", "cholesky_fails",
              "logabsdet", "signdet", "eigvalsh", "eigh_vectors", "eigh_vectors_upper",
              "eig_values", "eig_vectors", "svdvals", "svd_u", "svd_vt", "qr_q", "qr_r", "pinv",
              "matrix_rank", "sqrtm", "sqrtm_adjoint", "inv_stack", "det_stack")


@jit(needs=link_routines)
def matmul(a, b):
    """``a @ b`` (a matrix among them)."""
    return _matmul_any(a, b)


@jit(needs=link_routines)
def dot(a, b):
    """``np.dot(a, b)`` of two vectors, or of a number and an array."""
    return _dot_any(a, b)


@jit(needs=link_routines)
def inv(a):
    return _inv_any(a)


@jit(needs=link_routines)
def inv_stack(a):
    """np.linalg.inv of a stack of matrices (the helpers take one): each in turn."""
    out = empty(a.shape)
    for k in range(a.shape[0]):
        out[k] = _inv_any(a[k])
    return out


@jit(needs=link_routines)
def det_stack(a):
    out = empty(a.shape[0])
    for k in range(a.shape[0]):
        out[k] = _det_any(a[k])
    return out


@jit(needs=link_routines)
def solve(a, b):
    return _solve_any(a, b)


@jit(needs=link_routines)
def det(a):
    return _det_any(a)


@jit(needs=link_routines)
def cholesky(a):
    return _cholesky_any(a)


@jit(needs=link_routines)
def cholesky_fails(a):
    """Whether ``cholesky(a)`` raises LinAlgError (a try around a Cholesky,
    `build_stmts.guarded_try`)."""
    return _cholesky_fails_any(a)


@jit(needs=link_routines)
def logabsdet(a):
    return _slogdet_any(a)[1]


@jit(needs=link_routines)
def signdet(a):
    return _slogdet_any(a)[0]


# ---- decompositions (`prims.decompositions`): one helper per result, NumPy's values, through
# Numba's own np.linalg (its LAPACK wrappers, seconds to compile once per machine: no direct
# routine here yet)


@jit
def eigvalsh(a):
    return np.linalg.eigvalsh(a)


@jit
def eigh_vectors(a):
    return np.linalg.eigh(a)[1]


@jit(needs=link_routines)
def eigh_vectors_upper(b):
    return _eigh_upper_any(b)


_COMPLEX_EIGENVALUES = ("jitgrad: np.linalg.eig of a matrix with complex eigenvalues, built "
                        "real (take np.linalg.eig(a + 0j) for complex ones)")


@jit
def _check_real(w):
    """`ComplexEigenvalues` where the eigenvalues of the matrix, built real, are complex (the
    caller builds again with complex ones), compiled and as plain Python alike."""
    if np.any(w.imag != 0.0):
        raise ComplexEigenvalues(_COMPLEX_EIGENVALUES)


@register_jitable
def _real_eig(a):
    """np.linalg.eig of a real matrix whose eigenvalues are real. Numba's eig raises a
    ValueError of its own for complex ones (NumPy would change the dtype): that, for a finite
    matrix, is `ComplexEigenvalues`."""
    try:
        w, v = np.linalg.eig(a)
        _check_real(w)  # (as plain Python: NumPy gives the complex ones)
        return w, v
    except Exception:  # noqa: BLE001, S110 - Numba's domain change, or a non-finite matrix
        pass  # (Numba raises nothing inside `except`: after it)
    if np.all(np.isfinite(a)):
        raise ComplexEigenvalues(_COMPLEX_EIGENVALUES)
    raise ValueError("np.linalg.eig: the matrix holds infs or NaNs")


@jit
def eig_values(a):
    return _real_eig(a)[0].real.copy()


@jit
def eig_vectors(a):
    return _real_eig(a)[1].real.copy()


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
    out = zeros((n, n))
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
    out = zeros((n, n))
    for j in range(n):
        out[0, j] = -p[j + 1] / p[0]
    for i in range(1, n):
        out[i, i - 1] = 1.0
    return out
