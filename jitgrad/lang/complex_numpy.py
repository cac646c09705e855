"""NumPy's functions of complex arrays beyond `complex_pairs`' elementary ones, each written
from real functions of the two parts: the variants of exp and log (``exp2 expm1 log1p log2``),
the tests of complexity (``iscomplex isreal iscomplexobj isrealobj``), ``var`` and ``std``,
``max`` and ``min`` (NumPy's order: the real part, then the imaginary part), ``prod`` (a loop
of products, `numpy_written`), the norms of ``np.linalg.norm`` that depend on the entries'
moduli only, the bilinear products beyond ``dot``/``@``/``outer`` (``inner kron tensordot
convolve``, ``einsum`` of two operands), ``isinstance``, scipy.special's ``erf`` and ``erfc`` of
a complex argument (from the Faddeeva function), and ``zeros_like ones_like empty_like`` of a
complex array (a new complex array of its shape, both parts allocated, which writes fill part
by part).

Each fills `complex_pairs.FUNCTIONS` (the table a call with a complex argument goes to); what
is not here is refused there, by name. The matrix norms that need singular values
(``ord=2, -2, 'nuc'`` of a matrix) are `complex_linalg`'s, whose ``norm`` leaves the rest
here. Guarantees: NumPy's values (to rounding) on its principal branches; the derivative
is that of the real formulas (``abs(z)`` at 0 has derivative 0, as JAX's).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import complex_pairs, numpy_written
from jitgrad.lang.complex_pairs import FUNCTIONS, Complex, absolute, lift, pair, product
from jitgrad.lang.symbolic import NUMPY, Written, loc_of, records

_LN2 = math.log(2.0)


def _f(fn, *args):
    """NumPy's real function ``fn`` of parts, known or of the graph."""
    if any(records(a) for a in args):
        return NUMPY[fn](*args)
    return fn(*args)


def expm1(z):
    """``exp(z) - 1`` without cancellation near 0: ``expm1(x) cos y - 2 sin^2(y/2)`` and
    ``e^x sin y``."""
    z = lift(z)
    half = _f(np.sin, z.im * 0.5)
    return pair(_f(np.expm1, z.re) * _f(np.cos, z.im) - 2.0 * half * half,
                _f(np.exp, z.re) * _f(np.sin, z.im))


def log1p(z):
    """``log(1 + z)`` without cancellation near 0: ``log1p(2x + x^2 + y^2) / 2`` and the
    angle of ``1 + z``."""
    z = lift(z)
    return pair(0.5 * _f(np.log1p, z.re * (2.0 + z.re) + z.im * z.im),
                _f(np.arctan2, z.im, 1.0 + z.re))


def exp2(z):
    z = lift(z)
    return complex_pairs.exp(pair(z.re * _LN2, z.im * _LN2))


def log2(z):
    w = lift(complex_pairs.log(z))
    return pair(w.re / _LN2, w.im / _LN2)


def iscomplex(z):
    z = lift(z)
    return complex_pairs.full(z.im, z.re) != 0.0


def isreal(z):
    z = lift(z)
    return complex_pairs.full(z.im, z.re) == 0.0


