"""Complex numbers as pairs of real values: ``complex(x, y)``, ``1j * x``, ``np.complex128``,
`cmath`, and NumPy's functions of a complex value, written with real primitives.

A complex value the build cannot know (one of its parts depends on an argument) is a `Complex`:
its real and imaginary parts, each a real value of the graph (a `Sym`, or a number known while
building). Every operation on it is its formula in real arithmetic on the two parts
(``(a + bi)(c + di) = (ac - bd) + (ad + bc)i``, ``exp(a + bi) = e^a cos b + i e^a sin b``), so
the graph, its derivative and the generated code stay real: reverse mode differentiates the
parts as it does any real value, and nothing downstream knows complex numbers exist. A value
whose parts are both known while building is Python's own ``complex``.

The functions follow the principal branches of `cmath` and NumPy, with their branch cuts on
the real or imaginary axis, the side of a cut chosen by the sign of the zero imaginary part as
cmath chooses it (the inverse functions are written in the forms of W. Kahan, "Branch cuts for
complex elementary functions", 1987, from square roots of ``1 - z`` and ``1 + z``).

Guarantees: a complex value never reaches a primitive (each handler here takes the parts);
what is not written here (nor in `complex_numpy`) is refused naming the function
(`UnsupportedError`); a complex number returned by the differentiated function is refused by
the frontend, saying to return ``abs(z)`` or ``z.real``. A complex argument of `grad` is bound
as the `Complex` of its two parts (`core.pytree`, `frontend.build`).
"""

from __future__ import annotations

import cmath
import math
import operator
import sys

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import symbolic
from jitgrad.lang.symbolic import NUMPY, loc_of, ndim_of, python_scalar, records

_LN10 = math.log(10.0)


def is_complex(v) -> bool:
    """Whether ``v`` is a complex value: a `Complex`, or a complex number known while
    building."""
    return isinstance(v, (Complex, complex, np.complexfloating)) or (
        isinstance(v, np.ndarray) and v.dtype.kind == "c")


def involved(*values) -> bool:
    """Whether an operation on ``values`` is one of complex numbers that the graph computes:
    a `Complex` among them, or a complex number with a value of the graph."""
    if any(isinstance(v, Complex) for v in values):
        return True
    return (any(is_complex(v) for v in values)
            and any(records(v) for v in values))


