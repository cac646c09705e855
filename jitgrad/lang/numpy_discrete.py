"""NumPy's functions whose values are piecewise constant: rounding, positions (argmax),
predicates, counts and closeness tests, as compositions of the primitives (`prims.elementwise`'s ``rint``,
``trunc``, comparisons, ``isinf``...). Their derivative is zero wherever it exists, as in JAX
and autograd, and jitgrad gives zero (never a refusal for lack of a derivative).

Takes values of the graph (`Sym`) or constants; fills `symbolic.NUMPY` when imported (by
``jitgrad.lang``).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang.numpy_api import norm_axis
from jitgrad.lang.symbolic import NUMPY, loc_of, record, records


def _arg_extreme(name):
    """``np.argmax``/``np.argmin``: the flat index, or the index along ``axis`` (Numba
    compiles both)."""
    def f(x, axis=None):
        if not records(x):
            return getattr(np, name)(x, axis=axis)
        if axis is None or x.ndim == 1:
            if axis is not None:
                norm_axis(axis, 1, loc_of(x))
            return record(name, x)
        return record(name, x, axis=norm_axis(axis, x.ndim, loc_of(x)))  # along one axis
    return f


def np_round(x, decimals=0, out=None):
    """NumPy's rounding: half to even at ``decimals`` digits, as NumPy computes it (scaled by
    10**decimals, rounded, scaled back)."""
    if not records(x):
        return np.round(x, decimals)
    if decimals == 0:
        return record("rint", x)
    scale = 10.0 ** decimals
    return record("rint", x * scale) / scale


def np_trunc(x):
    return record("trunc", x) if records(x) else np.trunc(x)


def math_trunc(x):
    return record("cast", record("trunc", x), kind="i") if records(x) else math.trunc(x)


def np_isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if equal_nan:
        raise UnsupportedError("np.isclose with equal_nan=True", loc_of(a, b))
    if not (records(a) or records(b)):
        return np.isclose(a, b, rtol, atol)
    return NUMPY[np.abs](a - b) <= atol + rtol * NUMPY[np.abs](b)


def np_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return NUMPY[np.all](np_isclose(a, b, rtol, atol, equal_nan)) if (
        records(a) or records(b)) else np.allclose(a, b, rtol, atol, equal_nan)


def np_count_nonzero(a, axis=None):
    if not records(a):
        return np.count_nonzero(a, axis=axis)
    return NUMPY[np.sum](record("cast", record("ne", a, 0), kind="i"), axis=axis)


def np_isneginf(x):
    return NUMPY[np.logical_and](record("isinf", x), x < 0.0) if records(x) else np.isneginf(x)


def np_isposinf(x):
    return NUMPY[np.logical_and](record("isinf", x), x > 0.0) if records(x) else np.isposinf(x)


def np_logical_xor(a, b):
    if not (records(a) or records(b)):
        return np.logical_xor(a, b)
    return record("ne", record("cast", a, kind="b"), record("cast", b, kind="b"))


def _in_place(op):
    """``operator.iadd(a, b)`` and friends: on numbers, the operator (numbers are never
    changed in place); on an array, refused (it would write into it: ``a += b``)."""
    def f(a, b):
        if records(a) and a.ndim:
            raise UnsupportedError(f"operator.i{op.__name__.rstrip('_')} of an array that is "
                                   "not a name (it writes into it): name the array, "
                                   "`a = ...; a += b`", loc_of(a, b))
        return op(a, b)
    return f


_REFLECTED = {operator.and_: "__rand__", operator.or_: "__ror__", operator.xor: "__rxor__",
              operator.lshift: "__rlshift__", operator.rshift: "__rrshift__"}


def _bits(np_fn, op):
    """``np.bitwise_and`` and friends, ``operator.lshift``...: the operator (on booleans the
    logical operation, on integers the bit operation, `symbolic.Sym`'s operators); NumPy's own
    function on numbers known while building. With a plain array on the left, the recording
    operand's reflected operator (``a & t`` through NumPy would come back here)."""
    def f(*xs):
        if not any(records(x) for x in xs):
            return np_fn(*xs)
        if len(xs) == 2 and not records(xs[0]):
            reflected = getattr(xs[1], _REFLECTED[op], None)
            if reflected is None:
                raise UnsupportedError(f"{np_fn.__name__} of a {type(xs[1]).__name__}",
                                       loc_of(*xs))
            return reflected(xs[0])
        return op(*xs)
    return f


def _as_float(x):
    return record("cast", x, kind="f") if records(x) and x.dtype.kind != "f" else x


def np_signbit(x):
    """Whether the sign bit is set: -0.0 and a negative NaN included (copysign reads it)."""
    if not records(x):
        return np.signbit(x)
    if x.dtype.kind != "f":
        return record("lt", x, 0)
    return record("lt", record("copysign", 1.0, x), 0.0)


def np_nextafter(x, y):
    if not (records(x) or records(y)):
        return np.nextafter(x, y)
    return record("nextafter", _as_float(x), _as_float(y))


def np_spacing(x):
    """The distance from x to the next float away from zero (towards +inf at -0.0, as NumPy):
    piecewise constant, its derivative 0."""
    if not records(x):
        return np.spacing(x)
    x = _as_float(x)
    toward = NUMPY[np.where](record("lt", x, 0.0), -math.inf, math.inf)
    return record("nextafter", x, toward) - x


def _times_power_of_two(x, e):
    """x * 2**e for an integer e, exact wherever the result is (the power in two halves, so
    that neither overflows nor underflows on its own, as ``math.ldexp``)."""
    half = e // 2
    return x * 2.0 ** half * 2.0 ** (e - half)


def np_frexp(x):
    """(m, e) with x = m * 2**e and 0.5 <= |m| < 1 (0, inf and NaN: (x, 0)): e piecewise
    constant, m = x / 2**e, whose derivative is 2**-e."""
    if not records(x):
        return np.frexp(x)
    x = _as_float(x)
    e = record("frexp_exponent", x)
    return _times_power_of_two(x, -e), e


def _math(name, fn):
    """``math.<name>`` written as ``fn`` (of NumPy's functions): scalars only; on numbers
    known while building, `math`'s own."""
    def f(*args, **kw):
        if not any(records(a) for a in args):
            return getattr(math, name)(*args, **kw)
        if kw:
            raise UnsupportedError(f"math.{name} with {', '.join(kw)}=", loc_of(*args))
        for a in args:
            if records(a) and a.ndim:
                raise UnsupportedError(f"math.{name} of an array (use the np. function)",
                                       loc_of(*args))
        return fn(*args)
    return f


NUMPY.update({
    np.argmax: _arg_extreme("argmax"), np.argmin: _arg_extreme("argmin"),
    operator.iadd: _in_place(operator.add), operator.isub: _in_place(operator.sub),
    operator.imul: _in_place(operator.mul), operator.itruediv: _in_place(operator.truediv),
    operator.ifloordiv: _in_place(operator.floordiv), operator.imod: _in_place(operator.mod),
    operator.ipow: _in_place(operator.pow), operator.imatmul: _in_place(operator.matmul),
    np.round: np_round, np.around: np_round, np.rint: lambda x: np_round(x),
    np.trunc: np_trunc, np.fix: np_trunc, math.trunc: math_trunc,
    np.isclose: np_isclose, np.allclose: np_allclose, np.count_nonzero: np_count_nonzero,
    np.isneginf: np_isneginf, np.isposinf: np_isposinf, np.logical_xor: np_logical_xor,
    np.iscomplexobj: lambda x: False, np.isrealobj: lambda x: True,
    operator.not_: lambda x: record("logical_not", x) if records(x) else not x,
    # & | ^ ~ << >>: logical on booleans, bitwise on integers (`symbolic.Sym`'s operators)
    np.bitwise_and: _bits(np.bitwise_and, operator.and_),
    np.bitwise_or: _bits(np.bitwise_or, operator.or_),
    np.bitwise_xor: _bits(np.bitwise_xor, operator.xor), np.invert: _bits(np.invert, operator.invert),
    np.left_shift: _bits(np.left_shift, operator.lshift),
    np.right_shift: _bits(np.right_shift, operator.rshift),
    operator.and_: operator.and_, operator.or_: operator.or_, operator.xor: operator.xor,
    operator.invert: operator.invert, operator.inv: operator.invert,
    operator.lshift: operator.lshift, operator.rshift: operator.rshift,
    operator.iand: _in_place(operator.and_), operator.ior: _in_place(operator.or_),
    operator.ixor: _in_place(operator.xor), operator.ilshift: _in_place(operator.lshift),
    operator.irshift: _in_place(operator.rshift),
    # the bits of floats: sign, neighbours, exponent and mantissa
    np.signbit: np_signbit, np.nextafter: np_nextafter, np.spacing: np_spacing,
    np.frexp: np_frexp, math.frexp: _math("frexp", np_frexp),
    math.nextafter: _math("nextafter", np_nextafter),
    math.ldexp: _math("ldexp", lambda x, i: _times_power_of_two(_as_float(x), i)),
    np.iinfo: lambda int_type: np.iinfo(int_type),  # its .min, .max, .bits: constants
})
if hasattr(math, "exp2"):  # Python 3.11+
    NUMPY[math.exp2] = _math("exp2", NUMPY[np.exp2])
