"""NumPy functions written as compositions of NumPy functions jitgrad already takes: NaN-aware
reductions, interpolation, covariance and correlation, integration, polynomials, and a few
array builders. Each is the closed form NumPy documents, so its derivative follows from the
functions it is made of (where NumPy's value is piecewise, as ``np.interp`` between its points,
the derivative is that of the piece).

Takes values of the graph (`Sym`) or constants (a call on constants only is run by NumPy
itself); fills `symbolic.NUMPY` when imported (by ``jitgrad.lang``). A form outside what a
function here covers is refused naming the function and the argument.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import numpy_written as W
from jitgrad.lang.numpy_args import as_array
from jitgrad.lang.symbolic import (
    NUMPY,
    all_known,
    loc_of,
    ndim_of,
    numpy_handler,
    record,
    records,
    written,
)

_np = numpy_handler  # a NumPy function's handler, for the compositions below


def _at(x, i):
    """``x[i]``: an entry (``i`` a number) or the rows at integers (``i`` an int vector)."""
    if not records(x) and not records(i):
        return x[i]
    x = as_array(x)
    if ndim_of(i) > 1:  # integers of any shape: the entries at them all, in that shape
        return _np(np.reshape)(_at(x, _np(np.ravel)(i)), tuple(i.shape))
    if ndim_of(i):  # a gather (checked at run time), whose adjoint adds up repeats
        if ndim_of(x) != 1:
            raise UnsupportedError("rows at integers of a vector only", loc_of(x, i))
        return record("take", x, record("index_positions", i, x, kind="rows"))
    return record("getitem", x, i, index_spec=("i",))


def _from(x, start=None, stop=None):
    """``x[start:stop]`` of a vector."""
    if not records(x):
        return x[start:stop]
    bounds = [b for b in (start, stop) if b is not None]
    return record("getitem", x, *bounds, index_spec=(("s", start is not None, stop is not None,
                                                      False),))


def _static_len(c):
    """The length of vector ``c`` where it is known while building (a constant, or an array
    made with a literal size), else None."""
    if not records(c):
        return len(c)
    dims = getattr(getattr(c, "atom", None), "dims", None)
    return dims[0] if dims and isinstance(dims[0], int) else None


def _column(x):
    return _np(np.reshape)(x, (-1, 1))


def _row(x):
    return _np(np.reshape)(x, (1, -1))


# ---- NaN-aware reductions: the reduction of the entries that are not NaN -----------------------


def _nan_reduction(name, fill, reduce):
    """``np.nansum`` and friends: NaN entries replaced by ``fill`` (the reduction's identity),
    then reduced; ``nanmean``/``nanvar`` divide by the count of entries that are not NaN."""
    fn = getattr(np, name)

    def f(a, axis=None, **kwargs):
        if all_known(a):
            return fn(a, axis=axis, **kwargs)
        if set(kwargs) - {"keepdims", "ddof"}:
            raise UnsupportedError(f"np.{name} with {', '.join(kwargs)}", loc_of(a))
        nan = record("isnan", a)
        return reduce(_np(np.where)(nan, fill, a), nan, axis, kwargs)
    return f


def _count(nan, axis, keepdims=False):
    return _np(np.sum)(record("cast", record("logical_not", nan), kind="f"), axis=axis,
                       keepdims=keepdims)


def _nanmean(filled, nan, axis, kw):
    return _np(np.sum)(filled, axis=axis, keepdims=kw.get("keepdims", False)) / _count(
        nan, axis, kw.get("keepdims", False))


def _nanvar(filled, nan, axis, kw):
    n = _count(nan, axis, True)
    mean = _np(np.sum)(filled, axis=axis, keepdims=True) / n
    dev = _np(np.where)(nan, 0.0, filled - mean)
    keep = kw.get("keepdims", False)
    return _np(np.sum)(dev * dev, axis=axis, keepdims=keep) / (
        _count(nan, axis, keep) - kw.get("ddof", 0))


NAN_REDUCTIONS = {
    np.nansum: _nan_reduction("nansum", 0.0, lambda a, nan, axis, kw: _np(np.sum)(
        a, axis=axis, **kw)),
    np.nanprod: _nan_reduction("nanprod", 1.0, lambda a, nan, axis, kw: _np(np.prod)(
        a, axis=axis, **kw)),
    np.nanmax: _nan_reduction("nanmax", -np.inf, lambda a, nan, axis, kw: _np(np.max)(
        a, axis=axis, **kw)),
    np.nanmin: _nan_reduction("nanmin", np.inf, lambda a, nan, axis, kw: _np(np.min)(
        a, axis=axis, **kw)),
    np.nanmean: _nan_reduction("nanmean", 0.0, _nanmean),
    np.nanvar: _nan_reduction("nanvar", 0.0, _nanvar),
    np.nanstd: _nan_reduction("nanstd", 0.0, lambda a, nan, axis, kw: _np(np.sqrt)(
        _nanvar(a, nan, axis, kw))),
    np.nancumsum: _nan_reduction("nancumsum", 0.0, lambda a, nan, axis, kw: _np(np.cumsum)(
        a, axis=axis)),
    np.nancumprod: _nan_reduction("nancumprod", 1.0, lambda a, nan, axis, kw: _np(np.cumprod)(
        a, axis=axis)),
}


# ---- interpolation, integration, statistics ---------------------------------------------------


def np_interp(x, xp, fp, left=None, right=None, period=None):
    """Linear interpolation at ``x`` (a number or an array of any shape) between the points ``(xp, fp)``
    (``xp`` increasing): each x's interval found by counting the points at or below it,
    ``fp[0]`` left of the points and ``fp[-1]`` right of them (or ``left``/``right``)."""
    if all_known(x, xp, fp):
        return np.interp(x, xp, fp, left, right, period)
    if period is not None:
        raise UnsupportedError("np.interp with period=", loc_of(x, xp, fp))
    xp, fp = as_array(xp), as_array(fp)
    if ndim_of(xp) != 1 or ndim_of(fp) != 1:
        raise UnsupportedError("np.interp between other than vectors of points",
                               loc_of(x, xp, fp))
    if ndim_of(x) > 1:  # at an array of any shape: at its entries, in that shape
        x = as_array(x)
        flat = np_interp(_np(np.reshape)(x, (-1,)), xp, fp, left, right)
        return _np(np.reshape)(flat, x.shape)
    scalar = ndim_of(x) == 0
    xs = _np(np.reshape)(as_array(x) if not scalar else x * _np(np.ones)(1), (-1, 1))
    below = _np(np.sum)(record("cast", _row(xp) <= xs, kind="i"), axis=1)
    last = xp.shape[0] - 2 if records(xp) else len(xp) - 2
    i = _np(np.clip)(below - 1, 0, last)
    x0, x1, f0, f1 = _at(xp, i), _at(xp, i + 1), _at(fp, i), _at(fp, i + 1)
    flat = _np(np.reshape)(xs, (-1,))
    inside = f0 + (flat - x0) * ((f1 - f0) / (x1 - x0))
    low = _at(fp, 0) if left is None else left
    high = _at(fp, -1) if right is None else right
    out = _np(np.where)(flat < _at(xp, 0), low, _np(np.where)(flat > _at(xp, -1), high, inside))
    return _at(out, 0) if scalar else out


def np_trapezoid(y, x=None, dx=1.0, axis=-1):
    """``np.trapezoid(y, x, dx, axis)``: the trapezoids along ``axis`` (moved first), summed;
    ``x`` a vector along that axis or an array of ``y``'s shape, as NumPy takes it."""
    if all_known(y, x):
        return np.trapezoid(y, x, dx, axis)
    y = as_array(y)
    n = ndim_of(y)
    if n == 0 or not isinstance(axis, int) or not -n <= axis < n or (
            x is not None and ndim_of(x) not in (1, n)):
        raise UnsupportedError("np.trapezoid of an array along one axis, with x a vector "
                               "or an array of y's shape", loc_of(y, x))
    if n > 1:
        y = _np(np.moveaxis)(y, axis, 0)
    widths = dx
    if x is not None:
        x = as_array(x)
        if ndim_of(x) == n and n > 1:
            x = _np(np.moveaxis)(x, axis, 0)
        widths = _np(np.diff)(x, axis=0) if ndim_of(x) > 1 else _np(np.diff)(x)
        if ndim_of(x) == 1 and n > 1:  # along axis 0 of the moved y
            widths = _np(np.reshape)(widths, (-1,) + (1,) * (n - 1))
    terms = (_from(y, 1) + _from(y, None, -1)) * widths
    return (_np(np.sum)(terms, axis=0) if n > 1 else _np(np.sum)(terms)) * 0.5


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """scipy.integrate.cumulative_trapezoid of a vector: the running sums of the trapezoids
    (`np_trapezoid`'s terms), with ``initial=0`` a 0 first (SciPy takes no other value)."""
    if initial is not None and (records(initial) or initial != 0):
        raise ValueError("`initial` must be `None` or `0`.")
    if all_known(y, x):
        import scipy.integrate
        return scipy.integrate.cumulative_trapezoid(y, x, dx, axis, initial)
    if ndim_of(y) != 1 or (x is not None and ndim_of(x) != 1):
        raise UnsupportedError("scipy.integrate.cumulative_trapezoid of a vector",
                               loc_of(y, x))
    y = as_array(y)
    widths = _np(np.diff)(as_array(x)) if x is not None else dx
    sums = _np(np.cumsum)((_from(y, 1) + _from(y, None, -1)) * widths * 0.5)
    if initial is None:
        return sums
    return _np(np.concatenate)((_np(np.zeros)(1), sums))


INTEGRATE = {"trapezoid": np_trapezoid, "cumulative_trapezoid": cumulative_trapezoid}


def _cov_weights(name, w, loc):
    """``np.cov``'s ``fweights`` or ``aweights`` as a float vector, or 1.0 when not given: a
    constant checked now as NumPy checks it, an array of the graph checked at run time (no
    negative entry, in `numpy_written.cov_weighted`); frequency weights are integers."""
    if w is None:
        return 1.0
    if not records(w):
        w = np.asarray(w, dtype=float)
        if w.ndim != 1:
            raise UnsupportedError(f"np.cov: {name} must be a vector", loc)
        if name == "fweights" and not np.all(w == np.around(w)):
            raise UnsupportedError("np.cov: fweights must be integers", loc)
        if np.any(w < 0):
            raise UnsupportedError(f"np.cov: {name} cannot be negative", loc)
        return w
    if ndim_of(w) != 1 or (name == "fweights" and w.dtype.kind not in "iu"):
        raise UnsupportedError(f"np.cov with {name} other than a vector of "
                               f"{'integers' if name == 'fweights' else 'numbers'} (convert "
                               "them with astype)", loc)
    return w if w.dtype.kind == "f" else record("cast", w, kind="f")


def np_cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
           dtype=None):
    """The covariance of the variables (rows, or columns with ``rowvar=False``): the centred
    observations' product, divided by N - 1 (N with ``bias``, N - ``ddof``). With
    ``fweights`` (integer repeats) and ``aweights`` (observation weights), NumPy's weighted
    mean and normalisation: the weights' sum ``v1`` less ``ddof`` (with ``aweights``, less
    ``ddof`` times the sum of ``w * aweights`` over ``v1``); the derivative follows the
    observations and ``aweights``."""
    if all_known(m, y, fweights, aweights):
        return np.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype)
    m = as_array(m)
    one_variable = ndim_of(m) == 1 and y is None  # NumPy's answer is then a number
    if ndim_of(m) == 1:
        m = _np(np.reshape)(m, (1, -1))
    elif not rowvar:
        m = _np(np.transpose)(m)
    if y is not None:
        y = as_array(y)
        y = _np(np.reshape)(y, (1, -1)) if ndim_of(y) == 1 else (
            y if rowvar else _np(np.transpose)(y))
        m = _np(np.concatenate)((m, y), axis=0)
    n = m.shape[1]
    ddof = ddof if ddof is not None else (0 if bias else 1)
    dims = getattr(getattr(m, "atom", None), "dims", None)
    one_variable = one_variable or bool(dims) and dims[0] == 1  # NumPy squeezes (1, 1) too
    if fweights is not None or aweights is not None:
        fw = _cov_weights("fweights", fweights, loc_of(m))
        aw = _cov_weights("aweights", aweights, loc_of(m))
        normalised_by = 0 if ddof == 0 else (1 if aweights is None else 2)
        return written(W.cov_weighted, m, fw, aw, ddof, normalised_by, one_variable)
    centred = m - _np(np.mean)(m, axis=1, keepdims=True)
    c = (centred @ _np(np.transpose)(centred)) / (n - ddof)
    return _at(_at(c, 0), 0) if one_variable else c