class Complex:
    """A complex number (or array) known by its real part ``re`` and imaginary part ``im``,
    each a real value of the graph or a real number known while building."""

    __slots__ = ("im", "re")

    def __init__(self, re, im):
        self.re, self.im = re, im

    def __repr__(self) -> str:
        return f"Complex({self.re!r}, {self.im!r})"

    @property
    def real(self):
        return _part(self.re, self.im)

    @property
    def imag(self):
        return _part(self.im, self.re)

    @property
    def ndim(self) -> int:
        return max(ndim_of(self.re), ndim_of(self.im))

    @property
    def shape(self):
        return (self.re if ndim_of(self.re) >= ndim_of(self.im) else self.im).shape

    @property
    def size(self):
        return (self.re if ndim_of(self.re) >= ndim_of(self.im) else self.im).size

    def conjugate(self):
        return conj(self)

    conj = conjugate

    @property
    def T(self):
        return _each(np.transpose)(self)

    def __len__(self):  # (Python's len() takes an int: `length` gives a run-time one)
        return len(full(self.re, self.im))

    def reshape(self, *shape):
        return _each(np.reshape)(self, shape[0] if len(shape) == 1 else shape)

    def ravel(self): return _each(np.ravel)(self)
    def flatten(self): return _each(np.ravel)(self).copy()
    def copy(self): return _each(np.copy)(self)
    def transpose(self, *axes): return _each(np.transpose)(self, axes or None)
    def sum(self, *args, **kw): return _reduce(np.sum)(self, *args, **kw)
    def mean(self, *args, **kw): return _reduce(np.mean)(self, *args, **kw)
    def cumsum(self, *args, **kw): return _each(np.cumsum)(self, *args, **kw)
    def dot(self, o): return product(np.dot)(self, o)
    def var(self, *args, **kw): return FUNCTIONS[np.var](self, *args, **kw)
    def std(self, *args, **kw): return FUNCTIONS[np.std](self, *args, **kw)
    def prod(self, *args, **kw): return FUNCTIONS[np.prod](self, *args, **kw)
    def compress(self, *args, **kw): return _each(np.ndarray.compress)(self, *args, **kw)

    def astype(self, dtype):
        """To complex128 (itself: the parts are float64); to another type refused (NumPy
        drops the imaginary part to make a real one: take ``z.real``)."""
        if np.dtype(dtype) != np.complex128:
            raise UnsupportedError(f".astype({np.dtype(dtype)}) of a complex value (jitgrad "
                                   "computes complex numbers in double precision; for the real "
                                   "part, take z.real)", loc_of(*_parts(self)))
        return self

    def __getitem__(self, index):
        return pair(self.re[index] if ndim_of(self.re) else self.re,
                    self.im[index] if ndim_of(self.im) else self.im)

    def __add__(self, o): return binary(operator.add, self, o)
    def __radd__(self, o): return binary(operator.add, o, self)
    def __sub__(self, o): return binary(operator.sub, self, o)
    def __rsub__(self, o): return binary(operator.sub, o, self)
    def __mul__(self, o): return binary(operator.mul, self, o)
    def __rmul__(self, o): return binary(operator.mul, o, self)
    def __truediv__(self, o): return binary(operator.truediv, self, o)
    def __rtruediv__(self, o): return binary(operator.truediv, o, self)
    def __pow__(self, o): return binary(operator.pow, self, o)
    def __rpow__(self, o): return binary(operator.pow, o, self)
    def __eq__(self, o): return binary(operator.eq, self, o)  # noqa: E704
    def __ne__(self, o): return binary(operator.ne, self, o)
    def __neg__(self): return pair(_neg(self.re), _neg(self.im))
    def __pos__(self): return self
    def __abs__(self): return absolute(self)

    __hash__ = None

    def _unordered(self, o):
        raise UnsupportedError("`<`, `<=`, `>`, `>=` of complex numbers (Python and NumPy "
                               "do not order them; compare abs(z) or z.real)",
                               loc_of(*_parts(self), *_parts(o)))

    __lt__ = __le__ = __gt__ = __ge__ = _unordered

    def __bool__(self):
        raise UnsupportedError("the truth of a complex value known only at run time (test "
                               "z != 0, or abs(z) > 0)", loc_of(*_parts(self)))

    def __float__(self):
        raise UnsupportedError("float() of a complex value (Python raises TypeError; take "
                               "z.real or abs(z))", loc_of(*_parts(self)))

    # -- the NumPy protocols: np.exp(z), np.real(z), np.sum(z) ------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise UnsupportedError(f"np.{ufunc.__name__}.{method} of a complex value",
                                   loc_of(*_parts(self)))
        return call(ufunc, inputs, {})

    def __array_function__(self, func, types, args, kwargs):
        return call(func, args, kwargs)


symbolic.COMPLEX_TYPES = (*symbolic.COMPLEX_TYPES, Complex)
symbolic.COMPLEX_ARITHMETIC.append(lambda op, a, b: binary(op, a, b))  # (Sym's operators)


def _parts(z):
    return (z.re, z.im) if isinstance(z, Complex) else (z,)


def lift(v) -> Complex:
    """``v`` as a `Complex`: a complex number's two parts, a real value with imaginary part 0."""
    if isinstance(v, Complex):
        return v
    if isinstance(v, (complex, np.complexfloating)):
        return Complex(float(v.real), float(v.imag))
    if isinstance(v, np.ndarray) and v.dtype.kind == "c":
        return Complex(v.real.copy(), v.imag.copy())
    if isinstance(v, (bool, np.bool_)):
        return Complex(float(v), 0.0)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return Complex(float(v), 0.0)
    if records(v):
        return Complex(v, 0.0)
    raise UnsupportedError(f"a {type(v).__name__} in complex arithmetic", loc_of(v))


def pair(re, im):
    """The complex value with parts ``re`` and ``im``: Python's ``complex`` when both are
    numbers known while building, else a `Complex`."""
    re, im = python_scalar(re), python_scalar(im)
    if _number(re) and _number(im):
        return complex(re, im)
    return Complex(re, im)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _known(v) -> bool:
    return not records(v) and np.ndim(v) == 0


