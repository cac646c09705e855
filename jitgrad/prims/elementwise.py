"""Elementwise primitives: NumPy's ufuncs and operators, ``where``, ``cast``.

Each row is ``elementwise=True`` (it broadcasts its array operands), so its adjoint rules may
return their share at the broadcast shape of the result (the caller unbroadcasts, in one place),
and its adjoint rules, ``g`` times a partial derivative, are its tangent rules too (`defvjp`
takes them as such): a row here needs a `defjvp` only if that is not so. Rules are written as
``vjp(g, ans, *ins)``: ``ans`` is the result, often cheaper to reuse than to recompute (``exp``,
``tanh``). Kinks and ties take the mean of the one-sided derivatives (``abs'(0) = 0``,
``maximum`` sends half of ``g`` to each of two equal inputs, through `tie_share`). Comparisons,
``sign``, ``floor``, ``rint``, ``trunc``, ``//``, the predicates (``isnan``, ``isinf``, ``isfinite``),
the bit operations on integers and frexp's exponent have zero derivative wherever they have
one: no rule, no gradient.
"""

from __future__ import annotations

import math

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.core.types import Type, broadcast_ndim, promote_kinds
from jitgrad.prims import alloc
from jitgrad.prims.primitive import PRIMITIVES, defjvp, defvjp, primitive

# ----------------------------------------------------------------------------- type rules


def _float_elementwise(ts, p):
    return Type("f", broadcast_ndim(*ts))


def _arith_no_bool(ts, p):
    kind = promote_kinds("i", *(t.kind for t in ts))
    return Type(kind, broadcast_ndim(*ts))


def _arith_bool_arrays(ts, p):
    """NumPy's ufuncs with a boolean loop (``+ * maximum minimum abs``): on arrays of booleans
    only, a boolean array (``m1 * m2`` is ``m1 & m2``, a mask that indexes as one); numbers
    otherwise, as Python's ``True * True == 1``."""
    ndim = broadcast_ndim(*ts)
    if ndim > 0 and all(t.kind == "b" for t in ts):
        return Type("b", ndim)
    return _arith_no_bool(ts, p)


def _compare(ts, p):
    return Type("b", broadcast_ndim(*ts))


def _where(ts, p):
    return Type(promote_kinds(ts[1].kind, ts[2].kind), broadcast_ndim(*ts))


def _elementwise(name, fn, type_rule=_float_elementwise, **kw):
    return primitive(name, fn, type_rule, elementwise=True, **kw)


# Transcendental functions: worth keeping rather than recomputing, and not linear.
COSTLY = {"costly": True, "nonlinear": True}
# Predicates and piecewise constant functions: no derivative, a zero tangent.
PIECEWISE_CONSTANT = {"differentiable": False, "zero_tangent": True}

# ----------------------------------------------------------------------------- unary

neg = _elementwise("neg", np.negative, _arith_no_bool, linear=True, broadcast_nest=True,
                  implied_step=True)
# NumPy's transcendental ufuncs of one argument: each is the primitive of its own name
# (`lang.numpy_api` maps ``np.<name>`` to it from this tuple).
TRANSCENDENTAL = ("exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "arctan",
                  "arcsin", "arccos", "sinh", "cosh", "arcsinh", "arccosh", "arctanh")
for _name in TRANSCENDENTAL:
    _elementwise(_name, getattr(np, _name), **COSTLY)
_elementwise("square", np.square, type_rule=_arith_no_bool, nonlinear=True)
_elementwise("abs", np.abs, type_rule=_arith_bool_arrays, nonlinear=True)
_elementwise("sign", np.sign, type_rule=_arith_no_bool, **PIECEWISE_CONSTANT)
_elementwise("floor", np.floor, **PIECEWISE_CONSTANT)
_elementwise("ceil", np.ceil, **PIECEWISE_CONSTANT)
_elementwise("rint", np.rint, **PIECEWISE_CONSTANT)  # half to even, as NumPy rounds
_elementwise("trunc", np.trunc, **PIECEWISE_CONSTANT)
_elementwise("isnan", np.isnan, type_rule=_compare, **PIECEWISE_CONSTANT)
_elementwise("isfinite", np.isfinite, type_rule=_compare, **PIECEWISE_CONSTANT)
_elementwise("isinf", np.isinf, type_rule=_compare, **PIECEWISE_CONSTANT)
_elementwise("cbrt", np.cbrt, **COSTLY)


