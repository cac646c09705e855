"""Small array helpers that generated code calls as ``_rt.<name>``.

Written as plain loops so that Numba compiles them in a fraction of a second (``np.sum(axis=)``
takes seconds) and so that they cover what Numba rejects (``keepdims=``, ``np.max(axis=)``).
Each is compiled with `compile.jit` (``numba.njit(cache=True)``, or left as plain Python under
``JITGRAD_DISABLE_JIT=1``).

Each takes arrays of any rank; where a result's shape cannot be computed inside Numba, the
generated code passes it in (``out_shape``), since it knows every rank.

Generated code calls an elementwise primitive on arrays as ``_rt.<name>``: a loop compiled once
per machine where this module defines one, NumPy's ufunc itself (`NUMPY_AS_IS`), or a Numba ufunc
of the primitive's scalar function made on first use (`UFUNC_SCALARS`, bound by `bind_ufuncs`
before a module that calls it compiles).
"""

from __future__ import annotations

import math
import re

import numpy as np

from jitgrad.backend.numba.compile import (
    jit,
    limit_threads,  # noqa: F401 - for parallel loops
    set_chunksize,  # noqa: F401 - for parallel loops
    set_threads,  # noqa: F401 - for parallel loops
    vectorize,
)

# Reads and writes through masks and index arrays (their positions, checked): generated code
# calls them as _rt.<name> too.
from jitgrad.backend.numba.runtime_index import (  # noqa: F401 - re-exported
    along_positions,
    mask_positions,
    mask_rows,
    pair_positions,
    rows_at,
    same_shape,
    take_add_rows,
    take_add_vector,
    unpack_count,
)
from jitgrad.core import chunking
from jitgrad.core.errors import SizesDiffer
from jitgrad.prims import elementwise, reductions


@jit
def _split(x, axis):
    """(before, n, after): the sizes of ``x`` before, at and after ``axis``."""
    pre = 1
    post = 1
    for k in range(x.ndim):
        if k < axis:
            pre *= x.shape[k]
        elif k > axis:
            post *= x.shape[k]
    return pre, x.shape[axis], post


@jit
def sum_axis(x, axis, out_shape):
    """``np.sum(x, axis)``, reshaped to ``out_shape`` (with or without the kept axis)."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.zeros((pre, post), dtype=x.dtype)
    for a in range(pre):
        for j in range(n):
            for b in range(post):
                out[a, b] += xc[a, j, b]
    return out.reshape(out_shape)


@jit
def _extreme_axis(x, axis, out_shape, largest):
    """The max (``largest``) or min of ``x`` over ``axis``; NaN propagates as in NumPy."""
    pre, n, post = _split(x, axis)
    if pre * post:
        nonempty(n)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.empty((pre, post), dtype=x.dtype)
    for a in range(pre):
        for b in range(post):
            out[a, b] = xc[a, 0, b]
        for j in range(1, n):
            for b in range(post):
                v = xc[a, j, b]
                if (v > out[a, b] if largest else v < out[a, b]) or np.isnan(v):
                    out[a, b] = v
    return out.reshape(out_shape)


@jit
def max_axis(x, axis, out_shape):
    """``np.max(x, axis)`` reshaped to ``out_shape`` (Numba rejects the axis argument)."""
    return _extreme_axis(x, axis, out_shape, True)


@jit
def min_axis(x, axis, out_shape):
    """``np.min(x, axis)`` reshaped to ``out_shape``."""
    return _extreme_axis(x, axis, out_shape, False)


@jit
def sum_to(c, like):
    """Sum ``c`` over the axes where ``like`` (of the same rank) has size 1 but ``c`` has not:
    the adjoint of NumPy broadcasting. Returns ``c`` itself (contiguous) when shapes agree."""
    if c.shape == like.shape:
        return np.ascontiguousarray(c)
    out = np.zeros(like.shape)
    cc = np.ascontiguousarray(c)
    flat_c = cc.reshape(cc.size)
    flat_o = out.reshape(out.size)
    for i in range(flat_c.size):
        rem = i
        o = 0
        mult = 1
        for k in range(c.ndim - 1, -1, -1):
            ik = rem % c.shape[k]
            rem //= c.shape[k]
            if like.shape[k] != 1:
                o += ik * mult
            mult *= like.shape[k]
        flat_o[o] += flat_c[i]
    return out


@jit
def spread(g, like, axis):
    """``g`` (``like`` reduced over ``axis``, the axis kept or not) copied back along ``axis``
    to the shape of ``like``: the adjoint of a sum."""
    pre, n, post = _split(like, axis)
    gc = np.ascontiguousarray(g).reshape((pre, post))
    out = np.empty((pre, n, post))
    for a in range(pre):
        for j in range(n):
            for b in range(post):
                out[a, j, b] = gc[a, b]
    return out.reshape(like.shape)


@jit
def choose_share(x, m, axis):
    """Weights of the entries of ``x`` equal to ``m`` (its max or min over ``axis``, kept or
    not): 1/count each, 0 elsewhere, so tied extremes share the gradient equally."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    mc = np.ascontiguousarray(m).reshape((pre, post))
    out = np.zeros((pre, n, post))
    for a in range(pre):
        for b in range(post):
            count = 0
            for j in range(n):
                if xc[a, j, b] == mc[a, b]:
                    count += 1
            for j in range(n):
                if xc[a, j, b] == mc[a, b]:
                    out[a, j, b] = 1.0 / count
    return out.reshape(x.shape)


