"""Elementwise primitives on arrays for generated code (``_rt.<name>``, re-exported by
`runtime`): generated code calls an elementwise primitive with an array operand as
``_rt.<name>`` (`emit._Writer.primitive_eqn`), and every elementwise primitive of
`prims.elementwise` has one here, of one of three kinds:

* a small compiled function (most): NumPy's function or operator, compiled once per machine
  and argument types (`compile.jit`, Numba's disk cache), so a new gradient's compile time is
  spent on calls, not on re-deriving the same array kernels; `tie_share` is the primitive's own
  function, compiled;
* NumPy's ufunc itself, which Numba compiles in place (`rint`, `trunc`, `isinf`);
* a Numba ufunc of the primitive's own scalar function (erf and the gamma family,
  `UFUNC_SCALARS`), or of a call of SciPy's compiled kernel for the primitives that are
  SciPy's special functions (Bessel functions, erfinv, the incomplete gamma and beta
  functions: `SCIPY_KERNELS`, `compile.scipy_kernel`), made on first use (`ufunc`): making
  one costs milliseconds, and few gradients call any. `runtime.bind_ufuncs` binds those a
  generated module calls before it is compiled.

The one numeric routine of the backend's own here is `tanh_scalar` (Cephes' tanh in compiled
code, where the interpreter runs NumPy's: the comment above it says why). Takes numbers and
arrays of any rank and layout; guarantees NumPy's results, but for tanh's (within 1.34 ulp of
the exact value), and SciPy's for SciPy's functions.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils

from jitgrad.backend.numba.compile import (
    DISABLE_JIT,
    intrinsic,
    jit,
    link_scipy_kernels,
    scipy_kernel,
    vectorize,
)
from jitgrad.backend.numba.runtime_alloc import float_dtype
from jitgrad.prims import complex_special, elementwise

# One small compiled function per elementwise primitive, called for array operands (see above).

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


def _plain_tanh_scalar(x):
    a = math.fabs(x)
    if a < 0.625:
        z = a * a
        r = a + a * z * (((_TANH_P[0] * z + _TANH_P[1]) * z + _TANH_P[2])
                         / (((z + _TANH_Q[0]) * z + _TANH_Q[1]) * z + _TANH_Q[2]))
    elif a > 22.0:  # 1 - tanh(22) < 1e-19: rounds to 1
        r = 1.0
    else:  # also NaN
        r = 1.0 - 2.0 / (math.exp(2.0 * a) + 1.0)
    return math.copysign(r, x)  # odd, and tanh(-0.0) = -0.0


@intrinsic(_plain_tanh_scalar)
def tanh_scalar(typingctx, x):
    """`_plain_tanh_scalar` written into the caller as the instructions Numba makes of it (the
    same operations in the same order: the same results to the bit), where the function
    inlined by Numba was typed and inlined anew at each call in each process (0.05-0.08 s of
    the rnn's first gradient)."""
    if not isinstance(x, (types.Float, types.Integer, types.Boolean)):
        return None

    def codegen(context, builder, signature, args):
        f64 = ir.DoubleType()
        x = context.cast(builder, args[0], signature.args[0], types.float64)

        def const(v):
            return ir.Constant(f64, v)

        def fp(name, *values):  # an LLVM floating-point intrinsic, as Numba's math lowering
            return builder.call(builder.module.declare_intrinsic(name, [f64]), values)

        a = fp("llvm.fabs", x)
        r = cgutils.alloca_once(builder, f64)
        with builder.if_else(builder.fcmp_ordered("<", a, const(0.625))) as (small, other):
            with small:
                z = builder.fmul(a, a)
                p = builder.fadd(builder.fmul(builder.fadd(builder.fmul(const(_TANH_P[0]), z),
                                                           const(_TANH_P[1])), z),
                                 const(_TANH_P[2]))
                q = builder.fadd(builder.fmul(builder.fadd(builder.fmul(
                    builder.fadd(z, const(_TANH_Q[0])), z), const(_TANH_Q[1])), z),
                    const(_TANH_Q[2]))
                builder.store(builder.fadd(a, builder.fmul(builder.fmul(a, z),
                                                           builder.fdiv(p, q))), r)
            with other, builder.if_else(builder.fcmp_ordered(">", a, const(22.0))) as (big, mid):
                with big:
                    builder.store(const(1.0), r)
                with mid:  # also NaN
                    e = fp("llvm.exp", builder.fmul(const(2.0), a))
                    builder.store(builder.fsub(const(1.0), builder.fdiv(
                        const(2.0), builder.fadd(e, const(1.0)))), r)
        copysign = cgutils.get_or_insert_function(builder.module, ir.FunctionType(f64, (f64, f64)),
                                                  "llvm.copysign.f64")
        return builder.call(copysign, (builder.load(r), x))  # odd, and tanh(-0.0) = -0.0

    return types.float64(x), codegen



@jit
def tanh(x):
    """`tanh_scalar` of each entry of an array (any rank and layout). Vectorised, LLVM may
    evaluate both branches for every entry: the results are right, but inf sets the CPU's
    "invalid" flag, which only a NumPy ufunc would report (this is not one)."""
    out = np.empty(x.shape, float_dtype(x))
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
def round_float32(x):
    """np.float32(x) of an array: each entry rounded to float32, carried on as float64."""
    return x.astype(np.float32).astype(np.float64)

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


def _choose(c, x, y):
    return x if c else y


# A Numba ufunc of `_choose` broadcasts as np.where does and takes its types (an int and a
# float give a float) but compiles in a quarter of the time: Numba's np.where took 2.0-2.5 s
# on a machine where jitgrad had not run (issue #46).
_choose_entrywise = vectorize(_choose)


@jit
def where(c, x, y):
    return np.where(c, x, y) if DISABLE_JIT else _choose_entrywise(c, x, y)


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


@jit
def nextafter(x, y):
    return np.nextafter(x, y)

@jit
def bitwise_and(x, y):
    return x & y

@jit
def bitwise_or(x, y):
    return x | y

@jit
def bitwise_xor(x, y):
    return x ^ y

@jit
def left_shift(x, y):
    return x << y

@jit
def right_shift(x, y):
    return x >> y

@jit
def invert(x):
    return ~x

# the primitive's own scalar function (`prims.elementwise.frexp_exponent_scalar`), compiled:
# for a number, and entry by entry for an array
frexp_exponent_scalar = jit(elementwise.frexp_exponent_scalar)


@jit
def frexp_exponent(x):
    out = np.empty(x.shape, dtype=np.int64)
    for i, v in np.ndenumerate(x):
        out[i] = frexp_exponent_scalar(v)
    return out


# Elementwise primitives whose array form is NumPy's ufunc itself, compiled by Numba in place.
rint, trunc, isinf = np.rint, np.trunc, np.isinf

# SciPy's compiled kernels (`compile.scipy_kernel`) for the primitives that are SciPy's special
# functions (`prims.elementwise.scipy_special_impl`): the same C code as SciPy's ufuncs, so the
# same values. Keys of scipy.special.cython_special's ``__pyx_capi__``: a fused function's
# double-precision version is ``__pyx_fuse_<k><name>`` (yn's ``(double, double)``, as SciPy's
# ufunc computes an order given as a float).
SCIPY_KERNELS = ("j0", "j1", "y0", "y1", "i0", "i1", "__pyx_fuse_1jv", "__pyx_fuse_0yn",
                 "__pyx_fuse_1iv", "__pyx_fuse_1ive", "__pyx_fuse_0erfinv", "erfcinv",
                 "__pyx_fuse_1rgamma", "gammasgn", "gammainc", "gammaincc",
                 "__pyx_fuse_0betainc", "__pyx_fuse_0stdtr", "__pyx_fuse_1hyp1f1",
                 "__pyx_fuse_1hyp2f1", "gammaincinv", "__pyx_fuse_1kv")
_J0, _J1, _Y0, _Y1, _I0, _I1 = (scipy_kernel(k, 1) for k in SCIPY_KERNELS[:6])
_JV, _YN, _IV, _IVE = (scipy_kernel(k, 2) for k in SCIPY_KERNELS[6:10])
_ERFINV, _ERFCINV, _RGAMMA, _GAMMASGN = (scipy_kernel(k, 1) for k in SCIPY_KERNELS[10:14])
_GAMMAINC, _GAMMAINCC = scipy_kernel("gammainc", 2), scipy_kernel("gammaincc", 2)
_BETAINC, _STDTR = scipy_kernel(SCIPY_KERNELS[16], 3), scipy_kernel(SCIPY_KERNELS[17], 2)
_GAMMAINCINV = scipy_kernel("gammaincinv", 2)
_KV = scipy_kernel("__pyx_fuse_1kv", 2)
_HYP1F1, _HYP2F1 = scipy_kernel(SCIPY_KERNELS[18], 3), scipy_kernel(SCIPY_KERNELS[19], 4)


def j0_scalar(x):
    return _J0(x, 0)


def j1_scalar(x):
    return _J1(x, 0)


def y0_scalar(x):
    return _Y0(x, 0)


def y1_scalar(x):
    return _Y1(x, 0)


def i0_scalar(x):
    return _I0(x, 0)


def i1_scalar(x):
    return _I1(x, 0)


def jv_scalar(v, x):
    return _JV(float(v), float(x), 0)


def yn_scalar(n, x):
    return _YN(float(n), float(x), 0)


def iv_scalar(v, x):
    return _IV(float(v), float(x), 0)


def kv_scalar(v, x):
    return _KV(float(v), float(x), 0)


def ive_scalar(v, x):
    return _IVE(float(v), float(x), 0)


def erfinv_scalar(y):
    return _ERFINV(y, 0)


def erfcinv_scalar(y):
    return _ERFCINV(y, 0)


def rgamma_scalar(x):
    return _RGAMMA(x, 0)


def gammasgn_scalar(x):
    return _GAMMASGN(x, 0)


def gammainc_scalar(a, x):
    return _GAMMAINC(float(a), float(x), 0)


def gammaincc_scalar(a, x):
    return _GAMMAINCC(float(a), float(x), 0)


def gammaincinv_scalar(a, y):
    return _GAMMAINCINV(float(a), float(y), 0)


def betainc_scalar(a, b, x):
    return _BETAINC(float(a), float(b), float(x), 0)


def stdtr_scalar(df, t):
    return _STDTR(float(df), float(t), 0)


def hyp1f1_scalar(a, b, z):
    return _HYP1F1(float(a), float(b), float(z), 0)


def hyp2f1_scalar(a, b, c, z):
    return _HYP2F1(float(a), float(b), float(c), float(z), 0)


# Elementwise primitives with no NumPy function (NumPy has no erf, Numba compiles no
# scipy.special): the primitive's scalar function (`prims.elementwise`), or the call of SciPy's
# kernel above, as a Numba ufunc.
UFUNC_SCALARS = {"erf": elementwise.erf_scalar, "erfc": elementwise.erfc_scalar,
                 "gammaln": elementwise.lgamma_scalar, "gamma": elementwise.gamma_scalar,
                 "digamma": elementwise.digamma_scalar, "trigamma": elementwise.trigamma_scalar,
                 "tetragamma": elementwise.tetragamma_scalar,
                 "lambertw": elementwise.lambertw_scalar,
                 "j0": j0_scalar, "j1": j1_scalar, "y0": y0_scalar, "y1": y1_scalar,
                 "i0": i0_scalar, "i1": i1_scalar, "jv": jv_scalar, "yn": yn_scalar,
                 "iv": iv_scalar, "ive": ive_scalar, "kv": kv_scalar, "erfinv": erfinv_scalar,
                 "erfcinv": erfcinv_scalar, "rgamma": rgamma_scalar,
                 "gammasgn": gammasgn_scalar, "gammainc": gammainc_scalar,
                 "gammaincc": gammaincc_scalar, "gammaincinv": gammaincinv_scalar,
                 "gammainc_slope": elementwise.incomplete_gamma_slope_with(
                     jit(elementwise.digamma_scalar)),
                 "betainc": betainc_scalar,
                 "stdtr": stdtr_scalar, "hyp1f1": hyp1f1_scalar, "hyp2f1": hyp2f1_scalar}
# Functions of a complex argument, one real primitive per part (`prims.complex_special`): the
# pair function compiled once, each part a ufunc of it.
_PAIRS = {fn: jit(fn) for fn, _ in complex_special.PARTS.values()}
UFUNC_SCALARS |= {name: complex_special.part_of(_PAIRS[fn], k)
                  for name, (fn, k) in complex_special.PARTS.items()}
_MADE: dict = {}


def ufunc(name: str):
    """The Numba ufunc of `UFUNC_SCALARS` ``[name]`` (scalars and arrays, entry by entry), made
    at the first call and the same object after (`compile.vectorize`: compiled for an argument
    type on its first use, and cached on disk). SciPy's kernels are linked first."""
    made = _MADE.get(name)
    if made is None:
        if UFUNC_SCALARS[name].__module__ == __name__:  # calls one of SciPy's kernels
            link_scipy_kernels(SCIPY_KERNELS)
        made = _MADE.setdefault(name, vectorize(UFUNC_SCALARS[name]))
    return made