def _zero(v) -> bool:
    """Whether ``v`` is a zero known while building (the part a real number lacks)."""
    return _known(v) and v == 0


# Real arithmetic on parts, skipping the terms a known zero makes vanish (so ``x + 0j`` costs
# nothing and ``complex(x, 0.0) * complex(y, 0.0)`` is one product)


def _add(a, b):
    if _zero(b):
        return a
    if _zero(a):
        return b
    return a + b


def _sub(a, b):
    if _zero(b):
        return a
    if _zero(a):
        return _neg(b)
    return a - b


def _mul(a, b):
    if _zero(a) or _zero(b):
        return 0.0
    if _known(a) and a == 1:
        return b
    if _known(b) and b == 1:
        return a
    return a * b


def _neg(a):
    return -a


def _f(fn, *args):
    """The NumPy function ``fn`` of real values (numbers known now, or values of the graph)."""
    if all(_known(a) for a in args):
        return python_scalar(fn(*args))
    return python_scalar(NUMPY[fn](*args))


def _where(cond, a, b):
    if _known(cond):
        return a if cond else b
    return NUMPY[np.where](cond, a, b)


def full(part, other):
    """``part`` at the shape of the pair (a known zero part of an array is an array of zeros,
    as ``(x + 0j).imag`` is in NumPy)."""
    if ndim_of(part) >= ndim_of(other):
        return part
    return part + NUMPY[np.zeros_like](other) if _known(part) else part


def _filled(part, other):
    """A part at the pair's shape, a known zero part left as the number 0.0."""
    return part if _zero(part) else full(part, other)


def _part(part, other):
    """``z.real``, ``z.imag``: the part at the pair's shape. Of an array, a new array that
    cannot be written into: NumPy's is a view of the complex array, which here has no memory
    of its own to write through (and the part may be another array's, ``(x + 0j).real``)."""
    part = full(part, other)
    if records(part) and part.ndim:
        part = NUMPY[np.copy](part)
        builder = symbolic.builder_of(part)
        if builder is not None:
            builder.views.add(part.atom)
    return part


# ----------------------------------------------------------------------------- arithmetic


def binary(op, a, b):
    """``a op b`` with a complex operand (Python's and NumPy's operators)."""
    if op is operator.pow:
        return power(a, b)
    if op is operator.matmul:
        return product(np.matmul)(a, b)
    x, y = lift(a), lift(b)
    if op is operator.add:
        return pair(_add(x.re, y.re), _add(x.im, y.im))
    if op is operator.sub:
        return pair(_sub(x.re, y.re), _sub(x.im, y.im))
    if op is operator.mul:
        return pair(_sub(_mul(x.re, y.re), _mul(x.im, y.im)),
                    _add(_mul(x.re, y.im), _mul(x.im, y.re)))
    if op is operator.truediv:
        if _zero(y.im):  # by a real number: each part
            return pair(x.re / y.re, 0.0 if _zero(x.im) else x.im / y.re)
        den = y.re * y.re + y.im * y.im
        return pair(_add(_mul(x.re, y.re), _mul(x.im, y.im)) / den,
                    _sub(_mul(x.im, y.re), _mul(x.re, y.im)) / den)
    if op is operator.eq:
        return _both(x.re == y.re, x.im == y.im, "logical_and")
    if op is operator.ne:
        return _both(x.re != y.re, x.im != y.im, "logical_or")
    if op in (operator.lt, operator.le, operator.gt, operator.ge):
        x._unordered(y)
    name = getattr(op, "__name__", str(op)).strip("_")
    raise UnsupportedError(f"the operator {name} on complex numbers (Python and NumPy take "
                           "+ - * / ** == != of complex numbers)", loc_of(*_parts(x), *_parts(y)))


def _both(p, q, how):
    if _known(p) and _known(q):
        return bool(p and q) if how == "logical_and" else bool(p or q)
    if _known(p):
        return q if (p if how == "logical_and" else not p) else bool(p)
    if _known(q):
        return p if (q if how == "logical_and" else not q) else bool(q)
    return NUMPY[np.logical_and if how == "logical_and" else np.logical_or](p, q)