@jit
def choose_share_all(x, m):
    """``choose_share`` over all axes (``m`` is the max or min of the whole array)."""
    hit = x == m
    return hit / np.sum(hit)


@jit
def broadcast_like(g, like):
    """``g`` broadcast to the shape of ``like``, as a new array."""
    return np.zeros(like.shape) + g


# Linear algebra: NumPy's functions as Numba compiles them (LAPACK wrappers that take seconds
# to compile), here so that they compile once per machine and signature (cache=True), not in
# every generated module.


# The helpers that call BLAS or LAPACK, which Numba finds through SciPy when they first run: a
# helper loaded from the disk cache never asks for SciPy while compiling, and without SciPy
# the process would abort at the call (`compile.require_scipy` refuses the module first).
USES_SCIPY = ("matmul", "dot", "inv", "solve", "det", "cholesky", "logabsdet", "signdet")


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


# Allocations. Numba compiles every inline ``np.empty``/``np.zeros``/``np.zeros_like`` form
# anew in each process (30-250 ms each, a third of a small gradient's compile); these are
# compiled once per machine (`warm` compiles the common shapes ahead of use). The generated
# code names them through `lowering.allocation`: ``_rt.<how>(shape[, np.int64 | np.bool_])``.

@jit
def empty(shape, dtype=np.float64):
    """``np.empty(shape, dtype)``."""
    return np.empty(shape, dtype)


@jit
def zeros(shape, dtype=np.float64):
    """``np.zeros(shape, dtype)``."""
    return np.zeros(shape, dtype)


@jit
def ones(shape, dtype=np.float64):
    """``np.ones(shape, dtype)``."""
    return np.ones(shape, dtype)


@jit
def full(shape, value):
    """``np.full(shape, value)`` (float64)."""
    return np.full(shape, value)


@jit
def nonnegative(n):
    """``max(0, n)`` of an integer (a loop's trip count); see `larger`. One argument: a
    literal ``0`` passed in would make Numba compile (and cache) a signature per constant."""
    return max(0, n)


@jit
def eye(n):
    """``np.eye(n)``; see the allocations above (Numba's own took 0.6 s in each process)."""
    out = np.zeros((n, n))
    for k in range(n):
        out[k, k] = 1.0
    return out


@jit
def arange(start, stop, step):
    """``np.arange(start, stop, step)`` of integers (0.3 s in each process as NumPy's)."""
    n = trip_count(start, stop, step)
    out = np.empty(n, np.int64)
    for k in range(n):
        out[k] = start + k * step
    return out