def frexp_exponent_scalar(x):
    """The exponent ``e`` of ``x = m * 2**e`` with ``0.5 <= |m| < 1`` (`math.frexp`; 0 for 0,
    inf and NaN)."""
    return math.frexp(x)[1]


# The exponent of math.frexp / np.frexp: an integer, piecewise constant.
_elementwise("frexp_exponent", np.vectorize(frexp_exponent_scalar, otypes=[np.int64]),
             lambda ts, p: Type("i", ts[0].ndim), **PIECEWISE_CONSTANT)


# erf/erfc: NumPy has none (and Numba compiles no scipy.special): `math`'s, one number at a time,
# as the gamma family below (the backend makes Numba ufuncs of these same functions).
def erf_scalar(x):
    """erf(x) of one number (`math.erf`)."""
    return math.erf(x)


def erfc_scalar(x):
    """erfc(x) = 1 - erf(x) of one number (`math.erfc`)."""
    return math.erfc(x)


_elementwise("erf", np.vectorize(erf_scalar, otypes=[float]), **COSTLY)
_elementwise("erfc", np.vectorize(erfc_scalar, otypes=[float]), **COSTLY)
_elementwise("logical_not", np.logical_not, _compare, differentiable=False, implied_step=True)

# ----------------------------------------------------------------------------- gamma family
# log|Gamma|, Gamma and their derivatives digamma and trigamma (NumPy and Numba have none of
# the derivatives): scalar functions of plain `math`, so the backend compiles the same code.


def lgamma_scalar(x):
    """log|Gamma(x)|, inf at the poles (0, -1, -2, ...), as scipy.special.gammaln."""
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


def gamma_scalar(x):
    """Gamma(x): nan at the negative integers, inf at 0 and past overflow, as SciPy."""
    if x <= 0.0 and x == math.floor(x):
        return math.inf if x == 0.0 else math.nan
    if x > 171.7:
        return math.inf
    return math.gamma(x)


def digamma_scalar(x):
    """psi(x) = d log Gamma(x) / dx: reflection below 0, the recurrence psi(x) = psi(x + 1) -
    1/x up to 10, then the asymptotic series (error below 1e-15 there)."""
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    result = 0.0
    if x < 0.0:  # psi(1 - x) - psi(x) = pi cot(pi x)
        result -= math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))))
    return result + math.log(x) - 0.5 / x - series


def trigamma_scalar(x):
    """psi'(x): reflection below 0, the recurrence psi'(x) = psi'(x + 1) + 1/x^2 up to 10,
    then the asymptotic series."""
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    reflected, sign = 0.0, 1.0
    if x < 0.0:  # psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x)
        s = math.sin(math.pi * x)
        reflected, sign, x = math.pi * math.pi / (s * s), -1.0, 1.0 - x
    result = 0.0
    while x < 10.0:
        result += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    series = 1.0 / x + f / 2 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f / 30)))
    return reflected + sign * (result + series)


def tetragamma_scalar(x):
    """psi''(x): reflection below 0, the recurrence psi''(x) = psi''(x + 1) - 2/x^3 up to 10,
    then the asymptotic series."""
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    reflected = 0.0
    if x < 0.0:  # psi''(1 - x) - psi''(x) = 2 pi^3 cos(pi x) / sin^3(pi x)
        s = math.sin(math.pi * x)
        reflected = -2.0 * math.pi ** 3 * math.cos(math.pi * x) / (s * s * s)
        x = 1.0 - x
    result = 0.0
    while x < 10.0:
        result -= 2.0 / (x * x * x)
        x += 1.0
    f = 1.0 / (x * x)
    tail = f * (1.0 / 6 - f * (1.0 / 6 - f * (0.3 - f * 5.0 / 6)))
    return reflected + result - f * (1.0 + 1.0 / x + f * (0.5 - tail))


def lambertw_scalar(z):
    """The principal branch W_0(z) of Lambert's W (w e^w = z) for real z >= -1/e (nan below,
    as its value there is complex): Halley's iteration from the branch point's series in
    sqrt(2 (e z + 1)) below -0.3, log1p(z) up to 3, log z - log log z beyond."""
    if math.isnan(z) or z < -1.0 / math.e - 1e-15:
        return math.nan
    if z == math.inf:
        return math.inf
    if z <= -1.0 / math.e:
        return -1.0
    if z < -0.3:
        p = math.sqrt(max(2.0 * (math.e * z + 1.0), 0.0))
        w = -1.0 + p * (1.0 - p * (1.0 / 3.0 - p * 11.0 / 72.0))
    elif z <= 3.0:
        w = math.log1p(z)
    else:
        lz = math.log(z)
        llz = math.log(lz)
        w = lz - llz + llz / lz
    for _ in range(64):
        ew = math.exp(w)
        f = w * ew - z
        wp1 = w + 1.0
        if wp1 == 0.0:
            break
        step = f / (ew * wp1 - (w + 2.0) * f / (2.0 * wp1))
        w -= step
        if abs(step) <= 4e-16 * (1.0 + abs(w)):
            break
    return w