def np_corrcoef(x, y=None, rowvar=True, dtype=None):
    c = np_cov(x, y, rowvar)
    if ndim_of(c) == 0:  # one variable: NumPy's c / c
        return c / c
    d = _np(np.sqrt)(_np(np.diagonal)(c))
    return c / (_column(d) * _row(d))


def np_correlate(a, v, mode="valid"):
    """NumPy's cross-correlation of real vectors: the convolution with ``v`` reversed."""
    if all_known(a, v):
        return np.correlate(a, v, mode)
    return _np(np.convolve)(as_array(a), _np(np.flip)(as_array(v)), mode=mode)


def np_ptp(a, axis=None, out=None, keepdims=False):
    if out is not None:
        raise UnsupportedError("np.ptp with out=", loc_of(a))
    return _np(np.max)(a, axis=axis, keepdims=keepdims) - _np(np.min)(
        a, axis=axis, keepdims=keepdims)


def np_fmod(x, y):
    """C's remainder (the sign of ``x``): x - trunc(x / y) * y."""
    return x - record("trunc", x / y) * y if not all_known(x, y) else np.fmod(x, y)


def np_sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (the division never sees 0: no NaN reaches the gradient)."""
    if all_known(x):
        return np.sinc(x)
    zero = x == 0.0
    safe = _np(np.where)(zero, 1.0, x) * math.pi
    return _np(np.where)(zero, 1.0, _np(np.sin)(safe) / safe)


def np_ldexp(x, e):
    return x * 2.0 ** e if not all_known(x, e) else np.ldexp(x, e)


def np_divmod(x, y):
    return _np(np.floor_divide)(x, y), _np(np.mod)(x, y)


def np_modf(x):
    """(fractional part, integral part), both of x's sign: x - trunc(x), trunc(x) (SALib's
    Sobol G function)."""
    if all_known(x):
        return np.modf(x)
    whole = record("trunc", x)
    return x - whole, whole


# ---- arrays ----------------------------------------------------------------------------------


def np_broadcast_to(x, shape, subok=False):
    if all_known(x):
        return np.broadcast_to(x, shape)
    shape = (shape,) if not isinstance(shape, tuple) else shape
    return x * _np(np.ones)(shape)  # (a copy: jitgrad never hands out the read-only view)


def np_broadcast_arrays(*args, subok=False):
    ones = None
    for a in args:
        ones = _np(np.ones_like)(a) if ones is None else ones * _np(np.ones_like)(a)
    return tuple(a * ones for a in args)


def np_dstack(tup):
    parts = [as_array(a) for a in tup]
    parts = [_np(np.reshape)(p, (1, -1, 1)) if ndim_of(p) == 1 else
             (_np(np.reshape)(p, (p.shape[0], p.shape[1], 1)) if ndim_of(p) == 2 else p)
             for p in parts]
    return _np(np.concatenate)(tuple(parts), axis=2)


def np_take(a, indices, axis=None):
    if all_known(a, indices):
        return np.take(a, indices, axis)
    a = as_array(a)
    if axis is None:
        return _at(_np(np.ravel)(a), indices)
    if axis in (0, -ndim_of(a)):
        return _at(a, indices)
    raise UnsupportedError("np.take along an axis other than the first (index that axis)",
                           loc_of(a))


def np_diagflat(v, k=0):
    return _np(np.diag)(_np(np.ravel)(as_array(v)), k)


def np_identity(n, dtype=None):
    return _np(np.eye)(n) if dtype is None else _np(np.eye)(n, dtype=dtype)


def np_tri(N, M=None, k=0, dtype=float):
    return _np(np.tril)(_np(np.ones)((N, N if M is None else M)), k)


def np_ediff1d(ary, to_end=None, to_begin=None):
    if to_end is not None or to_begin is not None:
        raise UnsupportedError("np.ediff1d with to_end= or to_begin=", loc_of(ary))
    return _np(np.diff)(_np(np.ravel)(as_array(ary)))


def np_select(condlist, choicelist, default=0.0):
    """The first choice whose condition holds: nested ``np.where`` from the last one out."""
    if len(condlist) != len(choicelist):
        raise UnsupportedError("np.select needs as many conditions as choices",
                               loc_of(*condlist))
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = _np(np.where)(cond, choice, out)
    return out


def np_iscomplex(x):
    """False at every entry of a real array (NaN included)."""
    if not records(x):
        return np.iscomplex(x)
    inf = record("isinf", x)
    return record("logical_and", inf, record("logical_not", inf))


def np_isreal(x):
    if not records(x):
        return np.isreal(x)
    inf = record("isinf", x)
    return record("logical_or", inf, record("logical_not", inf))


def np_matrix_power(a, n):
    if all_known(a):
        return np.linalg.matrix_power(a, n)
    if not isinstance(n, int):  # a power known at run time only: a loop of products
        if ndim_of(n) != 0 or getattr(getattr(n, "type", None), "kind", "i") != "i" or \
                ndim_of(a) != 2:
            raise UnsupportedError("np.linalg.matrix_power takes a matrix and an integer "
                                   "power", loc_of(a))
        return written(W.matrix_power, a, n)
    if n < 0:
        a, n = _np(np.linalg.inv)(a), -n
    out = _np(np.eye)(a.shape[0]) if n == 0 else a
    for _ in range(n - 1):
        out = out @ a
    return out


def np_multi_dot(arrays, out=None):
    result = arrays[0]
    for a in arrays[1:]:
        result = result @ a
    return result


# ---- polynomials (numpy.polynomial.polynomial: coefficients from the constant term up) --------


def _coefficients(c, what):
    """A polynomial's coefficients as a vector (a number: one coefficient)."""
    c = as_array(c)
    if ndim_of(c) == 0:
        c = _np(np.reshape)(c, (1,))
    if ndim_of(c) != 1:
        raise UnsupportedError(f"{what} with a vector of coefficients (one polynomial); for "
                               "several, call it on each row", loc_of(c))
    return c