def power(a, b):
    """``a ** b``: an integer power known while building by repeated products (as Python
    does for small integer exponents), any other as ``exp(b log a)``."""
    if isinstance(b, int) and not isinstance(b, bool) and abs(b) <= 64:
        if b == 0:
            return complex(1.0, 0.0)
        z, out, n = lift(a), None, abs(b)
        while n:  # square and multiply
            if n & 1:
                out = z if out is None else binary(operator.mul, out, z)
            n >>= 1
            if n:
                z = lift(binary(operator.mul, z, z))
        return binary(operator.truediv, 1.0, out) if b < 0 else out
    return exp(binary(operator.mul, b, log(a)))


def absolute(z):
    z = lift(z)
    if _zero(z.im):
        return _f(np.abs, z.re)
    if _zero(z.re):
        return _f(np.abs, z.im)
    if _known(z.re) and _known(z.im):
        return _f(np.hypot, z.re, z.im)
    # at 0 the derivative is 0, as abs's of a real 0 is (and JAX's): hypot's is 0/0 there,
    # so hypot reads 1.0 in its place, and the result is 0 there
    zero = _both(z.re == 0.0, z.im == 0.0, "logical_and")
    return _where(zero, 0.0, _f(np.hypot, _where(zero, 1.0, z.re), z.im))


def angle(z, deg=False):
    z = lift(z)
    a = _f(np.arctan2, z.im, z.re)
    return a * (180.0 / math.pi) if deg else a


def conj(z):
    z = lift(z)
    return pair(z.re, _neg(z.im))


def real(z):
    return lift(z).real


def imag(z):
    return lift(z).imag


# ----------------------------------------------------------------------------- functions


def exp(z):
    z = lift(z)
    e = _f(np.exp, z.re)
    if _zero(z.im):
        return pair(e, 0.0)
    return pair(_mul(e, _f(np.cos, z.im)), _mul(e, _f(np.sin, z.im)))


def log(z, base=None):
    z = lift(z)
    out = pair(_f(np.log, absolute(z)), _f(np.arctan2, z.im, z.re))
    if base is None:
        return out
    return binary(operator.truediv, out, log(base))


def log10(z):
    out = lift(log(z))
    return pair(out.re / _LN10, out.im / _LN10)


def sqrt(z):
    """The principal square root: ``t = sqrt((|x| + |z|) / 2)``; for ``x >= 0`` it is
    ``t + i y / 2t``, else ``|y| / 2t + i copysign(t, y)`` (no cancellation on either side)."""
    z = lift(z)
    t = _f(np.sqrt, (_f(np.abs, z.re) + absolute(z)) * 0.5)
    safe = _where(t == 0.0, 1.0, t)  # sqrt(0) is 0
    right = pair(t, z.im / (2.0 * safe) if not _zero(z.im) else 0.0)
    left = pair(_where(t == 0.0, 0.0, _f(np.abs, z.im) / (2.0 * safe)),
                _f(np.copysign, t, z.im))
    return _select(z.re >= 0.0, lift(right), lift(left))


def _select(cond, a, b):
    if _known(cond):
        return pair(*_parts(a if cond else b))
    return pair(_where(cond, a.re, b.re), _where(cond, a.im, b.im))


def sin(z):
    z = lift(z)
    return pair(_mul(_f(np.sin, z.re), _f(np.cosh, z.im)),
                _mul(_f(np.cos, z.re), _f(np.sinh, z.im)))


def cos(z):
    z = lift(z)
    return pair(_mul(_f(np.cos, z.re), _f(np.cosh, z.im)),
                _neg(_mul(_f(np.sin, z.re), _f(np.sinh, z.im))))


def sinh(z):
    z = lift(z)
    return pair(_mul(_f(np.sinh, z.re), _f(np.cos, z.im)),
                _mul(_f(np.cosh, z.re), _f(np.sin, z.im)))


def cosh(z):
    z = lift(z)
    return pair(_mul(_f(np.cosh, z.re), _f(np.cos, z.im)),
                _mul(_f(np.sinh, z.re), _f(np.sin, z.im)))


def tanh(z):
    """``(sinh 2x + i sin 2y) / (cosh 2x + cos 2y)``."""
    z = lift(z)
    den = _f(np.cosh, 2.0 * z.re) + _f(np.cos, 2.0 * z.im)
    return pair(_f(np.sinh, 2.0 * z.re) / den, _f(np.sin, 2.0 * z.im) / den)