gammaln = _elementwise("gammaln", np.vectorize(lgamma_scalar, otypes=[float]), **COSTLY)
gamma = _elementwise("gamma", np.vectorize(gamma_scalar, otypes=[float]), **COSTLY)
digamma = _elementwise("digamma", np.vectorize(digamma_scalar, otypes=[float]), **COSTLY)
trigamma = _elementwise("trigamma", np.vectorize(trigamma_scalar, otypes=[float]), **COSTLY)
lambertw = _elementwise("lambertw", np.vectorize(lambertw_scalar, otypes=[float]), **COSTLY)
tetragamma = _elementwise("tetragamma", np.vectorize(tetragamma_scalar, otypes=[float]),
                          **COSTLY)


def incomplete_gamma_slope_with(psi):
    """The function ``(a, x) -> dP(a, x) / da`` of the regularised lower incomplete gamma
    function P (scipy.special.gammainc), given the digamma function ``psi`` (a parameter, so
    that the backend passes its compiled digamma: `runtime_elementwise`). Below x = a + 1, the
    series P = sum_n t_n, t_n = x^(a+n) e^-x / Gamma(a+n+1), differentiated term by term:
    dP/da = sum_n t_n (log x - psi(a+n+1)); above, Q = 1 - P from Legendre's continued fraction
    Q = x^a e^-x / Gamma(a) * h (modified Lentz), carried with its derivative in a (a dual
    number: h' alongside h), so dP/da = -Q (log x - psi(a) + h'/h). Both sides keep relative
    accuracy where P or Q is small. nan for a <= 0 or x < 0, 0 at x = 0 and x = inf."""
    def slope(a, x):
        if not (a > 0.0 and x >= 0.0):
            return math.nan
        if x == 0.0 or math.isinf(x):
            return 0.0
        log_x = math.log(x)
        if x < a + 1.0:
            term = math.exp(a * log_x - x - math.lgamma(a + 1.0))
            p = psi(a + 1.0)
            total, scale = 0.0, 0.0
            for n in range(100000):
                part = term * (log_x - p)
                total += part
                scale += abs(part) + term
                if term < 1e-17 * scale:
                    break
                p += 1.0 / (a + n + 1.0)
                term *= x / (a + n + 1.0)
            return total
        b = x + 1.0 - a  # b_i = x + 2i + 1 - a: b' = -1
        c, dc = 1e300, 0.0
        d = 1.0 / b
        dd = d * d
        h, dh = d, dd
        for i in range(1, 100000):
            an, dan = -i * (i - a), float(i)
            b += 2.0
            den = an * d + b
            dden = dan * d + an * dd - 1.0
            c_new = b + an / c
            dc = -1.0 + (dan * c - an * dc) / (c * c)
            c = c_new
            d = 1.0 / den
            dd = -dden * d * d
            delta = d * c
            ddelta = dd * c + d * dc
            dh = dh * delta + h * ddelta
            h *= delta
            if abs(delta - 1.0) < 1e-16 and abs(ddelta * h) <= 1e-16 * abs(dh):
                break
        q = math.exp(a * log_x - x - math.lgamma(a)) * h
        return -q * (log_x - psi(a) + dh / h)
    return slope


def _no_fourth_derivative(g, ans, x):
    raise UnsupportedError("the derivative of tetragamma (a fourth derivative of gammaln) is "
                           "not implemented")


defvjp("gammaln", lambda g, ans, x: g * digamma(x))
defvjp("gamma", lambda g, ans, x: g * (ans * digamma(x)))
defvjp("digamma", lambda g, ans, x: g * trigamma(x))
# W'(z) = W / (z (1 + W)) = 1 / (e^W (1 + W)): the second form holds at z = 0 too (W' = 1)
defvjp("lambertw", lambda g, ans, z: g / (np.exp(ans) * (ans + 1.0)))
defvjp("trigamma", lambda g, ans, x: g * tetragamma(x))
defvjp("tetragamma", _no_fourth_derivative)