def poly_val(x, c, tensor=True):
    """Horner's rule: unrolled where the number of coefficients is known while building, else
    a loop over them (`numpy_written.polyval`)."""
    c = _coefficients(c, "polyval")
    n = _static_len(c)
    if n is None:
        return written(W.polyval, x, c)
    out = _at(c, n - 1) + x * 0.0
    for k in range(n - 2, -1, -1):  # Horner's scheme
        out = out * x + _at(c, k)
    return out


def np_polyval(p, x):
    """NumPy's legacy ``polyval``: coefficients from the highest power down (Horner)."""
    if all_known(p, x):
        return np.polyval(p, x)
    p = _coefficients(p, "np.polyval")
    n = _static_len(p)
    if n is None:
        return written(W.polyval_legacy, p, x)
    out = _at(p, 0) + x * 0.0
    for k in range(1, n):
        out = out * x + _at(p, k)
    return out


def _padded(c, n):
    c = as_array(c)
    m = _static_len(c)
    return c if m == n else _np(np.concatenate)((c, _np(np.zeros)(n - m)))


def poly_add(c1, c2):
    """Where both lengths are known while building: the padded sum (NumPy would also drop
    trailing zeros, which only the values tell); else NumPy's sum, trimmed, in a loop."""
    c1, c2 = _coefficients(c1, "polyadd"), _coefficients(c2, "polyadd")
    n1, n2 = _static_len(c1), _static_len(c2)
    if n1 is None or n2 is None:
        return written(W.polyadd, c1, c2)
    n = max(n1, n2)
    return _padded(c1, n) + _padded(c2, n)