def _times_i(z):  # i z
    return Complex(_neg(z.im), z.re)


def _over_i(z):  # -i z
    return Complex(z.im, _neg(z.re))


def tan(z):
    """``tan z = -i tanh(i z)``."""
    return pair(*_parts(_over_i(lift(tanh(_times_i(lift(z)))))))


def _one_minus(z):  # 1 - z, the imaginary part's zero negated (Kahan)
    return Complex(1.0 - z.re, _neg(z.im))


def _one_plus(z):
    return Complex(1.0 + z.re, z.im)


def arcsin(z):
    """Kahan: ``Re = atan2(x, Re(sqrt(1-z) sqrt(1+z)))``,
    ``Im = asinh(Im(conj(sqrt(1-z)) sqrt(1+z)))``."""
    z = lift(z)
    s1, s2 = lift(sqrt(_one_minus(z))), lift(sqrt(_one_plus(z)))
    re = _f(np.arctan2, z.re, _sub(_mul(s1.re, s2.re), _mul(s1.im, s2.im)))
    im = _f(np.arcsinh, _sub(_mul(s1.re, s2.im), _mul(s1.im, s2.re)))
    return pair(re, im)


def arccos(z):
    """Kahan: ``Re = 2 atan2(Re sqrt(1-z), Re sqrt(1+z))``,
    ``Im = asinh(Im(conj(sqrt(1+z)) sqrt(1-z)))``."""
    z = lift(z)
    s1, s2 = lift(sqrt(_one_minus(z))), lift(sqrt(_one_plus(z)))
    re = 2.0 * _f(np.arctan2, s1.re, s2.re)
    im = _f(np.arcsinh, _sub(_mul(s2.re, s1.im), _mul(s2.im, s1.re)))
    return pair(re, im)


def arccosh(z):
    """Kahan: ``Re = asinh(Re(conj(sqrt(z-1)) sqrt(z+1)))``,
    ``Im = 2 atan2(Im sqrt(z-1), Re sqrt(z+1))``."""
    z = lift(z)
    s1 = lift(sqrt(Complex(z.re - 1.0, z.im)))
    s2 = lift(sqrt(_one_plus(z)))
    re = _f(np.arcsinh, _add(_mul(s1.re, s2.re), _mul(s1.im, s2.im)))
    im = 2.0 * _f(np.arctan2, s1.im, s2.re)
    return pair(re, im)


def arcsinh(z):
    """``asinh z = -i asin(i z)``."""
    return pair(*_parts(_over_i(lift(arcsin(_times_i(lift(z)))))))


def arctanh(z):
    """``Re = log1p(4x / ((1-x)^2 + y^2)) / 4``, ``Im = atan2(2y, (1-x)(1+x) - y^2) / 2``."""
    z = lift(z)
    x, y = z.re, z.im
    y2 = _mul(y, y)
    re = _f(np.log1p, 4.0 * x / _add((1.0 - x) * (1.0 - x), y2)) * 0.25
    im = _f(np.arctan2, 2.0 * y if not _zero(y) else y, _sub((1.0 - x) * (1.0 + x), y2)) * 0.5
    return pair(re, im)


def arctan(z):
    """``atan z = -i atanh(i z)``."""
    return pair(*_parts(_over_i(lift(arctanh(_times_i(lift(z)))))))


def isfinite(z):
    z = lift(z)
    return _both(_f(np.isfinite, z.re), _f(np.isfinite, z.im), "logical_and")


def isinf(z):
    z = lift(z)
    return _both(_f(np.isinf, z.re), _f(np.isinf, z.im), "logical_or")


def isnan(z):
    z = lift(z)
    return _both(_f(np.isnan, z.re), _f(np.isnan, z.im), "logical_or")


def polar(z):
    return absolute(z), angle(z)


def rect(r, phi):
    return pair(_mul(r, _f(np.cos, phi)), _mul(r, _f(np.sin, phi)))


def square(z):
    return power(z, 2)


def reciprocal(z):
    return binary(operator.truediv, 1.0, z)