def var(z, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The variance of complex entries, NumPy's ``mean(abs(z - z.mean())**2)``: the sum of
    the parts' variances (the same ``ddof``); a real number."""
    if dtype is not None or out is not None:
        raise UnsupportedError("np.var of a complex array with dtype= or out=",
                               loc_of(*_parts(z)))
    z = lift(z)
    kw = {"axis": axis, "ddof": ddof, "keepdims": keepdims}
    re, im = complex_pairs.full(z.re, z.im), complex_pairs.full(z.im, z.re)
    return NUMPY[np.var](re, **kw) + NUMPY[np.var](im, **kw)


def std(z, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _f(np.sqrt, var(z, axis, dtype, out, ddof, keepdims))


def _extreme(fn):
    """``np.max``/``np.min`` of complex entries, as NumPy orders them: by the real part, a tie
    by the imaginary part. The entry NumPy returns is found by comparisons (no derivative),
    and the result is that entry, so its derivative goes to it alone (as autograd's; entries
    exactly equal to it share it, as JAX's ``max`` shares a tie)."""
    def f(z, axis=None, out=None, keepdims=False, **kw):
        if out is not None or kw:
            raise UnsupportedError(f"np.{fn.__name__} of a complex array with out= or "
                                   f"{', '.join(kw)}", loc_of(*_parts(z)))
        z = lift(z)
        re, im = complex_pairs.full(z.re, z.im), complex_pairs.full(z.im, z.re)
        where, total = NUMPY[np.where], NUMPY[np.sum]
        first = re == NUMPY[fn](re, axis=axis, keepdims=True)
        tied = where(first, im, -np.inf if fn is np.max else np.inf)
        chosen = NUMPY[np.logical_and](first, im == NUMPY[fn](tied, axis=axis, keepdims=True))
        count = total(where(chosen, 1.0, 0.0), axis=axis, keepdims=keepdims)
        return pair(*(total(where(chosen, p, 0.0), axis=axis, keepdims=keepdims) / count
                      for p in (re, im)))
    return f


def prod(z, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """``np.prod`` of complex entries along an axis (or all): a loop of complex products
    (`numpy_written.complex_prod`), built as the user's code is."""
    if dtype is not None or out is not None or kw:
        raise UnsupportedError("np.prod of a complex array with dtype=, out=, initial= or "
                               "where=", loc_of(*_parts(z)))
    z = lift(z)
    nd = z.ndim
    if nd == 0:
        return z
    if axis is None:
        rows = FUNCTIONS[np.ravel](z)
        return Written(numpy_written.complex_prod, (rows, None, (1,) * nd if keepdims else None),
                       {})
    if not isinstance(axis, int) or isinstance(axis, bool) or not -nd <= axis < nd:
        raise UnsupportedError(f"np.prod of a complex array along axis={axis!r} (one axis, or "
                               "None)", loc_of(*_parts(z)))
    k = axis % nd
    rows = FUNCTIONS[np.transpose](z, (k, *(j for j in range(nd) if j != k))) if k else z
    return Written(numpy_written.complex_prod, (rows, k if keepdims else None, None), {})


def erfc(z):
    """scipy.special.erfc of a complex argument: ``exp(-z^2) w(iz)``, the Faddeeva function
    (`complex_pairs.wofz`) at ``iz``."""
    z = lift(z)
    iz = pair(-z.im, z.re)
    return complex_pairs.binary(operator.mul, complex_pairs.exp(
        complex_pairs.binary(operator.mul, -1.0, complex_pairs.square(z))),
        complex_pairs.wofz(iz))


_ERF_TERMS = 16  # Taylor terms of erf for |z| < 1/2: the last below 1e-17 of the first


def erf(z):
    """scipy.special.erf of a complex argument: ``1 - erfc(z)``, and near 0 (``|z| < 1/2``,
    where that difference cancels) its Taylor series ``2/sqrt(pi) sum (-1)^n z^(2n+1) /
    (n! (2n+1))``."""
    z = lift(z)
    z2 = complex_pairs.square(z)
    term, total = z, z
    for n in range(1, _ERF_TERMS):
        term = complex_pairs.binary(operator.mul, term, pair(-lift(z2).re / n, -lift(z2).im / n))
        total = complex_pairs.binary(operator.add, total, complex_pairs.binary(
            operator.truediv, term, float(2 * n + 1)))
    series = lift(complex_pairs.binary(operator.mul, 2.0 / math.sqrt(math.pi), total))
    far = lift(complex_pairs.binary(operator.sub, 1.0, erfc(z)))
    near = absolute(z) < 0.5
    if not records(near):
        return pair(*((series.re, series.im) if near else (far.re, far.im)))
    where = NUMPY[np.where]
    return pair(where(near, series.re, far.re), where(near, series.im, far.im))


def real_if_close(z, tol=100):
    """``np.real_if_close``: the real part where every imaginary part is below ``tol``
    machine epsilons (``tol`` above 1; an absolute tolerance below), else ``z`` itself.
    NumPy's dtype then depends on the values; here the result stays a complex value whose
    imaginary part is 0 in the first case, so its values, and the derivative away from the
    threshold, are NumPy's (a real result: take ``.real``)."""
    z = lift(z)
    if tol > 1:
        tol = tol * np.finfo(np.float64).eps
    im = complex_pairs.full(z.im, z.re)
    if not records(im):
        return z.re if np.all(np.abs(im) < tol) else z
    close = NUMPY[np.all](NUMPY[np.abs](im) < tol)
    return pair(z.re, NUMPY[np.where](close, 0.0 * im, im))


def _parts(z):
    return (z.re, z.im) if isinstance(z, Complex) else (z,)


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm`` of a complex vector or matrix: every vector norm, and the matrix
    norms ``'fro'``, ``1``, ``-1``, ``inf``, ``-inf``, are those of the entries' moduli, so
    the norm of ``abs(x)`` (the spectral and nuclear norms, of singular values, are
    `complex_linalg.norm`'s, which calls this for the others)."""
    z = lift(x)
    return NUMPY[np.linalg.norm](absolute(z), ord, axis, keepdims)


def _with_operands(fn):
    """A product of two operands with arguments after them (``np.tensordot(a, b, axes)``,
    ``np.kron``, ``np.inner``): `complex_pairs.product`'s four real products."""
    def f(a, b, *args, **kwargs):
        return product(lambda u, v: NUMPY[fn](u, v, *args, **kwargs))(a, b)
    return f


def einsum(subscripts, *operands, **kwargs):
    """``np.einsum`` with a subscript string of one operand (each part alone) or two (the
    four real products)."""
    if not isinstance(subscripts, str) or len(operands) not in (1, 2) or kwargs:
        raise UnsupportedError("np.einsum of complex operands: a subscript string and one or "
                               "two operands", loc_of(*(p for o in operands
                                                        for p in _parts(lift(o)))))
    if len(operands) == 1:
        z = lift(operands[0])
        return pair(*(NUMPY[np.einsum](subscripts, complex_pairs.full(p, q))
                      for p, q in ((z.re, z.im), (z.im, z.re))))
    return product(lambda u, v: NUMPY[np.einsum](subscripts, u, v))(*operands)


def polyval(p, x):
    """``np.polyval(p, x)`` at a complex ``x`` (a transfer function at ``1j * w``): Horner's
    rule, its products and sums on the parts; unrolled over a list of coefficients, a loop
    (`numpy_written.polyval_at_complex`) over a real vector of them."""
    if isinstance(p, (list, tuple, np.ndarray)):  # as many as known while building: unrolled
        out = lift(lift(x) * 0.0 + p[0])  # (lift: a product of constants is Python's complex)
        for c in p[1:]:
            out = lift(out * x) + c
        return out
    if isinstance(p, Complex):
        raise UnsupportedError("np.polyval of a complex vector of coefficients: pass them as a "
                               "list, or their real and imaginary parts apart", loc_of(p.re))
    z = lift(x)  # real coefficients, as many as known at run time: a loop on the parts
    return Written(numpy_written.polyval_at_complex, (p, complex_pairs.full(z.re, z.im),
                                                      complex_pairs.full(z.im, z.re)), {})


def _scimath(name):
    """``np.emath.<name>(x)`` (numpy.lib.scimath: tmm's ``arcsin(n0 sin th0 / n)``): of
    values known while building, NumPy's; else NumPy's function of ``x + 0j``, complex
    whatever the values (NumPy's result is complex when an entry leaves the real domain, and
    equal to this where none does)."""
    def f(*args):
        if not any(records(a) or isinstance(a, Complex) for a in args):
            return getattr(np.emath, name)(*args)
        return FUNCTIONS[getattr(np, name)](*(lift(a) for a in args))
    f.__name__ = f"emath.{name}"
    return f


_SCIMATH = {getattr(np.emath, name): _scimath(name) for name in (
    "sqrt", "log", "log10", "log2", "arcsin", "arccos", "arctanh", "power")}
NUMPY.update(_SCIMATH)  # (of a real value of the graph, complex all the same)
FUNCTIONS.update(_SCIMATH)


def _like(name):
    """``np.zeros_like(z)`` (ones, empty) of a complex array: a complex array of z's shape
    (scikit-rf's ``F = np.zeros_like(s)`` then ``F[:, i, i] = ...``); with a real dtype, the
    real array of its shape."""
    def like(z, dtype=None, order="K", subok=True, shape=None):
        shape = lift(z).shape if shape is None else shape
        if dtype is None or np.dtype(dtype).kind == "c":
            return NUMPY[getattr(np, name)](shape, dtype=complex)
        return NUMPY[getattr(np, name)](shape, dtype=dtype)
    return like


def complex_isinstance(z, classinfo):
    """``isinstance(z, cls)`` of a complex value: a number is a complex (NumPy's complex128
    and Python's both are) and a number, not an int, a float or a container; an array is an
    ndarray. A class the two kinds of complex number answer differently for (``np.generic``,
    ``np.complexfloating``) is refused."""
    import numbers
    classes = classinfo if isinstance(classinfo, tuple) else (classinfo,)
    array = lift(z).ndim > 0
    yes = (np.ndarray,) if array else (complex, numbers.Complex, numbers.Number)
    no = (complex, numbers.Number, int, float, bool, str, list, tuple, dict) if array else (
        int, float, bool, str, list, tuple, dict, np.ndarray)
    if any(c in yes for c in classes):
        return True
    if all(c in no for c in classes):
        return False
    raise UnsupportedError("isinstance of a complex value against a class NumPy's complex128 "
                           "and Python's complex answer differently for (test against "
                           "complex or np.ndarray)", loc_of(lift(z).re, lift(z).im))


complex_pairs.SCIPY_SPECIAL.update(erf=erf, erfc=erfc)
FUNCTIONS.update({
    np.expm1: expm1, np.log1p: log1p, np.exp2: exp2, np.log2: log2,
    np.iscomplex: iscomplex, np.isreal: isreal,
    np.iscomplexobj: lambda z: True, np.isrealobj: lambda z: False,
    np.real_if_close: real_if_close,
    np.var: var, np.std: std, np.linalg.norm: norm,
    np.max: _extreme(np.max), np.amax: _extreme(np.max), np.min: _extreme(np.min),
    np.amin: _extreme(np.min), np.prod: prod,
    np.kron: _with_operands(np.kron), np.tensordot: _with_operands(np.tensordot),
    np.inner: _with_operands(np.inner), np.einsum: einsum, np.polyval: polyval,
    np.zeros_like: _like("zeros"), np.ones_like: _like("ones"), np.empty_like: _like("empty"),
    np.convolve: product(np.convolve), isinstance: complex_isinstance,
})