# ----------------------------------------------------------------------------- SciPy's kernels
# Bessel functions, the inverse error functions, 1/Gamma, the sign of Gamma, the regularised
# incomplete gamma and beta functions and Student's t distribution function: SciPy's own
# values. On numbers and arrays of the graph (and in the interpreter) this is SciPy's ufunc; the
# backend calls the same compiled C kernel of scipy.special.cython_special
# (`runtime_elementwise.SCIPY_KERNELS`). SciPy is imported at the first call: jitgrad does not
# import it, and a program that calls these has.
# The derivatives follow autograd's: in the argument, not in an order or a shape parameter
# (d jv(v, x) / dv, d gammainc(a, x) / da have no closed form), which is refused.


def scipy_special_impl(name):
    """scipy.special.<name> as a primitive's implementation (SciPy imported at the first
    call)."""
    def impl(*args):
        import scipy.special

        return getattr(scipy.special, name)(*args)
    impl.__name__ = name
    return impl


# Their names, the same in scipy.special (the backend calls each as ``_rt.<name>``, and
# `lang.scipy_api` spells each as the function of scipy.special of its name).
SCIPY_FUNCTIONS = ("j0", "j1", "y0", "y1", "i0", "i1", "jv", "yn", "iv", "ive", "kv", "erfinv",
                   "erfcinv", "rgamma", "gammasgn", "gammainc", "gammaincc", "gammaincinv",
                   "betainc", "stdtr", "hyp1f1", "hyp2f1")
for _name in SCIPY_FUNCTIONS:
    _elementwise(_name, scipy_special_impl(_name),
                 **(PIECEWISE_CONSTANT if _name == "gammasgn" else COSTLY))
j0, j1, y0, y1, i0, i1 = (PRIMITIVES[n] for n in ("j0", "j1", "y0", "y1", "i0", "i1"))
jv, yn, iv, ive, kv = (PRIMITIVES[n] for n in ("jv", "yn", "iv", "ive", "kv"))  # (order, x)
hyp1f1, hyp2f1 = PRIMITIVES["hyp1f1"], PRIMITIVES["hyp2f1"]  # (parameters..., z)


def _refuse_parameter(name: str, param: str, what: str):
    """The rule of an argument whose derivative is not implemented: a refusal."""
    def refuse(g, ans, *ins):
        raise UnsupportedError(
            f"the derivative of scipy.special.{name} with respect to {param} ({what}) is not "
            f"implemented, only with respect to its last argument: pass {param} as a constant "
            "or through jitgrad.stop_gradient")
    return refuse


def _log_power(k, x):
    """k log(x), taken as 0 where k == 0 (x**0 is 1 at x == 0 too)."""
    if isinstance(k, (int, float)):
        return k * np.log(x) if k != 0 else alloc.zero_like(x)
    return np.where(k == 0, 0.0, k * np.log(x))


def _lower_gamma_density(a, x):
    """x**(a - 1) exp(-x) / Gamma(a): the derivative of gammainc(a, x) in x."""
    return np.exp(_log_power(a - 1.0, x) - x - gammaln(a))


def _beta_density(a, b, x):
    """x**(a - 1) (1 - x)**(b - 1) / B(a, b): the derivative of betainc(a, b, x) in x."""
    log_b = gammaln(a) + gammaln(b) - gammaln(a + b)
    return np.exp(_log_power(a - 1.0, x) + _log_power(b - 1.0, 1.0 - x) - log_b)


def _t_density(df, t):
    """Student's t density with df degrees of freedom at t: the derivative of stdtr(df, t)."""
    half = (df + 1.0) * 0.5
    log_norm = gammaln(half) - gammaln(df * 0.5) - 0.5 * np.log(df * math.pi)
    return np.exp(log_norm - half * np.log1p(t * t / df))


_SQRT_PI_OVER_2 = 0.8862269254527580  # d erfinv(y) / dy = sqrt(pi) / 2 exp(erfinv(y)^2)
_ORDER = "the order"
# Bessel functions: J0' = -J1, J1' = (J0 - J2) / 2, the recurrences C_v' = (C_{v-1} - C_{v+1}) / 2
# for J and Y, (I_{v-1} + I_{v+1}) / 2 for I, -(K_{v-1} + K_{v+1}) / 2 for K, and
# ive(v, x) = iv(v, x) exp(-|x|).
defvjp("j0", lambda g, ans, x: -(g * j1(x)))
defvjp("j1", lambda g, ans, x: g * ((j0(x) - jv(2.0, x)) * 0.5))
defvjp("y0", lambda g, ans, x: -(g * y1(x)))
defvjp("y1", lambda g, ans, x: g * ((y0(x) - yn(2.0, x)) * 0.5))
defvjp("i0", lambda g, ans, x: g * i1(x))
defvjp("i1", lambda g, ans, x: g * ((i0(x) + iv(2.0, x)) * 0.5))
defvjp("jv", _refuse_parameter("jv", "v", _ORDER),
       lambda g, ans, v, x: g * ((jv(v - 1.0, x) - jv(v + 1.0, x)) * 0.5))