def _reduce(fn):
    def f(z, *args, **kwargs):
        z = lift(z)
        return pair(NUMPY[fn](full(z.re, z.im), *args, **kwargs),
                    NUMPY[fn](full(z.im, z.re), *args, **kwargs))
    return f


def _binary(op):
    return lambda a, b: binary(op, a, b)


def _each(fn):
    """A NumPy function that acts on each part alone (a reshape, a running sum): of both."""
    def f(z, *args, **kwargs):
        z = lift(z)
        return pair(NUMPY[fn](full(z.re, z.im), *args, **kwargs),
                    NUMPY[fn](full(z.im, z.re), *args, **kwargs))
    return f


def _joined(fn):
    """A NumPy function joining a sequence of arrays (np.concatenate, np.hstack, ...) of
    which some are complex: each part joined alone (a real array's imaginary part zeros)."""
    def f(arrays, *args, **kwargs):
        zs = [lift(a) for a in arrays]
        return pair(NUMPY[fn]([full(z.re, z.im) for z in zs], *args, **kwargs),
                    NUMPY[fn]([full(z.im, z.re) for z in zs], *args, **kwargs))
    return f


def product(fn, conjugate_first=False):
    """A bilinear product (``np.dot``, ``@``, ``np.outer``, or a function of two real operands;
    ``np.vdot`` conjugates its first operand): four real products, the terms of a zero part
    left out."""
    def f(a, b):
        x, y = lift(a), lift(b)
        x = Complex(_filled(x.re, x.im), _filled(x.im, x.re))  # a part 1.0 of an array:
        y = Complex(_filled(y.re, y.im), _filled(y.im, y.re))  # ones, for the product
        if conjugate_first:
            x = Complex(x.re, _neg(x.im))
        p = NUMPY.get(fn, fn)

        def mul(u, v):
            return 0.0 if _zero(u) or _zero(v) else p(u, v)
        return pair(_sub(mul(x.re, y.re), mul(x.im, y.im)), _add(mul(x.re, y.im), mul(x.im, y.re)))
    return f


def python_sum(items, start=0):
    """Python's ``sum`` of a list or tuple holding complex numbers, or of a complex array
    (over its first axis)."""
    if isinstance(items, (list, tuple)):
        out = start
        for v in items:
            out = binary(operator.add, out, v)
        return out
    return binary(operator.add, start, _reduce(np.sum)(items, axis=0))


def _sequence(kind):
    """``tuple(items)``, ``list(items)`` of a list or tuple holding complex values (of a complex
    array refused: its length may be known only at run time; write ``[z[k] for k in ...]``)."""
    def f(items=()):
        if not isinstance(items, (list, tuple)):
            raise UnsupportedError(f"{kind.__name__}() of a complex array (index its rows: "
                                   "z[0], z[1], ...)", loc_of(*_parts(items)))
        return kind(items)
    return f


def where(cond, a, b):
    x, y = lift(a), lift(b)
    return pair(_where(cond, x.re, y.re), _where(cond, x.im, y.im))


def array(items, dtype=None):
    """``np.array`` of a list of complex numbers (or arrays): an array of each part."""
    if dtype not in (None, complex, np.complex128):
        raise UnsupportedError(f"np.array of complex numbers with dtype={dtype!r}",
                               loc_of(*_all_parts(items, {})))
    if isinstance(items, (list, tuple)):  # (rows that are lists: each an array first)
        zs = [lift(array(v) if isinstance(v, (list, tuple)) else v) for v in items]
        return pair(NUMPY[np.array]([z.re for z in zs]), NUMPY[np.array]([z.im for z in zs]))
    return lift(NUMPY[np.array](items) if records(items) else items)


def complex_of(real=0.0, imag=0.0):
    """``complex(real, imag)``, ``np.complex128(x)``: a pair of the two real values (of
    which either may itself be complex, as Python allows)."""
    if is_complex(imag):
        return binary(operator.add, real, binary(operator.mul, 1j, imag))
    if is_complex(real):
        return binary(operator.add, real, pair(0.0, imag))
    for v in (real, imag):
        if records(v) and v.type.kind == "b":
            raise UnsupportedError("complex() of a bool value of the graph", loc_of(v))
    return pair(real if not records(real) or real.type.kind == "f" else real * 1.0,
                imag if not records(imag) or imag.type.kind == "f" else imag * 1.0)