@jit
def outer(x, y):
    """``np.outer(x, y)`` of float vectors, as loops (NumPy's took 1.2 s in each process)."""
    xf = x.ravel()
    yf = y.ravel()
    out = np.empty((xf.size, yf.size))
    for i in range(xf.size):
        for j in range(yf.size):
            out[i, j] = xf[i] * yf[j]
    return out


@jit
def larger(a, b):
    """``max(a, b)`` of two integers (a counter's high-water mark, a trip count): Numba's
    builtin ``max`` inline is an overload compiled anew in each process, this once."""
    return max(a, b)


# How many chunks a parallel loop runs in: the cost model of `core.chunking` (its costs are in
# the unit of the transforms' work estimate, and live with it), compiled.
chunk_count = jit(chunking.chunk_count)


@jit
def put_part(parts, chunk, part):
    """``parts[chunk] = part`` for a chunk's partial gradient (``parts`` C-contiguous, from
    `zeros`, ``part`` of its row's shape), as a loop: Numba's array assignment builds its
    shape-mismatch message from str and repr, 1.7 s of compile in every process that uses it."""
    row = parts[chunk].ravel()  # a view: the row of a C-contiguous array
    flat = np.ascontiguousarray(part).ravel()
    for k in range(flat.size):
        row[k] = flat[k]


@jit
def nonempty(n):
    """Before a max or min over ``n`` values: NumPy has no maximum of nothing either."""
    if n == 0:
        raise ValueError("zero-size array to reduction operation maximum or minimum, which "
                         "has no identity")


@jit
def same_size(n, m):
    """The check of a size assumption (`symbolic.GraphBuilder.assume_same_sizes`)."""
    if n != m:
        raise SizesDiffer("an argument axis the compiled code assumed the same size as another "
                          "differs (NumPy broadcasts a size 1)")


@jit
def reshape(x, shape):
    """``x.reshape(shape)`` for any layout (Numba reshapes contiguous arrays only)."""
    return np.ascontiguousarray(x).reshape(shape)


@jit
def trip_count(start, stop, step):
    """``len(range(start, stop, step))``."""
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // (-step))


@jit
def reserve(tape, n, extra):
    """The stack ``tape`` (holding ``n`` items) with room for ``extra`` more."""
    if n + extra <= tape.shape[0]:
        return tape
    bigger = np.empty(max(n + extra, 2 * tape.shape[0]), dtype=tape.dtype)
    bigger[:n] = tape[:n]
    return bigger


@jit
def grow(tape):
    """A stack twice as long holding the same items (called when a push finds it full)."""
    bigger = np.empty(max(16, 2 * tape.shape[0]), dtype=tape.dtype)
    bigger[:tape.shape[0]] = tape
    return bigger


# --------------------------------------------------------------------------- elementwise
# One small compiled function per elementwise primitive, called for array operands. Numba
# compiles each (primitive, argument types) once per machine and keeps it in its disk cache, so
# a new gradient's compile time is spent on calls, not on re-deriving the same array kernels.

@jit
def neg(x):
    return -x

@jit
def exp(x):
    return np.exp(x)

@jit
def log(x):
    return np.log(x)

@jit
def log1p(x):
    return np.log1p(x)

@jit
def expm1(x):
    return np.expm1(x)

@jit
def sqrt(x):
    return np.sqrt(x)

@jit
def sin(x):
    return np.sin(x)

@jit
def cos(x):
    return np.cos(x)

@jit
def tan(x):
    return np.tan(x)

# tanh: Cephes' rational approximation (S. L. Moshier's Cephes library, tanh.c, as in SciPy's
# cephes) for |x| < 0.625 and 1 - 2/(exp(2|x|) + 1) above, instead of libm's tanh (glibc computes
# it from expm1). Measured against long-double tanh on 3.7e7 points of [-20, 20] (and tiny
# arguments down to 1e-300; `bench/tanh_ulp.py`): at most 1.34 ulp from the exact value, where
# glibc's tanh is at most 2.19 ulp; about half libm's latency in a recurrence like bench's rnn
# (issue #26). Generated code calls `tanh_scalar` on numbers, `tanh` on arrays
# (`lowering.LOWER["tanh"]`).
_TANH_P = (-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3)
_TANH_Q = (1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3)