defvjp("yn", _refuse_parameter("yn", "n", _ORDER),
       lambda g, ans, n, x: g * ((yn(n - 1.0, x) - yn(n + 1.0, x)) * 0.5))
defvjp("iv", _refuse_parameter("iv", "v", _ORDER),
       lambda g, ans, v, x: g * ((iv(v - 1.0, x) + iv(v + 1.0, x)) * 0.5))
defvjp("kv", _refuse_parameter("kv", "v", _ORDER),  # K_v' = -(K_{v-1} + K_{v+1}) / 2
       lambda g, ans, v, x: -(g * ((kv(v - 1.0, x) + kv(v + 1.0, x)) * 0.5)))
defvjp("ive", _refuse_parameter("ive", "v", _ORDER),
       lambda g, ans, v, x: g * ((ive(v - 1.0, x) + ive(v + 1.0, x)) * 0.5
                                 - np.sign(x) * ans))
defvjp("erfinv", lambda g, ans, y: g * (np.exp(ans * ans) * _SQRT_PI_OVER_2))
defvjp("erfcinv", lambda g, ans, y: -(g * (np.exp(ans * ans) * _SQRT_PI_OVER_2)))


def _rgamma_slope(ans, x):
    """(1/Gamma)'(x) = -psi(x) / Gamma(x); at the poles of Gamma (x = 0, -1, -2, ...), where
    1/Gamma(x) = Gamma(1 - x) sin(pi x) / pi is 0 and psi is nan, Gamma(1 - x) cos(pi x)."""
    at_pole = np.logical_and(ans == 0.0, x <= 0.0)
    return np.where(at_pole, gamma(1.0 - x) * np.cos(x * math.pi), -(ans * digamma(x)))


defvjp("rgamma", lambda g, ans, x: g * _rgamma_slope(ans, x))
# dP(a, x)/da, P = gammainc (`incomplete_gamma_slope_with`): the derivative of gammainc and
# gammaincc in the shape parameter, and with the implicit-function rule of gammaincinv's. Its
# own derivative in x is that of the density x^(a-1) e^-x / Gamma(a) in a; in a (a second
# derivative in the shape parameter) it is refused.
gammainc_slope_scalar = incomplete_gamma_slope_with(digamma_scalar)
gammainc_slope = _elementwise("gammainc_slope",
                              np.vectorize(gammainc_slope_scalar, otypes=[float]), **COSTLY)
defvjp("gammainc_slope", _refuse_parameter("gammainc (its second derivative)", "a",
                                           "the shape parameter"),
       lambda g, ans, a, x: g * (_lower_gamma_density(a, x) * (np.log(x) - digamma(a))))
defvjp("gammainc", lambda g, ans, a, x: g * gammainc_slope(a, x),
       lambda g, ans, a, x: g * _lower_gamma_density(a, x))
defvjp("gammaincc", lambda g, ans, a, x: -(g * gammainc_slope(a, x)),
       lambda g, ans, a, x: -(g * _lower_gamma_density(a, x)))
# x = gammaincinv(a, y) solves gammainc(a, x) = y: dx/dy = 1 / (dP/dx), dx/da = -(dP/da) / (dP/dx)
defvjp("gammaincinv", lambda g, ans, a, y: -(g * gammainc_slope(a, ans))
       / _lower_gamma_density(a, ans),
       lambda g, ans, a, y: g / _lower_gamma_density(a, ans))
defvjp("betainc", _refuse_parameter("betainc", "a", "a shape parameter"),
       _refuse_parameter("betainc", "b", "a shape parameter"),
       lambda g, ans, a, b, x: g * _beta_density(a, b, x))
defvjp("stdtr", _refuse_parameter("stdtr", "df", "the degrees of freedom"),
       lambda g, ans, df, t: g * _t_density(df, t))