# Every function of a complex value jitgrad writes, by the function users call: `cmath`'s and
# NumPy's (ufuncs and functions), the `Complex`'s methods aside.
def length(z):
    """``len(z)`` of a complex array: its first axis's size (its parts', a run-time value
    where the graph's is)."""
    z = lift(z)
    if not z.ndim:
        raise TypeError("len() of a complex number")
    return z.shape[0]


FUNCTIONS: dict = {
    cmath.exp: exp, cmath.log: log, cmath.log10: log10, cmath.sqrt: sqrt,
    cmath.sin: sin, cmath.cos: cos, cmath.tan: tan, cmath.sinh: sinh, cmath.cosh: cosh,
    cmath.tanh: tanh, cmath.asin: arcsin, cmath.acos: arccos, cmath.atan: arctan,
    cmath.asinh: arcsinh, cmath.acosh: arccosh, cmath.atanh: arctanh,
    cmath.phase: angle, cmath.polar: polar, cmath.rect: rect,
    cmath.isfinite: isfinite, cmath.isinf: isinf, cmath.isnan: isnan,
    np.exp: exp, np.log: log, np.log10: log10, np.sqrt: sqrt, np.sin: sin, np.cos: cos,
    np.tan: tan, np.sinh: sinh, np.cosh: cosh, np.tanh: tanh, np.arcsin: arcsin,
    np.arccos: arccos, np.arctan: arctan, np.arcsinh: arcsinh, np.arccosh: arccosh,
    np.arctanh: arctanh, np.isfinite: isfinite, np.isinf: isinf, np.isnan: isnan,
    np.abs: absolute, np.absolute: absolute, np.angle: angle, np.real: real, np.imag: imag,
    np.conj: conj, np.conjugate: conj, np.square: square, np.reciprocal: reciprocal,
    np.negative: operator.neg, np.positive: operator.pos,
    np.add: _binary(operator.add), np.subtract: _binary(operator.sub),
    np.multiply: _binary(operator.mul), np.divide: _binary(operator.truediv),
    np.power: _binary(operator.pow), np.equal: _binary(operator.eq),
    np.not_equal: _binary(operator.ne),
    np.sum: _reduce(np.sum), np.mean: _reduce(np.mean),
    np.cumsum: _each(np.cumsum), np.reshape: _each(np.reshape), np.ravel: _each(np.ravel),
    np.transpose: _each(np.transpose), np.copy: _each(np.copy), np.flip: _each(np.flip),
    np.roll: _each(np.roll), np.squeeze: _each(np.squeeze), np.diff: _each(np.diff),
    np.expand_dims: _each(np.expand_dims), np.dot: product(np.dot),
    # (real-linear rearrangements: of each part alone; np.diag(V) places V's two parts)
    np.diag: _each(np.diag), np.diagonal: _each(np.diagonal), np.trace: _each(np.trace),
    np.diagflat: _each(np.diagflat), np.tril: _each(np.tril), np.triu: _each(np.triu),
    np.tile: _each(np.tile), np.repeat: _each(np.repeat), np.swapaxes: _each(np.swapaxes),
    np.moveaxis: _each(np.moveaxis), np.atleast_1d: _each(np.atleast_1d),
    np.atleast_2d: _each(np.atleast_2d), np.concatenate: _joined(np.concatenate),
    np.hstack: _joined(np.hstack), np.vstack: _joined(np.vstack),
    np.column_stack: _joined(np.column_stack), np.stack: _joined(np.stack),
    np.matmul: product(np.matmul), np.outer: product(np.outer),
    np.vdot: product(np.vdot, conjugate_first=True), operator.matmul: product(np.matmul),
    np.where: where, np.array: array, np.asarray: array,
    np.ndim: lambda z: lift(z).ndim, np.shape: lambda z: lift(z).shape, len: length,
    sum: python_sum, tuple: _sequence(tuple), list: _sequence(list),
    abs: absolute, pow: power, complex: complex_of, np.complex128: complex_of,
    operator.add: _binary(operator.add), operator.sub: _binary(operator.sub),
    operator.mul: _binary(operator.mul), operator.truediv: _binary(operator.truediv),
    operator.pow: _binary(operator.pow), operator.neg: operator.neg, operator.abs: absolute,
}


