"""Products and linear algebra for generated code (``_rt.<name>``, re-exported by `runtime`),
calling BLAS and LAPACK directly.

Takes float arrays (`lowering` converts integer operands to float first); float64 arrays of any
layout (C-ordered, F-ordered, or copied first) go to BLAS and LAPACK, and so do float32 operands
of a product (``sgemm``/``sgemv``/``sdot``, a float32 result as NumPy's), other dtypes to
Numba's own ``np.linalg`` and ``@``. Guarantees NumPy's results (the routines NumPy calls:
``dgesv`` for ``solve``, ``dgetrf`` + ``dgetri`` for ``inv``, ``dpotrf`` for ``cholesky``,
``dgemm``/``dgemv``/``ddot`` for products) and NumPy's errors: ``LinAlgError`` for a singular matrix or one that is
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

import functools

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
_FLT = types.CPointer(types.float32)
_CHR = types.CPointer(types.uint8)

# The routines, as `compile.scipy_c_function`s (Fortran signatures: every argument by address)
_BLAS = {
    "dgemm": types.void(_CHR, _CHR, _INT, _INT, _INT, _DBL, _DBL, _INT, _DBL, _INT, _DBL, _DBL,
                        _INT),
    "dgemv": types.void(_CHR, _INT, _INT, _DBL, _DBL, _INT, _DBL, _INT, _DBL, _DBL, _INT),
    "ddot": types.float64(_INT, _DBL, _INT, _DBL, _INT),
    # float32 operands: the same products in single precision, as NumPy's
    "sgemm": types.void(_CHR, _CHR, _INT, _INT, _INT, _FLT, _FLT, _INT, _FLT, _INT, _FLT, _FLT,
                        _INT),
    "sgemv": types.void(_CHR, _INT, _INT, _FLT, _FLT, _INT, _FLT, _INT, _FLT, _FLT, _INT),
    "sdot": types.float32(_INT, _FLT, _INT, _FLT, _INT),
}
_LAPACK = {
    "dgesv": types.void(_INT, _INT, _DBL, _INT, _INT, _DBL, _INT, _INT),
    "dgetrf": types.void(_INT, _INT, _DBL, _INT, _INT, _INT),
    "dgetri": types.void(_INT, _DBL, _INT, _INT, _DBL, _INT, _INT),
    "dpotrf": types.void(_CHR, _INT, _DBL, _INT, _INT),
    "dsyevd": types.void(_CHR, _CHR, _INT, _DBL, _INT, _DBL, _DBL, _INT, _INT, _INT, _INT),
}
dgemm, dgemv, ddot, sgemm, sgemv, sdot = (scipy_c_function(name, sig)
                                          for name, sig in _BLAS.items())
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
_real_ref = _by_address(ir.FloatType(), types.float32)  # REAL
_N, _T, _U, _V = ord("N"), ord("T"), ord("U"), ord("V")


def _matmul_any(a, b):
    """``a @ b`` of float arrays of one dtype, one of them a matrix."""
    return a @ b


# The routines of one precision: (gemm, gemv, dot, a scalar by address, the item's bytes)
_DOUBLE = (dgemm, dgemv, ddot, _double_ref, 8)
_SINGLE = (sgemm, sgemv, sdot, _real_ref, 4)


def _precision(*ts):
    """The routines for operands ``ts`` (arrays of one float dtype: float64 or float32), or
    None (mixed or other dtypes: Numba's own)."""
    if not all(isinstance(t, types.Array) for t in ts):
        return None
    dtypes = {t.dtype for t in ts}
    return {types.float64: _DOUBLE, types.float32: _SINGLE}.get(dtypes.pop()) \
        if len(dtypes) == 1 else None


# Each product is compiled for its operands' layouts, known while compiling: BLAS reads memory
# by columns, so it sees a C-ordered matrix (m x k) as its transpose, leading dimension k, and
# an F-ordered one as itself, m. One function per layout pair and precision, with no calls of
# its own (each compiled function costs Numba 0.1-0.3 s: a product written with helpers took
# longer to compile than Numba's own). The result has the operands' dtype, as NumPy's.


@functools.cache
def _matrix_product(a_rows, b_rows, precision):
    """``a @ b`` of two matrices; ``a_rows``/``b_rows``: whether each is C-ordered."""
    op_a = _N if a_rows else _T  # the routine computes out.T = b.T @ a.T, by columns
    op_b = _N if b_rows else _T
    gemm, _, _, scalar, _ = precision

    def product(a, b):
        m, k = a.shape
        if b.shape[0] != k:
            raise ValueError("incompatible array sizes for np.dot(a, b)")
        n = b.shape[1]
        if k == 0:
            return zeros((m, n), a.dtype)
        out = empty((m, n), a.dtype)
        if m == 0 or n == 0:
            return out
        lda = a.shape[1] if a_rows else a.shape[0]
        lda = lda if lda > 1 else 1  # noqa: FURB136 - Numba's max is a compile of its own
        ldb = b.shape[1] if b_rows else b.shape[0]
        ldb = ldb if ldb > 1 else 1  # noqa: FURB136
        gemm(_char_ref(op_b), _char_ref(op_a), _int_ref(n), _int_ref(m), _int_ref(k),
             scalar(1.0), b.ctypes, _int_ref(ldb), a.ctypes, _int_ref(lda),
             scalar(0.0), out.ctypes, _int_ref(n))
        return out

    return product


@functools.cache
def _matrix_vector(a_rows, transposed, precision):
    """``a @ x`` (``transposed``: ``a.T @ x``) of a matrix and a C-ordered vector."""
    op = _T if a_rows != transposed else _N
    _, gemv, _, scalar, _ = precision

    def product(a, b):  # (the names the overload's typing has: b is the vector)
        x = b
        m, k = (a.shape[1], a.shape[0]) if transposed else (a.shape[0], a.shape[1])
        if x.shape[0] != k:
            raise ValueError("incompatible array sizes for np.dot(a, b)")
        if k == 0:
            return zeros(m, a.dtype)
        out = empty(m, a.dtype)
        if m == 0:
            return out
        rows, cols = (a.shape[1], a.shape[0]) if a_rows else (a.shape[0], a.shape[1])
        lda = rows if rows > 1 else 1  # noqa: FURB136 - Numba's max is a compile of its own
        gemv(_char_ref(op), _int_ref(rows), _int_ref(cols), scalar(1.0), a.ctypes,
             _int_ref(lda), x.ctypes, _int_ref(1), scalar(0.0), out.ctypes, _int_ref(1))
        return out

    return product


def _strided_matrix_vector(transposed, precision):
    """``a @ x`` (``transposed``: ``a.T @ x``) where ``a`` or ``x`` is a strided view
    (``data[:, i:m]``, ``data[:, i]``): BLAS reads a matrix whose rows (or columns) are
    contiguous with the distance between them as its leading dimension, and a vector with a
    stride, so no copy is made (covariance's loop of products of column slices copied both
    operands once per iteration, in the forward and in the adjoint pass); other layouts
    (negative or zero strides, neither axis contiguous) are copied to C order first."""
    _, gemv, _, scalar, item = precision

    def product(a, b):
        x = b
        m, k = (a.shape[1], a.shape[0]) if transposed else (a.shape[0], a.shape[1])
        if x.shape[0] != k:
            raise ValueError("incompatible array sizes for np.dot(a, b)")
        out = empty(m, a.dtype)
        if m == 0:
            return out
        if k == 0:
            out[:] = 0.0
            return out
        s0, s1, step = a.strides[0] // item, a.strides[1] // item, x.strides[0] // item
        if a.strides[1] == item and a.strides[0] % item == 0 and s0 >= max(a.shape[1], 1):
            rows, cols, lead, op = a.shape[1], a.shape[0], s0, _N if transposed else _T
        elif a.strides[0] == item and a.strides[1] % item == 0 and s1 >= max(a.shape[0], 1):
            rows, cols, lead, op = a.shape[0], a.shape[1], s1, _T if transposed else _N
        else:
            lead = 0
        if lead == 0 or x.strides[0] % item != 0 or step < 1:
            c = np.ascontiguousarray(a)
            y = np.ascontiguousarray(x)
            gemv(_char_ref(_N if transposed else _T), _int_ref(c.shape[1]),
                 _int_ref(c.shape[0]), scalar(1.0), c.ctypes, _int_ref(max(c.shape[1], 1)),
                 y.ctypes, _int_ref(1), scalar(0.0), out.ctypes, _int_ref(1))
            return out
        gemv(_char_ref(op), _int_ref(rows), _int_ref(cols), scalar(1.0), a.ctypes,
             _int_ref(lead), x.ctypes, _int_ref(step), scalar(0.0), out.ctypes,
             _int_ref(1))
        return out

    return product


def _dot_any(a, b):
    """``np.dot(a, b)`` of two float vectors of one dtype (else NumPy's own)."""
    return np.dot(a, b)


@functools.cache
def _vector_dot(precision):
    """``np.dot(a, b)`` of two C-ordered vectors."""
    dot_routine = precision[2]
    zero = np.float64(0.0) if precision[4] == 8 else np.float32(0.0)  # (the result's type)

    def product(a, b):
        if a.shape[0] != b.shape[0]:
            raise ValueError("incompatible array sizes for np.dot(a, b)")
        if a.shape[0] == 0:
            return zero
        return dot_routine(_int_ref(a.shape[0]), a.ctypes, _int_ref(1), b.ctypes, _int_ref(1))

    return product


def _f64(*ts):
    return all(isinstance(t, types.Array) and t.dtype == types.float64 for t in ts)


def _contiguous(t):
    return t.layout == "C" or t.ndim == 2 and t.layout == "F"


@overload(_matmul_any, jit_options=_OPTIONS)
def _matmul_impl(a, b):
    precision = _precision(a, b)
    if precision is None or a.ndim + b.ndim not in (3, 4):
        return lambda a, b: a @ b
    if a.ndim == 2 and b.ndim == 1 and not (_contiguous(a) and b.layout == "C"):
        return _strided_matrix_vector(False, precision)  # a strided view: read in place
    if a.ndim == 1 and b.ndim == 2 and not (_contiguous(b) and a.layout == "C"):
        strided_times = register_jitable(_strided_matrix_vector(True, precision))
        return lambda a, b: strided_times(b, a)  # x @ a is a.T @ x
    if not (_contiguous(a) and _contiguous(b)):  # a strided view: copied to C order first
        return lambda a, b: _matmul_any(np.ascontiguousarray(a), np.ascontiguousarray(b))
    if a.ndim == 2 and b.ndim == 2:
        return _matrix_product(a.layout == "C", b.layout == "C", precision)
    if a.ndim == 2:
        return _matrix_vector(a.layout == "C", False, precision)
    vector_times = register_jitable(_matrix_vector(b.layout == "C", True, precision))
    return lambda a, b: vector_times(b, a)  # x @ a is a.T @ x


@overload(_dot_any, jit_options=_OPTIONS)
def _dot_impl(a, b):
    precision = _precision(a, b)
    if precision is None or not (a.ndim == 1 and b.ndim == 1):
        return lambda a, b: np.dot(a, b)
    if not (a.layout == "C" and b.layout == "C"):
        return lambda a, b: _dot_any(np.ascontiguousarray(a), np.ascontiguousarray(b))
    return _vector_dot(precision)


# ---- LAPACK -----------------------------------------------------------------------------------

# Each float64 routine is one compiled function (`compile.jit`'s ``choose=``) for matrices of any
# layout (``any_layout``), calling nothing compiled of its own: its operand is copied into a
# new buffer by a loop in its body (NumPy's ascontiguousarray of a transpose compiled 1,200
# lines of IR), LAPACK's integers are stack slots (`_int_ref`, read back by `_value`), and the
# checks are written where they are needed. Wrapped in an overload calling helpers, a routine
# was four or five compiled functions, each optimised again inside its caller: ``inv`` took
# 1.4 s to compile, 0.4 s written flat. The helpers' bodies are NumPy's own, which Numba
# compiles for other dtypes (and which runs under ``JITGRAD_DISABLE_JIT=1``).


@intrinsic
def _value(typingctx, ref):
    """The value in the stack slot ``ref`` (`_int_ref`) after LAPACK wrote into it."""
    if not isinstance(ref, types.CPointer):
        return None

    def codegen(context, builder, signature, args):
        return builder.load(args[0])

    return ref.dtype(ref), codegen


_SQUARE = "Last 2 dimensions of the array must be square"
_SIZES = "solve: the matrix and the right-hand side do not agree in size"


def _f64_matrix(a, *others):
    """Whether a helper's operands are float64 arrays, ``a`` a matrix (`compile.jit`'s
    ``choose``: the routines below for these, NumPy's own for others)."""
    return _f64(a, *others) and a.ndim == 2


def _solve_vector(a, b):
    """``np.linalg.solve(a, b)`` of a vector ``b`` by LAPACK's ``dgesv``: its matrix by columns
    is a.T's C-ordered copy, the solution overwrites a copy of ``b``."""
    n = a.shape[0]
    if a.shape[1] != n:
        raise np.linalg.LinAlgError(_SQUARE)
    if b.shape[0] != n:
        raise ValueError(_SIZES)
    x = empty(n)
    for i in range(n):
        x[i] = b[i]
    if n == 0:
        return x
    lu = empty((n, n))
    for i in range(n):
        for j in range(n):
            lu[j, i] = a[i, j]
    pivots = empty(n, np.int32)
    info = _int_ref(0)
    dgesv(_int_ref(n), _int_ref(1), lu.ctypes, _int_ref(n), pivots.ctypes, x.ctypes,
          _int_ref(n), info)
    if _value(info) > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    return x


def _solve_matrix(a, b):
    """``np.linalg.solve`` of a matrix of right-hand sides: as `_solve_vector`, ``b`` (n x
    nrhs) by columns is b.T's C-ordered copy, and so is the solution."""
    n = a.shape[0]
    if a.shape[1] != n:
        raise np.linalg.LinAlgError(_SQUARE)
    if b.shape[0] != n:
        raise ValueError(_SIZES)
    nrhs = b.shape[1]
    x = empty((nrhs, n))
    for i in range(n):
        for j in range(nrhs):
            x[j, i] = b[i, j]
    if n > 0 and nrhs > 0:
        lu = empty((n, n))
        for i in range(n):
            for j in range(n):
                lu[j, i] = a[i, j]
        pivots = empty(n, np.int32)
        info = _int_ref(0)
        dgesv(_int_ref(n), _int_ref(nrhs), lu.ctypes, _int_ref(n), pivots.ctypes, x.ctypes,
              _int_ref(n), info)
        if _value(info) > 0:
            raise np.linalg.LinAlgError("Singular matrix")
    out = empty((n, nrhs))
    for i in range(n):
        for j in range(nrhs):
            out[i, j] = x[j, i]
    return out


def _inv(a):
    """``np.linalg.inv(a)``: LAPACK's ``dgetrf`` then ``dgetri`` of a.T's C-ordered copy (by
    columns, ``a``)."""
    n = a.shape[0]
    if a.shape[1] != n:
        raise np.linalg.LinAlgError(_SQUARE)
    lu = empty((n, n))
    for i in range(n):
        for j in range(n):
            lu[j, i] = a[i, j]
    if n == 0:
        return lu
    pivots = empty(n, np.int32)
    info = _int_ref(0)
    dgetrf(_int_ref(n), _int_ref(n), lu.ctypes, _int_ref(n), pivots.ctypes, info)
    if _value(info) > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    work = empty(n * 64)
    dgetri(_int_ref(n), lu.ctypes, _int_ref(n), pivots.ctypes, work.ctypes, _int_ref(n * 64),
           info)
    if _value(info) > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    out = empty((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = lu[j, i]
    return out


def _lu_det(part):
    """The body of `det`, `logabsdet` or `signdet` (``part``) of a float64 matrix: LAPACK's
    ``dgetrf`` of a.T's C-ordered copy, then the diagonal and the pivots; NumPy's values (a
    singular matrix: det 0, sign 0, log|det| -inf)."""

    def body(a):
        n = a.shape[0]
        if a.shape[1] != n:
            raise np.linalg.LinAlgError(_SQUARE)
        lu = empty((n, n))
        for i in range(n):
            for j in range(n):
                lu[j, i] = a[i, j]
        pivots = empty(n, np.int32)
        info = _int_ref(0)
        if n > 0:
            dgetrf(_int_ref(n), _int_ref(n), lu.ctypes, _int_ref(n), pivots.ctypes, info)
        singular = _value(info) > 0
        if part == "det":
            if singular:
                return 0.0
            out = 1.0
            for k in range(n):
                out *= lu[k, k] if pivots[k] == k + 1 else -lu[k, k]
            return out
        if part == "sign":
            if singular:
                return 0.0
            sign = 1.0
            for k in range(n):
                if pivots[k] != k + 1:
                    sign = -sign
                if lu[k, k] < 0.0:
                    sign = -sign
            return sign
        if singular:
            return -np.inf
        logdet = 0.0
        for k in range(n):
            d = lu[k, k]
            logdet += np.log(-d if d < 0.0 else d)
        return logdet

    body.__name__ = body.__qualname__ = f"_lu_{part}"  # (Numba's cache index: one per part)
    return body


_det, _signdet, _logabsdet = _lu_det("det"), _lu_det("sign"), _lu_det("log")


def _potrf(fails):
    """The body of `cholesky` (``fails``: of `cholesky_fails`) of a float64 matrix: LAPACK's
    ``dpotrf`` of a C-ordered copy of ``a`` (by columns a.T, whose upper triangle is a's lower
    one: the factor U it leaves is by rows L). `cholesky` raises LinAlgError where LAPACK says
    the matrix is not positive definite; `cholesky_fails` says whether it does."""

    def body(a):
        n = a.shape[0]
        if a.shape[1] != n:
            raise np.linalg.LinAlgError(_SQUARE)
        out = empty((n, n))
        for i in range(n):
            for j in range(n):
                out[i, j] = a[i, j]
        info = _int_ref(0)
        if n > 0:
            dpotrf(_char_ref(_U), _int_ref(n), out.ctypes, _int_ref(n), info)
        if fails:
            return _value(info) > 0
        if _value(info) > 0:
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        for i in range(n):  # the factor U by columns is L by rows: clear what lies above it
            for j in range(i + 1, n):
                out[i, j] = 0.0
        return out

    body.__name__ = body.__qualname__ = "_cholesky_fails" if fails else "_cholesky"
    return body


_cholesky, _cholesky_fails = _potrf(False), _potrf(True)


def _eigh_upper(b):
    """The eigenvectors of ``np.linalg.eigh(b.T, "U")``: of the symmetric matrix that the
    upper triangle of ``b.T`` (the lower one of ``b``) makes, with NumPy's signs. Numba's eigh
    reads the lower triangle only, and LAPACK's two paths give the same eigenvalues but not
    always the same signs of the eigenvectors, so this calls LAPACK's upper path as NumPy
    does (``dsyevd``, workspace sizes asked first)."""
    n = b.shape[0]
    if b.shape[1] != n:
        raise np.linalg.LinAlgError(_SQUARE)
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


# ---- the helpers generated code calls -----------------------------------------------------------

# The helpers that call BLAS or LAPACK, which Numba finds through SciPy when they first run: a
# helper loaded from the disk cache never asks for SciPy while compiling, and without SciPy
# the process would abort at the call (`compile.require_scipy` refuses the module first).
USES_SCIPY = ("matmul", "dot", "inv", "solve", "det", "cholesky", "cholesky_fails",
              "logabsdet", "signdet", "eigvalsh", "eigh_vectors", "eigh_vectors_upper",
              "eig_values", "eig_vectors", "svdvals", "svd_u", "svd_vt", "qr_q", "qr_r", "pinv",
              "matrix_rank", "sqrtm", "sqrtm_adjoint", "inv_stack", "det_stack")


# `matmul` and `dot` compile the body their overload chooses for the operands as their own
# signature (`compile.jit`'s ``choose``; the product factories are memoised, one closure per
# layout and precision): one compiled function per signature where the helper and its overload
# were two (0.13-0.3 s of a first gradient on a new machine, logreg's and gp's).
@jit(needs=link_routines, choose=_matmul_impl)
def matmul(a, b):
    """``a @ b`` (a matrix among them)."""
    return _matmul_any(a, b)


@jit(needs=link_routines, choose=_dot_impl)
def dot(a, b):
    """``np.dot(a, b)`` of two vectors, or of a number and an array."""
    return _dot_any(a, b)


def _lapack(routine):
    """`compile.jit` of a LAPACK helper: ``routine`` for a float64 matrix of any layout, the
    helper's own body (NumPy's) for other operands."""
    return jit(needs=link_routines, any_layout=True,
               choose=lambda a, *others: routine if _f64_matrix(a, *others) else None)


@_lapack(_inv)
def inv(a):
    return np.linalg.inv(a)


@jit(needs=link_routines)
def inv_stack(a):
    """np.linalg.inv of a stack of matrices (the helpers take one): each in turn."""
    out = empty(a.shape)
    for k in range(a.shape[0]):
        out[k] = inv(a[k])
    return out


@jit(needs=link_routines)
def det_stack(a):
    out = empty(a.shape[0])
    for k in range(a.shape[0]):
        out[k] = det(a[k])
    return out


@jit(needs=link_routines, any_layout=True,
     choose=lambda a, b: (_solve_vector if b.ndim == 1 else _solve_matrix)
     if _f64_matrix(a, b) else None)
def solve(a, b):
    """``np.linalg.solve(a, b)``: ``b`` a vector or a matrix of right-hand sides."""
    return np.linalg.solve(a, b)


@_lapack(_det)
def det(a):
    return np.linalg.det(a)


@_lapack(_cholesky)
def cholesky(a):
    """``np.linalg.cholesky(a)``: the lower factor, from the lower triangle of ``a``."""
    return np.linalg.cholesky(a)


@_lapack(_cholesky_fails)
def cholesky_fails(a):
    """Whether ``cholesky(a)`` raises LinAlgError (a try around a Cholesky,
    `build_stmts.guarded_try`); float64 matrices only (run as Python: NumPy's answer)."""
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return True
    return False


@_lapack(_logabsdet)
def logabsdet(a):
    return np.linalg.slogdet(a)[1]


@_lapack(_signdet)
def signdet(a):
    return np.linalg.slogdet(a)[0]

# ---- decompositions (`prims.decompositions`): one helper per result, NumPy's values, through
# Numba's own np.linalg (its LAPACK wrappers, seconds to compile once per machine: no direct
# routine here yet)


@jit
def eigvalsh(a):
    return np.linalg.eigvalsh(a)


@jit
def eigh_vectors(a):
    return np.linalg.eigh(a)[1]


@_lapack(_eigh_upper)
def eigh_vectors_upper(b):
    """The eigenvectors of ``np.linalg.eigh(b.T, "U")`` (`_eigh_upper`)."""
    return np.linalg.eigh(b.T, "U")[1]


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