# The hypergeometric series in z: each term's derivative is the next series' term, so
# d/dz 1F1(a; b; z) = a / b 1F1(a + 1; b + 1; z), d/dz 2F1(a, b; c; z) = a b / c 2F1(a + 1,
# b + 1; c + 1; z).
_PARAMETER = "a parameter of the series"
defvjp("hyp1f1", _refuse_parameter("hyp1f1", "a", _PARAMETER),
       _refuse_parameter("hyp1f1", "b", _PARAMETER),
       lambda g, ans, a, b, z: g * (a / b * hyp1f1(a + 1.0, b + 1.0, z)))
defvjp("hyp2f1", _refuse_parameter("hyp2f1", "a", _PARAMETER),
       _refuse_parameter("hyp2f1", "b", _PARAMETER),
       _refuse_parameter("hyp2f1", "c", _PARAMETER),
       lambda g, ans, a, b, c, z: g * (a * b / c * hyp2f1(a + 1.0, b + 1.0, c + 1.0, z)))


def unless_unread(g, partial, at_pole=None):
    """``g * partial`` (a cotangent times a partial derivative), but with the partial taken as
    0 where it is not finite and the cotangent ``g`` is exactly 0, so that a saturated value
    (``1 / (1 + np.exp(k))`` with ``exp(k)`` overflowed, ``x ** 1.5`` of a negative entry
    ``np.where`` discards) passes 0, not ``0 * inf = nan``. The mask sits on the partial, not on
    the product: a finite partial is multiplied as it is, so the product's own derivative in
    ``g`` stays the partial (a second or third derivative through this rule, taken where a
    first-order cotangent is exactly 0, as tanh's at 0, is not lost).

    A rule uses it only where an infinite or NaN partial means the operation's value is ±inf or
    NaN for every nearby value of that input, so the finite result cannot change with it: an
    overflowed ``exp``, ``sinh`` or ``cosh``, ``x ** y`` of a negative base. (A product with an
    infinite factor is one too, but a select per product cost loops about 10%: products
    multiply as IEEE does.) Not at a pole (``at_pole``: ``1 / y`` at ``y == 0``, ``x ** -1`` at
    ``x == 0``), where the value jumps and a zero cotangent may be the underflow of a
    derivative that is finite (``1 / (1 / x)`` at 0: 1): there ``0 * inf`` stays NaN.
    (docs/supported.md, "Infinite values and zero cotangents".) A cotangent known while
    building (a number or constant array) is multiplied as it is."""
    if isinstance(g, (int, float, np.ndarray)):
        return g * partial
    unread = np.logical_and(g == 0.0, np.logical_not(np.isfinite(partial)))
    if at_pole is not None:
        unread = np.logical_and(unread, np.logical_not(at_pole))
    return g * np.where(unread, 0.0, partial)


_TWO_OVER_SQRT_PI = 1.1283791670955126  # d erf(x) / dx = 2 / sqrt(pi) exp(-x^2)

defvjp("neg", lambda g, ans, x: -g)
defvjp("exp", lambda g, ans, x: unless_unread(g, ans))
defvjp("expm1", lambda g, ans, x: unless_unread(g, ans + 1.0))
defvjp("log", lambda g, ans, x: g / x)
defvjp("log1p", lambda g, ans, x: g / (x + 1.0))
# sqrt'(0) is taken as 0, not inf: a square root at 0 in numerical code is a norm, a distance or
# a standard deviation at 0 (a cone, whose one-sided derivatives average 0), and inf times the
# zero derivative of the sum of squares beneath it would make the whole gradient NaN.
defvjp("sqrt", lambda g, ans, x: np.where(ans == 0.0, 0.0, g / (ans * 2.0)))
defvjp("square", lambda g, ans, x: g * (x * 2.0))
defvjp("sin", lambda g, ans, x: g * np.cos(x))
defvjp("cos", lambda g, ans, x: -(g * np.sin(x)))
defvjp("tan", lambda g, ans, x: g * (ans * ans + 1.0))
defvjp("tanh", lambda g, ans, x: g * (1.0 - ans * ans))
defvjp("arctan", lambda g, ans, x: g / (x * x + 1.0))
defvjp("arcsin", lambda g, ans, x: g / np.sqrt(1.0 - x * x))
defvjp("arccos", lambda g, ans, x: -(g / np.sqrt(1.0 - x * x)))
defvjp("sinh", lambda g, ans, x: unless_unread(g, np.cosh(x)))
defvjp("cosh", lambda g, ans, x: unless_unread(g, np.sinh(x)))
defvjp("arcsinh", lambda g, ans, x: g / np.sqrt(x * x + 1.0))
defvjp("arccosh", lambda g, ans, x: g / np.sqrt(x * x - 1.0))
defvjp("arctanh", lambda g, ans, x: g / (1.0 - x * x))
defvjp("abs", lambda g, ans, x: g * np.sign(x))
defvjp("cbrt", lambda g, ans, x: np.where(ans == 0.0, 0.0,  # 0 at 0, as sqrt's
                                            g / (np.where(ans == 0.0, 1.0, ans) ** 2 * 3.0)))