def wofz(z):
    """scipy.special.wofz, the Faddeeva function w(z) = exp(-z^2) erfc(-iz): its two parts
    (`prims.complex_special`)."""
    z = lift(z)
    return pair(symbolic.record("wofz_re", z.re, z.im), symbolic.record("wofz_im", z.re, z.im))


def loggamma(z):
    """scipy.special.loggamma of a complex argument: the principal branch of log Gamma(z), its
    two parts (`prims.complex_special`)."""
    z = lift(z)
    return pair(symbolic.record("loggamma_re", z.re, z.im),
                symbolic.record("loggamma_im", z.re, z.im))


# scipy.special's functions of a complex argument, by name (`complex_numpy` adds erf, erfc)
SCIPY_SPECIAL: dict = {"wofz": wofz, "loggamma": loggamma}


# scipy.linalg's functions of a complex matrix, by name (`complex_linalg` fills it)
SCIPY_LINALG: dict = {}


def _scipy_special(fn):
    """The handler of scipy.special's (or scipy.linalg's) function ``fn`` of a complex
    argument, or None (SciPy looked up only once the user's code has imported it)."""
    for module, table in (("scipy.special", SCIPY_SPECIAL), ("scipy.linalg", SCIPY_LINALG)):
        loaded = sys.modules.get(module)
        if loaded is not None:
            for name, handler in table.items():
                if fn is getattr(loaded, name, None):
                    return handler
    fft, name = sys.modules.get("scipy.fft"), getattr(fn, "__name__", "")
    if fft is not None and fn is getattr(fft, name, None) and getattr(np.fft, name, 0) in FUNCTIONS:
        return lambda *args, **kw: FUNCTIONS[getattr(np.fft, name)](*args, **{  # scipy.fft.ifft:
            k: v for k, v in kw.items() if k not in ("overwrite_x", "workers", "plan")})  # NumPy's
    return None


def takes(fn, args, kwargs) -> bool:
    """Whether the call ``fn(*args, **kwargs)`` is one of a complex value the graph computes
    (so it goes to `call`), and not Python's or NumPy's on values known while building."""
    values = _flat((*args, *kwargs.values()))  # (np.array of nested lists: every item)
    if fn in (complex, np.complex128, np.complex64):
        return any(records(v) or isinstance(v, Complex) for v in values)
    if fn is np.polyval and any(records(v) for v in values):  # (at a complex constant)
        return any(isinstance(v, (complex, np.complexfloating, Complex)) for v in values)
    return involved(*values) or (fn in (cmath.rect,) and any(records(v) for v in values))


def _flat(values) -> tuple:
    return tuple(v for a in values for v in (
        (a, *_flat(a)) if isinstance(a, (list, tuple)) else (a,)))


def call(fn, args, kwargs):
    """``fn(*args, **kwargs)`` with a complex argument, as its formula on the parts."""
    if fn is np.complex64:
        raise UnsupportedError("np.complex64 of a value of the graph (jitgrad computes complex "
                               "numbers in double precision: write np.complex128 or complex)",
                               loc_of(*_all_parts(args, kwargs)))
    handler = FUNCTIONS.get(fn) or _scipy_special(fn)
    if handler is None:
        name = getattr(fn, "__name__", repr(fn))
        module = (getattr(fn, "__module__", None) or (
            "numpy" if getattr(np, name, None) is fn else "scipy.special"
            if isinstance(fn, np.ufunc) else "")).split(".")
        if module[0] in ("numpy", "scipy", "cmath"):  # np.linalg.svd, scipy.special.erf
            name = ".".join(["np" if module[0] == "numpy" else module[0], *module[1:], name])
        raise UnsupportedError(f"{name} of a complex value is not supported (jitgrad "
                               "computes complex numbers as their real and imaginary parts: "
                               "+ - * / ** @, abs, conjugate, exp, log, sqrt, trigonometric and "
                               "hyperbolic functions and their inverses, cmath.phase/polar/"
                               "rect, np.real/imag/conj/angle, sums, products, reshapes)",
                               loc_of(*_all_parts(args, kwargs)))
    return handler(*args, **kwargs)


def _all_parts(args, kwargs):
    return [p for v in (*args, *kwargs.values()) for p in _parts(v)]