def poly_sub(c1, c2):
    c1, c2 = _coefficients(c1, "polysub"), _coefficients(c2, "polysub")
    n1, n2 = _static_len(c1), _static_len(c2)
    if n1 is None or n2 is None:
        return written(W.polysub, c1, c2)
    n = max(n1, n2)
    return _padded(c1, n) - _padded(c2, n)


def poly_div(c1, c2):
    """Quotient and remainder, by NumPy's long division (a loop over the quotient's
    coefficients)."""
    if all_known(c1, c2):
        return np.polynomial.polynomial.polydiv(c1, c2)
    return written(W.polydiv, _coefficients(c1, "polydiv") * 1.0,
                   _coefficients(c2, "polydiv") * 1.0)


def poly_int(c, m=1, k=(), lbnd=0, scl=1, axis=0):
    """``m`` integrations, each one the coefficients divided by their new powers behind the
    next constant of ``k`` (the integral is then ``k`` at 0, as NumPy's with ``lbnd=0``)."""
    if all_known(c):
        return np.polynomial.polynomial.polyint(c, m, k, lbnd, scl, axis)
    loc = loc_of(c)
    if not isinstance(m, int) or m < 0 or axis != 0 or records(scl) or records(lbnd):
        raise UnsupportedError("polyint with m= a whole number and scl=, lbnd= numbers known "
                               "while building, of a vector", loc)
    if lbnd != 0:
        raise UnsupportedError("polyint with lbnd= other than 0: integrate from 0 and add "
                               "the constant -polyval(lbnd, result) to the first coefficient",
                               loc)
    ks = list(np.atleast_1d(k)) if not records(k) else None
    if ks is None or len(ks) > m:
        raise UnsupportedError("polyint with k= numbers known while building, at most m of "
                               "them", loc)
    ks += [0.0] * (m - len(ks))
    out = _coefficients(c, "polyint") * 1.0
    for j in range(m):
        powers = _np(np.arange)(1.0, out.shape[0] + 1.0)
        out = _np(np.concatenate)((_np(np.full)(1, float(ks[j])), out * scl / powers))
    return out