@jit
def tanh_scalar(x):
    a = abs(x)
    if a < 0.625:
        z = a * a
        r = a + a * z * (((_TANH_P[0] * z + _TANH_P[1]) * z + _TANH_P[2])
                         / (((z + _TANH_Q[0]) * z + _TANH_Q[1]) * z + _TANH_Q[2]))
    elif a > 22.0:  # 1 - tanh(22) < 1e-19: rounds to 1
        r = 1.0
    else:  # also NaN
        r = 1.0 - 2.0 / (math.exp(2.0 * a) + 1.0)
    return math.copysign(r, x)  # odd, and tanh(-0.0) = -0.0


@jit
def tanh(x):
    """`tanh_scalar` of each entry of an array (any rank and layout). Vectorised, LLVM may
    evaluate both branches for every entry: the results are right, but inf sets the CPU's
    "invalid" flag, which only a NumPy ufunc would report (this is not one)."""
    out = np.empty(x.shape)
    for i, v in np.ndenumerate(x):
        out[i] = tanh_scalar(v)
    return out

@jit
def arctan(x):
    return np.arctan(x)

@jit
def arcsin(x):
    return np.arcsin(x)

@jit
def arccos(x):
    return np.arccos(x)

@jit
def sinh(x):
    return np.sinh(x)

@jit
def cosh(x):
    return np.cosh(x)

@jit
def arcsinh(x):
    return np.arcsinh(x)

@jit
def arccosh(x):
    return np.arccosh(x)

@jit
def arctanh(x):
    return np.arctanh(x)

@jit
def square(x):
    return x * x

@jit
def abs(x):
    return np.abs(x)

@jit
def sign(x):
    return np.sign(x)

@jit
def floor(x):
    return np.floor(x)

@jit
def ceil(x):
    return np.ceil(x)

@jit
def isnan(x):
    return np.isnan(x)

@jit
def logical_not(x):
    return np.logical_not(x)

@jit
def add(x, y):
    return x + y

@jit
def sub(x, y):
    return x - y

@jit
def mul(x, y):
    return x * y

@jit
def div(x, y):
    return x / y

@jit
def pow(x, y):
    return x ** y

@jit
def floordiv(x, y):
    return x // y

@jit
def mod(x, y):
    return x % y

@jit
def lt(x, y):
    return x < y

@jit
def le(x, y):
    return x <= y

@jit
def gt(x, y):
    return x > y

@jit
def ge(x, y):
    return x >= y

@jit
def eq(x, y):
    return x == y

@jit
def ne(x, y):
    return x != y

@jit
def logical_and(x, y):
    return np.logical_and(x, y)

@jit
def logical_or(x, y):
    return np.logical_or(x, y)

@jit
def maximum(x, y):
    return np.maximum(x, y)

@jit
def minimum(x, y):
    return np.minimum(x, y)

# the primitive's own function (`prims.elementwise.tie_share_impl`), compiled
tie_share = jit(elementwise.tie_share_impl)


@jit
def where(c, x, y):
    return np.where(c, x, y)


@jit
def isfinite(x):
    return np.isfinite(x)

@jit
def cbrt(x):
    return np.cbrt(x)

@jit
def arctan2(x, y):
    return np.arctan2(x, y)

@jit
def hypot(x, y):
    return np.hypot(x, y)

@jit
def logaddexp(x, y):
    return np.logaddexp(x, y)

@jit
def logaddexp2(x, y):
    return np.logaddexp2(x, y)

@jit
def copysign(x, y):
    return np.copysign(x, y)

# Elementwise primitives whose array form is NumPy's ufunc itself, compiled by Numba in place.
NUMPY_AS_IS = ("rint", "trunc", "isinf")
rint, trunc, isinf = np.rint, np.trunc, np.isinf