defvjp("erf", lambda g, ans, x: g * (np.exp(-(x * x)) * _TWO_OVER_SQRT_PI))
defvjp("erfc", lambda g, ans, x: -(g * (np.exp(-(x * x)) * _TWO_OVER_SQRT_PI)))

# ----------------------------------------------------------------------------- binary

for _name in ("arctan2", "hypot", "logaddexp", "logaddexp2", "copysign"):
    _elementwise(_name, getattr(np, _name), **(COSTLY if _name != "copysign" else {}))
_elementwise("add", np.add, _arith_bool_arrays, additive=True, counting=True,
             broadcast_nest=True, implied_step=True)
_elementwise("sub", np.subtract, _arith_no_bool, additive=True, counting=True,
             broadcast_nest=True, implied_step=True)
_elementwise("mul", np.multiply, _arith_bool_arrays, counting=True, broadcast_nest=True,
             scales=True)
_elementwise("div", np.true_divide, _float_elementwise, broadcast_nest=True, scales=True)
_elementwise("pow", np.power, _arith_no_bool, **COSTLY)
_elementwise("floordiv", np.floor_divide, _arith_no_bool, **PIECEWISE_CONSTANT)
_elementwise("mod", np.mod, _arith_no_bool)
for _name, _fn in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)):
    _elementwise(_name, _fn, _compare, differentiable=False, implied_step=True)
_elementwise("logical_and", np.logical_and, _compare, differentiable=False)
_elementwise("logical_or", np.logical_or, _compare, differentiable=False)
# Bit operations on integers (the operators ``& | ^ ~ << >>`` and NumPy's functions): integer
# results, no derivative. (On booleans, ``& | ^ ~`` are the logical operations above.)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
    _elementwise(_name, getattr(np, _name), lambda ts, p: Type("i", broadcast_ndim(*ts)),
                 **PIECEWISE_CONSTANT)
_elementwise("invert", np.invert, lambda ts, p: Type("i", ts[0].ndim), **PIECEWISE_CONSTANT)
_elementwise("maximum", np.maximum, _arith_bool_arrays, nonlinear=True, extreme="max")
_elementwise("minimum", np.minimum, _arith_bool_arrays, nonlinear=True, extreme="min")


def tie_share_impl(x, y):
    """tie_share(x, y): 1 where x wins, 1/2 at a tie, 0 where y wins (numbers or arrays; the
    backend compiles this same function for arrays)."""
    return np.greater(x, y) + np.equal(x, y) * 0.5


tie_share = _elementwise("tie_share", tie_share_impl, **PIECEWISE_CONSTANT)
_elementwise("where", np.where, _where, broadcast_nest=True)

# The next float after x towards y: x moved by at most one unit in the last place, so its
# derivative is 1 in x (as finite differences see it) and 0 in y (a direction only).
_elementwise("nextafter", np.nextafter)
defvjp("nextafter", lambda g, ans, x, y: g, None)