def poly_trimseq(seq):
    """The coefficients up to the last that is not zero (the first kept where all are):
    ``seq[:keep]``, ``keep`` counted with vector operations (no loop)."""
    if all_known(seq):
        return np.polynomial.polyutils.trimseq(seq)
    seq = _coefficients(seq, "trimseq")
    n = seq.shape[0]
    ends = _np(np.where)(seq != 0.0, _np(np.arange)(1, n + 1), 0)  # 1 + each nonzero's index
    last = _np(np.max)(_np(np.concatenate)((_np(np.zeros)(1, dtype=np.int64), ends)))
    keep = _np(np.maximum)(last, _np(np.minimum)(n, 1))
    return _from(seq, None, keep)


def poly_as_series(alist, trim=True):
    """Each entry a float vector (its trailing zeros removed where ``trim``), of a tuple or
    list known while building."""
    if not isinstance(alist, (tuple, list)):
        raise UnsupportedError("as_series of a tuple or list of arrays (known while building)",
                               loc_of(alist))
    if all_known(*alist):
        return np.polynomial.polyutils.as_series(alist, trim)
    return written(W.as_series, tuple(_coefficients(a, "as_series") for a in alist),
                   bool(trim))


def np_gradient(f, *varargs, axis=None, edge_order=1):
    """np.gradient with even spacings (numbers): central differences inside, one-sided ones
    at the ends (`numpy_written.gradient`), along each axis asked for; along one axis, at
    its coordinates too (`numpy_written.gradient_at`)."""
    if all_known(f, *varargs):
        return np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    f = as_array(f)
    loc = loc_of(f)
    if ndim_of(f) == 0:
        raise UnsupportedError("np.gradient of a scalar (NumPy takes arrays)", loc)
    axes = tuple(range(ndim_of(f))) if axis is None else axis
    axes = axes if isinstance(axes, tuple) else (axes,)
    axes = tuple(a + ndim_of(f) if isinstance(a, int) and a < 0 else a for a in axes)
    if any(not isinstance(a, int) or not 0 <= a < ndim_of(f) for a in axes):
        raise UnsupportedError(f"np.gradient with axis={axis!r}: axes of the array, known "
                               "while building", loc)
    if edge_order not in (1, 2):
        raise UnsupportedError("np.gradient with edge_order 1 or 2", loc)
    if len(axes) == 1 and len(varargs) == 1 and ndim_of(varargs[0]) == 1 and edge_order == 1:
        # coordinates along the one axis (MetPy's np.gradient(theta, height, axis=0))
        return written(W.gradient_at, f * 1.0, as_array(varargs[0]) * 1.0, axes[0])
    if any(records(h) or np.ndim(h) for h in varargs):
        raise UnsupportedError("np.gradient with spacings that are numbers known while "
                               "building, or coordinates (uneven spacing) along one axis "
                               "with edge_order=1; for others, write the differences: "
                               "np.diff(f) / np.diff(x)", loc)
    if len(varargs) not in (0, 1, len(axes)):
        raise UnsupportedError(f"np.gradient with {len(varargs)} spacings for {len(axes)} "
                               "axes", loc)
    spacings = [float(h) for h in varargs] or [1.0]
    spacings = spacings * len(axes) if len(spacings) == 1 else spacings
    return written(W.gradient, f * 1.0, tuple(zip(axes, spacings)), edge_order,
                   len(axes) == 1)