# Elementwise primitives with no NumPy function (NumPy has no erf, Numba compiles no
# scipy.special): the primitive's scalar function (`prims.elementwise`), as a Numba ufunc.
UFUNC_SCALARS = {"erf": elementwise.erf_scalar, "erfc": elementwise.erfc_scalar,
                 "gammaln": elementwise.lgamma_scalar, "gamma": elementwise.gamma_scalar,
                 "digamma": elementwise.digamma_scalar, "trigamma": elementwise.trigamma_scalar,
                 "tetragamma": elementwise.tetragamma_scalar}
_MADE: dict = {}


def ufunc(name: str):
    """The Numba ufunc of `UFUNC_SCALARS` ``[name]`` (scalars and arrays, entry by entry), made
    at the first call and the same object after (`compile.vectorize`: compiled for an argument
    type on its first use, and cached on disk)."""
    made = _MADE.get(name)
    if made is None:
        made = _MADE.setdefault(name, vectorize(UFUNC_SCALARS[name]))
    return made


_CALLS = re.compile(r"\b_rt\.(\w+)\(")


def bind_ufuncs(source: str) -> None:
    """Bind here, as ``_rt.<name>``, each ufunc of `UFUNC_SCALARS` (erf, the gamma family) that
    the generated module ``source`` calls, made on its first use (`ufunc`: milliseconds each,
    and few gradients call any). The backend's `load` calls this before it runs and compiles
    the module, so every name the module calls on ``_rt`` is bound by then."""
    for name in sorted(set(_CALLS.findall(source)) & UFUNC_SCALARS.keys()):
        globals()[name] = ufunc(name)


# The running-product loops of np.prod's and np.cumprod's rules: the primitives' own functions
# (`prims.reductions`), compiled, so that the interpreter and compiled code compute the same
# numbers from one copy.
cumprod_grad = jit(reductions.cumprod_grad_loop)
cumprod_jvp = jit(reductions.cumprod_jvp_loop)
prod_others_jvp = jit(reductions.prod_others_jvp_loop)


@jit
def prod_others(x):
    """Each entry's product of all the other entries (the adjoint of np.prod, exact at zeros):
    the product of those before it times the product of those after it."""
    flat = x.ravel()
    out = np.empty(flat.size)
    acc = 1.0
    for i in range(flat.size):
        out[i] = acc
        acc *= flat[i]
    acc = 1.0
    for i in range(flat.size - 1, -1, -1):
        out[i] *= acc
        acc *= flat[i]
    return out.reshape(x.shape)


@jit
def prod_axis(x, axis, out_shape):
    """``np.prod(x, axis)``, reshaped to ``out_shape`` (Numba has no axis argument)."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.ones((pre, post), dtype=x.dtype)
    for a in range(pre):
        for j in range(n):
            for b in range(post):
                out[a, b] *= xc[a, j, b]
    return out.reshape(out_shape)


@jit
def prod_others_axis(x, axis):
    """Each entry's product of the other entries along ``axis`` (the adjoint of
    ``np.prod(x, axis)``, exact at zeros): the product before it times the product after it."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.empty((pre, n, post))
    for a in range(pre):
        for b in range(post):
            acc = 1.0
            for j in range(n):
                out[a, j, b] = acc
                acc *= xc[a, j, b]
            acc = 1.0
            for j in range(n - 1, -1, -1):
                out[a, j, b] *= acc
                acc *= xc[a, j, b]
    return out.reshape(x.shape)


@jit
def cumsum_axis(x, axis):
    """``np.cumsum(x, axis)`` (Numba's np.cumsum takes no axis)."""
    pre, n, post = _split(x, axis)
    xc = np.ascontiguousarray(x).reshape((pre, n, post))
    out = np.empty((pre, n, post), dtype=xc.dtype)
    for a in range(pre):
        for b in range(post):
            acc = xc[a, 0, b] - xc[a, 0, b]
            for j in range(n):
                acc += xc[a, j, b]
                out[a, j, b] = acc
    return out.reshape(x.shape)