defvjp("add", lambda g, ans, x, y: g, lambda g, ans, x, y: g)
defvjp("sub", lambda g, ans, x, y: g, lambda g, ans, x, y: -g)
defvjp("mul", lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
# d(x/y)/dy = -(x/y)/y, taken as 0 where the quotient is infinite and y is not 0: x/y is then
# ±inf for every y near (x infinite, as the inf or DBL_MAX a dynamic program's border starts
# from, or x/y past overflow), so it does not change with y. At y == 0, a pole, it is not: x/y
# jumps from -inf to inf, and 1 / (1 / x) at x == 0 has derivative 1, not 0 (a zero resistor
# in 1 / np.sum(1 / r)): there the partial stays infinite, and 0 * inf NaN.
defvjp("div", lambda g, ans, x, y: g / y,
       lambda g, ans, x, y: np.where(np.logical_and(np.isinf(ans), y != 0.0), 0.0,
                                     -(g * ans) / y))


def _pow_slope(x, y):
    """d(x**y)/dx = y x**(y-1), taken as 0 where y == 0: x**0 is 1 for every x, 0 included (as
    JAX and autograd take it), not 0 * inf = nan at x == 0. Where 0 < y < 1 and x == 0 the
    slope is infinite: taken as 0, as sqrt's (x**0.5) is (supported.md, "Conventions at
    kinks"), so that a root on an entry np.where discards (colour's sign(x)*|x|**(1/2.4)
    beside a linear segment) gives the chosen side's derivative, not 0 * inf = nan."""
    if isinstance(y, (int, float)):  # a constant exponent: decided while building
        if y == 0:
            return alloc.zero_like(x)
        if 0 < y < 1:
            at_0 = x == 0
            return np.where(at_0, 0.0, y * np.where(at_0, 1.0, x) ** (y - 1))
        return y * x ** (y - 1)
    # Masking x (not the slope) keeps 0 * inf out of this rule's own derivative too (Hessians).
    if getattr(getattr(y, "dtype", None), "kind", "f") != "f":  # an integer exponent
        return y * np.where(y == 0, 1.0, x) ** (y - 1)
    root_at_0 = np.logical_and(x == 0, np.logical_and(y > 0, y < 1))
    return np.where(root_at_0, 0.0,
                    y * np.where(np.logical_or(y == 0, root_at_0), 1.0, x) ** (y - 1))


# d(x**y)/dy = x**y log(x), taken as 0 where x == 0 (as JAX and autograd do: 0**y is 0 for
# every y > 0, so it does not change with y), not 0 * -inf = nan.
defvjp("pow", lambda g, ans, x, y: unless_unread(g, _pow_slope(x, y), at_pole=x == 0),
       lambda g, ans, x, y: unless_unread(g, ans * np.log(np.where(x == 0, 1.0, x))))
defvjp("mod", lambda g, ans, x, y: g, lambda g, ans, x, y: -(g * np.floor(x / y)))
defvjp("arctan2", lambda g, ans, y, x: g * (x / (x * x + y * y)),
       lambda g, ans, y, x: -(g * (y / (x * x + y * y))))
defvjp("hypot", lambda g, ans, x, y: g * (x / ans), lambda g, ans, x, y: g * (y / ans))
defvjp("logaddexp", lambda g, ans, x, y: g * np.exp(x - ans),
       lambda g, ans, x, y: g * np.exp(y - ans))
# logaddexp2(x, y) = log2(2**x + 2**y): the shares of 2**x and 2**y in the sum
defvjp("logaddexp2", lambda g, ans, x, y: g * np.exp2(x - ans),
       lambda g, ans, x, y: g * np.exp2(y - ans))
# copysign(x, y) = ±|x|: the sign of y is constant almost everywhere, so y takes no gradient.
defvjp("copysign", lambda g, ans, x, y: g * (np.sign(x) * np.copysign(1.0, y)), None)
defvjp("maximum", lambda g, ans, x, y: g * tie_share(x, y),
       lambda g, ans, x, y: g * tie_share(y, x))
defvjp("minimum", lambda g, ans, x, y: g * tie_share(y, x),
       lambda g, ans, x, y: g * tie_share(x, y))
defvjp("where", None, lambda g, ans, c, x, y: g * c, lambda g, ans, c, x, y: g * ~c
       if not isinstance(c, (bool, np.bool_)) else g * (not c))

# ----------------------------------------------------------------------------- casts


def _cast_impl(x, kind):
    if np.ndim(x):
        return np.asarray(x, dtype={"f": float, "i": np.int64, "b": bool}[kind])
    return {"f": float, "i": int, "b": bool}[kind](x)


# ``x.astype(kind)``, ``float(x)``, ``np.float64(x)``: linear in x.
primitive("cast", _cast_impl, lambda ts, p: Type(p["kind"], ts[0].ndim), linear=True,
          recomputable=True, same_shape_as=0)
defvjp("cast", lambda g, ans, x, kind: g)
defjvp("cast", lambda t, ans, x, kind: t)


def _round_float32_impl(x):
    if np.ndim(x):
        return np.asarray(x, dtype=np.float32).astype(np.float64)
    return float(np.float32(x))


# ``np.float32(x)``: the value rounded to the nearest float32, carried on as a float64 (as
# Numba computes ``np.float32(x) * 2.0``); its derivative is 1, as JAX's and autograd's
# casts have (the rounding error is not differentiated).
_elementwise("round_float32", _round_float32_impl)
defvjp("round_float32", lambda g, ans, x: g)