PolynomialValue = collections.namedtuple("Polynomial", ["coef", "domain", "window", "symbol"])


def poly_class(coef, domain=None, window=None, symbol="x"):
    """``Polynomial(coef)``: its coefficients (``.coef``, a vector) and NumPy's defaults for
    the rest, read while building. Its methods and operators are not taken: write
    ``polyval(x, p.coef)``, ``polyadd(p.coef, q.coef)``, ``polyder(p.coef)``..."""
    if all_known(coef):
        return np.polynomial.polynomial.Polynomial(coef, domain, window, symbol)
    if domain is not None or window is not None:
        raise UnsupportedError("Polynomial with domain= or window= (jitgrad takes the "
                               "coefficients alone, on NumPy's default domain)", loc_of(coef))
    return PolynomialValue(_coefficients(coef, "Polynomial") * 1.0, (-1.0, 1.0), (-1.0, 1.0),
                           symbol)


def np_pad(array, pad_width, mode="constant", **kw):
    """``np.pad`` with widths known while building: along each axis, what goes before and
    after is concatenated to the array (``constant``: ``constant_values``; ``edge``: the first
    and last entries repeated; ``reflect``/``symmetric``: the entries mirrored about the edge,
    without or with it), one axis after another as NumPy pads."""
    x = as_array(array)
    loc = loc_of(array)
    if set(kw) - ({"constant_values"} if mode == "constant" else set()) or mode not in (
            "constant", "edge", "reflect", "symmetric"):
        raise UnsupportedError(f"np.pad with mode={mode!r} and {sorted(kw)}: jitgrad pads with "
                               "mode 'constant' (constant_values=), 'edge', 'reflect' or "
                               "'symmetric'", loc)
    n = ndim_of(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=object), (n, 2))
    value = kw.get("constant_values", 0.0)
    if np.ndim(value) or records(value):
        raise UnsupportedError("np.pad with constant_values a number known while building", loc)
    if any(records(w) for pair in widths for w in pair):
        if mode != "constant":  # (which entries an edge or mirror repeats: known with the widths)
            raise UnsupportedError(f"np.pad with mode={mode!r} and widths known only at run "
                                   "time (mode 'constant' takes them)", loc)
        for axis in range(n):  # widths of run-time sizes (scikit-image's radon, padded to the
            parts = [x]  # diagonal): blocks of the constant before and after, concatenated
            for width, at in zip(widths[axis], (0, 1)):
                if records(width) or int(width):
                    shape = tuple(width if k == axis else x.shape[k] for k in range(n))
                    parts.insert(at * len(parts), _np(np.full)(shape, float(value)))
            x = _np(np.concatenate)(parts, axis=axis) if len(parts) > 1 else x
        return x
    steps = tuple((axis, int(widths[axis][0]), int(widths[axis][1])) for axis in range(n)
                  if int(widths[axis][0]) or int(widths[axis][1]))
    if mode in ("reflect", "symmetric") and any(records(x.shape[a]) for a, _, _ in steps):
        # which entries a mirror reads is known with the size: a loop over the axes
        return written(W.pad_mirrored, x, steps, 1 if mode == "reflect" else 0)
    for axis in range(n):
        before, after = (int(w) for w in widths[axis])
        if before == 0 and after == 0:
            continue
        parts = [_pad_part(x, axis, before, mode, value, True, loc), x,
                 _pad_part(x, axis, after, mode, value, False, loc)]
        x = _np(np.concatenate)([p for p in parts if p is not None], axis=axis)
    return x


def _pad_part(x, axis, width, mode, value, before, loc):
    if width == 0:
        return None
    n = x.shape[axis]
    if mode == "constant":
        shape = tuple(width if k == axis else x.shape[k] for k in range(ndim_of(x)))
        return _np(np.full)(shape, float(value))
    if mode == "edge":
        edge = _slab(x, axis, 0, 1) if before else _slab(x, axis, n - 1, n)
        return _np(np.concatenate)([edge] * width, axis=axis)
    if records(n):  # (a pad wider than the axis would mirror again: which entries it reads
        raise UnsupportedError(  # is known only with the size)
            f"np.pad with mode={mode!r} of an axis whose size is known only at run time: "
            "concatenate the mirrored slices yourself, np.flip(x[1:k + 1])", loc)
    skip = 1 if mode == "reflect" else 0
    if width + skip > n:
        raise UnsupportedError(f"np.pad with mode={mode!r} wider than the array", loc)
    first = [skip + k for k in range(width)]  # the entries mirrored about the edge
    picks = list(reversed(first)) if before else [n - 1 - skip - k for k in range(width)]
    return _np(np.concatenate)([_slab(x, axis, i, i + 1) for i in picks], axis=axis)


def _slab(x, axis, start, stop):
    """``x[..., start:stop]`` along ``axis``."""
    spec = (":",) * axis + (("s", True, True, False),)
    return record("getitem", x, start, stop, index_spec=spec)


def np_logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** np.linspace(start, stop, num)``."""
    if endpoint is not True or dtype is not None or axis != 0:
        raise UnsupportedError("np.logspace with arguments other than start, stop, num, base",
                               loc_of(start, stop))
    return _np(np.power)(base, _np(np.linspace)(start, stop, num))


def np_geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``start * (stop / start) ** np.linspace(0, 1, num)``, with NumPy's exact ends (positive
    or negative ends of one sign)."""
    if endpoint is not True or dtype is not None or axis != 0:
        raise UnsupportedError("np.geomspace with arguments other than start, stop, num",
                               loc_of(start, stop))
    steps = _np(np.linspace)(0.0, 1.0, num)
    out = start * _np(np.power)(stop / start, steps)
    if isinstance(num, int) and num >= 2:  # the ends exactly, as NumPy sets them
        first, last = _at(out, 0), _at(out, num - 1)
        middle = _from(out, 1, num - 1)
        out = _np(np.concatenate)([_np(np.reshape)(start + 0.0 * first, (1,)), middle,
                                   _np(np.reshape)(stop + 0.0 * last, (1,))])
    return out


def np_ascontiguousarray(a, dtype=None, **kw):
    """The same values (jitgrad's arrays are C-contiguous, or copied where they must be)."""
    if dtype is not None or kw:
        raise UnsupportedError("np.ascontiguousarray with dtype=", loc_of(a))
    return as_array(a) + 0.0 if records(a) else np.ascontiguousarray(a)


def np_asfortranarray(a, dtype=None, **kw):
    """The same values (the memory order is not a value jitgrad computes with)."""
    if dtype is not None or kw:
        raise UnsupportedError("np.asfortranarray with dtype=", loc_of(a))
    return as_array(a) + 0.0 if records(a) else np.asfortranarray(a)


def np_require(a, dtype=None, requirements=None):
    """NumPy's array with the flags asked (contiguous, aligned, writeable: jitgrad's arrays
    have them) and ``dtype``: the array itself where NumPy returns it (of that kind
    already), else np.asarray's conversion; OWNDATA (a copy of a view) is refused."""
    flags = [requirements] if isinstance(requirements, str) else list(requirements or ())
    if any(str(f).upper() in ("O", "OWNDATA") for f in flags):
        raise UnsupportedError("np.require(..., requirements='O') (jitgrad does not tell a "
                               "view from an array that owns its data): write .copy()",
                               loc_of(a))
    if records(a) and (dtype is None or np.dtype(dtype).kind == a.type.kind):
        return a
    return _np(np.asarray)(a, dtype)


def np_unwrap(p, discont=None, axis=-1, period=2 * math.pi):
    """NumPy's unwrap of a vector: each step's jump beyond half a period taken back by whole
    periods (piecewise constant, so the derivative is the identity)."""
    p = as_array(p)
    if ndim_of(p) != 1 or axis not in (-1, 0):
        raise UnsupportedError("np.unwrap of a vector", loc_of(p))
    half = period / 2.0
    cut = half if discont is None else max(discont, half)
    dd = _np(np.diff)(p)
    ddmod = _np(np.mod)(dd + half, period) - half
    ddmod = _np(np.where)((ddmod == -half) & (dd > 0), half, ddmod)
    correct = _np(np.where)(_np(np.abs)(dd) < cut, 0.0, ddmod - dd)
    return _np(np.concatenate)([_from(p, 0, 1), _from(p, 1) + _np(np.cumsum)(correct)])


def poly_mul(c1, c2):
    return _np(np.convolve)(as_array(c1), as_array(c2))


def autograd_make_diagonal(D, offset=0, axis1=0, axis2=1):
    """autograd's ``np.make_diagonal(D, axis1=-1, axis2=-2)`` (the only axes it takes): an
    array of ``D.shape + (n,)`` whose last two axes hold ``diag(D[..., :])``."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise UnsupportedError("autograd's make_diagonal takes offset=0, axis1=-1, axis2=-2 "
                               "only (it raises NotImplementedError otherwise)", loc_of(D))
    D = as_array(D)
    if not records(D):
        return np.asarray(D)[..., None] * np.eye(np.shape(D)[-1])
    return _np(np.expand_dims)(D, -1) * _np(np.eye)(D.shape[-1])


AUTOGRAD_NUMPY = {"make_diagonal": autograd_make_diagonal}  # (autograd.numpy's own functions)

NUMPY.update(NAN_REDUCTIONS)
NUMPY.update({
    np.interp: np_interp, np.trapezoid: np_trapezoid, np.cov: np_cov, np.corrcoef: np_corrcoef,
    np.correlate: np_correlate, np.ptp: np_ptp, np.fmod: np_fmod, np.sinc: np_sinc,
    np.ldexp: np_ldexp, np.divmod: np_divmod, np.modf: np_modf,
    np.broadcast_to: np_broadcast_to,
    np.broadcast_arrays: np_broadcast_arrays, np.dstack: np_dstack, np.take: np_take,
    np.diagflat: np_diagflat, np.identity: np_identity, np.tri: np_tri,
    np.ediff1d: np_ediff1d, np.select: np_select, np.iscomplex: np_iscomplex,
    np.isreal: np_isreal, np.linalg.matrix_power: np_matrix_power,
    np.linalg.multi_dot: np_multi_dot,
    np.polynomial.polynomial.polyval: poly_val, np.polynomial.polynomial.polyadd: poly_add,
    np.polynomial.polynomial.polysub: poly_sub, np.polynomial.polynomial.polymul: poly_mul,
    np.polynomial.polynomial.polydiv: poly_div, np.polynomial.polynomial.polyint: poly_int,
    np.polynomial.polyutils.trimseq: poly_trimseq,
    np.polynomial.polyutils.as_series: poly_as_series,
    np.polynomial.polynomial.Polynomial: poly_class,
    np.gradient: np_gradient, np.polyval: np_polyval, np.pad: np_pad, np.logspace: np_logspace,
    np.geomspace: np_geomspace, np.ascontiguousarray: np_ascontiguousarray,
    np.asfortranarray: np_asfortranarray, np.unwrap: np_unwrap, np.require: np_require,
})
