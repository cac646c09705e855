"""The few SciPy functions that numerical NumPy code calls, written with jitgrad's primitives.

Numba compiles no SciPy function, but NumPy-style kernels (Black-Scholes with
``scipy.stats.norm.cdf``, a logistic loss with ``scipy.special.expit``) use these; each is
recorded as existing primitives (``erf``/``erfc``, ``exp``, ``log``, reductions), so its
derivative follows. `handler_for(fn)` finds the handler of a SciPy function the user called, by
identity with the function in an already imported SciPy module (jitgrad never imports SciPy's
statistics itself: that takes a second). Anything else from SciPy stays refused at its line.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import (
    complex_pairs,
    numpy_composed,
    numpy_linalg,
    numpy_written,
    scipy_distance,
    scipy_splines,
    scipy_stats,
)
from jitgrad.lang.numpy_api import np_concatenate, np_reduce, np_sum, np_zeros
from jitgrad.lang.symbolic import NUMPY, loc_of, ndim_of, record, records, written
from jitgrad.prims.elementwise import SCIPY_FUNCTIONS

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _standard(x, loc, scale):
    if records(scale) or scale != 1.0:
        return (x - loc) / scale
    return x - loc if records(loc) or loc != 0.0 else x


def _log_scale(scale):
    return record("log", scale) if records(scale) else math.log(scale)


def norm_cdf(x, loc=0.0, scale=1.0):
    """Phi(z) = erfc(-z / sqrt 2) / 2: accurate in both tails."""
    return record("erfc", -_standard(x, loc, scale) / _SQRT2) * 0.5


def norm_sf(x, loc=0.0, scale=1.0):
    return record("erfc", _standard(x, loc, scale) / _SQRT2) * 0.5


def norm_pdf(x, loc=0.0, scale=1.0):
    z = _standard(x, loc, scale)
    return record("exp", -(z * z) * 0.5 - _LOG_SQRT_2PI) / scale


def norm_logpdf(x, loc=0.0, scale=1.0):
    z = _standard(x, loc, scale)
    return -(z * z) * 0.5 - _LOG_SQRT_2PI - _log_scale(scale)


def expit(x):
    """1 / (1 + exp(-x)) as (1 + tanh(x / 2)) / 2: no overflow for large |x|."""
    return (record("tanh", x * 0.5) + 1.0) * 0.5


def logsumexp(a, axis=None, keepdims=False, b=None, **kw):
    """log(sum(b * exp(a))) around the largest entry (its gradient is the softmax, weighted by
    ``b``); ``b`` positive weights (a sign, ``return_sign=``, is refused)."""

    if kw:
        raise UnsupportedError(f"scipy.special.logsumexp(..., {', '.join(kw)}=)", loc_of(a))
    top = np_reduce("max", a, axis, True)
    terms = record("exp", a - top) if b is None else record("exp", a - top) * b
    out = record("log", np_sum(terms, axis, True)) + top
    return out if keepdims else np_sum(out, axis, False)  # drop the kept axes (size 1)


def xlogy(x, y):
    """x log(y), 0 where x == 0 (also at y == 0): y is replaced by 1 only where both are 0,
    so the derivative in x is log(y) wherever y > 0, x == 0 included."""
    both_zero = record("logical_and", record("eq", x, 0.0), record("eq", y, 0.0))
    return x * record("log", record("where", both_zero, 1.0, y))


def xlog1py(x, y):
    """x log(1 + y), 0 where x == 0 (also at y == -1): y is replaced by 0 only where x == 0
    and y == -1, so the derivative in x is log1p(y) wherever y > -1, x == 0 included."""
    both = record("logical_and", record("eq", x, 0.0), record("eq", y, -1.0))
    return x * record("log1p", record("where", both, 0.0, y))


def cosm1(x):
    """cos(x) - 1 as -2 sin(x / 2)**2: no cancellation for small x; derivative -sin(x)."""
    s = record("sin", x * 0.5)
    return s * s * -2.0


def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z), as exp(gammaln(z + m) - gammaln(z))
    where both are positive (no overflow), else the ratio of the gamma functions; each side
    is fed 1.0 where the other is taken, so its derivative there is finite."""
    positive = record("logical_and", record("gt", z, 0.0), record("gt", z + m, 0.0))
    zp, zn = record("where", positive, z, 1.0), record("where", positive, 1.0, z)
    logs = record("exp", record("gammaln", zp + m) - record("gammaln", zp))
    return record("where", positive, logs, record("gamma", zn + m) / record("gamma", zn))


def _numpy_twin(fn, dropped=()):
    """SciPy's name for a NumPy function: NumPy's handler, SciPy's own options dropped."""
    def handler(*args, **kwargs):
        for k in dropped:
            kwargs.pop(k, None)
        return NUMPY[fn](*args, **kwargs)
    return handler


def _twins():
    """SciPy functions that are NumPy's under another module (the same values, so the same
    derivative): (SciPy module, name, NumPy function, SciPy-only options to drop)."""
    import numpy as np
    finite = ("overwrite_a", "check_finite")
    return (("scipy.special", "log1p", np.log1p, ()), ("scipy.special", "expm1", np.expm1, ()),
            ("scipy.special", "cbrt", np.cbrt, ()), ("scipy.special", "exp2", np.exp2, ()),
            ("scipy.linalg", "inv", np.linalg.inv, finite),
            ("scipy.linalg", "det", np.linalg.det, finite),
            *(("scipy.fft", name, getattr(np.fft, name), ("overwrite_x", "workers", "plan"))
              for name in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft",
                           "rfft2", "irfft2", "rfftn", "irfftn")),
            *(("scipy.fft", name, getattr(np.fft, name), ())
              for name in ("fftshift", "ifftshift", "fftfreq", "rfftfreq")))


def factorial(n, exact=False):
    """Gamma(n + 1) for n >= 0 and 0 for n < 0, as scipy.special.factorial (exact=False)."""
    if exact:
        raise UnsupportedError("scipy.special.factorial(..., exact=True) (Python integers): "
                               "use exact=False", loc_of(n))
    return record("where", record("lt", n, 0), 0.0, record("gamma", n + 1.0))


def polygamma(n, x):
    """scipy.special.polygamma for a constant order 0, 1 or 2 (digamma, trigamma,
    tetragamma)."""
    rows = {0: "digamma", 1: "trigamma", 2: "tetragamma"}
    if records(n) or n not in rows:
        raise UnsupportedError("scipy.special.polygamma of an order other than the constants "
                               "0, 1 and 2", loc_of(x))
    return record(rows[n], x)


def lambertw(z, k=0, tol=1e-8):
    """scipy.special.lambertw on its principal branch (k = 0) of a real z >= -1/e, where its
    value is real: W_0(z) as a real number (``.real`` is itself, ``.imag`` zero); nan below
    -1/e, where SciPy's value is complex. Another branch, or a complex z, is refused."""
    if records(k) or k != 0:
        raise UnsupportedError("scipy.special.lambertw of a branch other than the principal "
                               "one (k=0): jitgrad computes W_0 of a real z >= -1/e; for "
                               "k=-1 solve w * exp(w) = z with scipy.optimize.brentq on "
                               "[w_lo, -1]", loc_of(z))
    if isinstance(z, complex) or (not records(z) and np.iscomplexobj(z)):
        raise UnsupportedError("scipy.special.lambertw of a complex argument: jitgrad "
                               "computes W_0 of a real z >= -1/e (pass z.real where the "
                               "imaginary part is zero)", loc_of(z))
    return record("lambertw", z)


def _shifted(x, start, stop):
    """x[start:stop] along the first axis (a view)."""
    spec = (("s", start is not None, stop is not None, False),)
    return record("getitem", x, *(v for v in (start, stop) if v is not None), index_spec=spec)


def rosen(x):
    """scipy.optimize.rosen: sum(100 (x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2) along axis 0."""
    head, tail = _shifted(x, None, -1), _shifted(x, 1, None)
    r = tail - head * head
    return np_sum(r * r * 100.0 + (1.0 - head) * (1.0 - head), 0)


def rosen_der(x):
    """scipy.optimize.rosen_der of a vector: each entry's share as the entry after a pair
    (200 (x[i] - x[i-1]**2)) plus as the entry before one (-400 x[i] (x[i+1] - x[i]**2) -
    2 (1 - x[i])), padded with a zero at the other end."""
    if ndim_of(x) != 1:
        raise UnsupportedError("scipy.optimize.rosen_der of an array that is not a vector",
                               loc_of(x))
    head, tail = _shifted(x, None, -1), _shifted(x, 1, None)
    r = tail - head * head
    zero = np_zeros(1)
    return (np_concatenate((zero, r * 200.0))
            + np_concatenate((-(head * r) * 400.0 - (1.0 - head) * 2.0, zero)))


# scipy.special functions that are primitives of their own (SciPy's compiled kernels,
# `prims.elementwise`): the name in scipy.special -> the primitive (jn is SciPy's jv).
_KERNELS = {name: name for name in SCIPY_FUNCTIONS} | {"jn": "jv"}


def _kernel_handler(prim):
    def handler(*args):
        return record(prim, *args)
    return handler


_NORM = {"cdf": norm_cdf, "sf": norm_sf, "pdf": norm_pdf, "logpdf": norm_logpdf,
         # the standard distribution's own methods, which code like statsmodels' Probit calls
         "_cdf": norm_cdf, "_sf": norm_sf, "_pdf": norm_pdf, "_logpdf": norm_logpdf}


def _method_of(name: str, method: str):
    """The handler of ``scipy.stats.<name>.<method>``, or None."""
    if name == "norm":
        return _NORM.get(method) or scipy_stats.DISTRIBUTIONS["norm"].get(method)
    return scipy_stats.DISTRIBUTIONS.get(name, {}).get(method)


class FrozenDistribution:
    """``scipy.stats.<name>(*args, **kwargs)``, a frozen distribution, while building: its
    methods (``.logpdf(x)``, ``.pdf(x)``, ``.cdf(x)``) are the distribution's handlers with
    the frozen parameters after ``x``, as SciPy passes them; so their derivatives follow the
    parameters too (``multivariate_normal(mean, cov)`` of run-time values)."""

    def __init__(self, name, args, kwargs):
        self.name, self.args, self.kwargs = name, tuple(args), dict(kwargs)

    def __getattr__(self, method):
        if method.startswith("__"):
            raise AttributeError(method)
        handler = _method_of(self.name, method)
        if handler is None:
            raise AttributeError(method)
        return FrozenMethod(self, handler, method)


class FrozenMethod:
    """``frozen.logpdf``: called with ``x``, the handler with the frozen parameters."""

    def __init__(self, frozen, handler, name):
        self.frozen, self.handler, self.__name__ = frozen, handler, name

    def __call__(self, x, **kwargs):
        return self.handler(x, *self.frozen.args, **{**self.frozen.kwargs, **kwargs})


def frozen_distribution(value):
    """A frozen SciPy distribution known while building (``scipy.stats.norm(0, 2)``,
    ``multivariate_normal(mean, cov)`` made outside the function) as a `FrozenDistribution`,
    or None (also for a distribution whose methods jitgrad has no handlers for)."""
    if isinstance(value, FrozenDistribution):
        return value
    stats = sys.modules.get("scipy.stats")
    if stats is None:
        return None
    if type(value).__name__ == "multivariate_normal_frozen" and not getattr(
            value, "allow_singular", False):
        return FrozenDistribution("multivariate_normal", (value.mean, value.cov), {})
    dist = getattr(value, "dist", None)
    if isinstance(value, getattr(getattr(stats, "distributions", None), "rv_frozen", ())) \
            and getattr(dist, "name", None) is not None:
        name = dist.name
        if getattr(stats, name, None) is not None and type(getattr(stats, name)) is type(dist) \
                and (name == "norm" or name in scipy_stats.DISTRIBUTIONS):
            return FrozenDistribution(name, value.args, value.kwds)
    return None


def _freeze(name):
    def freeze(*args, **kwargs):
        return FrozenDistribution(name, args, kwargs)
    return freeze


def loggamma(x):
    """scipy.special.loggamma of a real argument: log Gamma(x) for x >= 0 (gammaln, derivative
    digamma) and nan for x < 0, as SciPy's real loggamma (its complex branch is not taken)."""
    return record("where", record("lt", x, 0.0), math.nan, record("gammaln", x))


def wofz(x):
    """scipy.special.wofz of a real argument: the complex w(x) = exp(-x^2) erfc(-ix), a pair
    of its parts (`prims.complex_special`), which the rest of the code takes as any complex
    value."""
    return complex_pairs.wofz(complex_pairs.lift(x))


def sph_harm_y(n, m, theta, phi, *, diff_n=0):
    """scipy.special.sph_harm_y(n, m, theta, phi) (theta polar, phi azimuthal) of integers
    ``n``, ``m`` known while building: the normalised associated Legendre function of
    cos(theta) (Condon-Shortley phase, as SciPy's) by its recurrence in the degree from
    P_|m|^|m| = (-1)^|m| (2|m| - 1)!! sin(theta)^|m|, times exp(i m phi), a pair of its parts;
    its derivatives in theta and phi those of this arithmetic. 0 where |m| > n, as SciPy."""
    known = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (n, m))
    if not known or records(n) or records(m) or diff_n:
        raise UnsupportedError("scipy.special.sph_harm_y with integer n and m known while "
                               "building (and diff_n=0)", loc_of(theta, phi))
    n, a = int(n), abs(int(m))
    cos, sin = NUMPY[np.cos], NUMPY[np.sin]
    if a > n or n < 0:
        zero = 0.0 * theta + 0.0 * phi
        return complex_pairs.Complex(zero, zero)
    x, s = cos(theta), sin(theta)
    p = (-1.0) ** a * float(np.prod(np.arange(2 * a - 1, 0, -2.0))) * s ** a
    if n > a:
        below, p = p, x * (2 * a + 1) * p
        for k in range(a + 2, n + 1):
            below, p = p, ((2 * k - 1) * x * p - (k + a - 1) * below) / (k - a)
    norm = math.sqrt((2 * n + 1) / (4.0 * math.pi) * math.factorial(n - a) /
                     math.factorial(n + a))
    sign = (-1.0) ** a if m < 0 else 1.0  # Y_n^-m = (-1)^m conj(Y_n^m)
    re = sign * norm * p * cos(a * phi)
    im = (-sign if m < 0 else sign) * norm * p * sin(a * phi)
    return complex_pairs.Complex(re, im)


def getmask(a):
    """np.ma.getmask of a run-time array: jitgrad's arrays are plain ndarrays, whose mask is
    np.ma.nomask (False), known while building; of a constant, NumPy's answer."""
    return False if records(a) else sys.modules["numpy.ma"].getmask(a)


def interp1d(x, y, kind="linear", axis=-1, copy=True, bounds_error=None, fill_value=np.nan,
             assume_sorted=False):
    """``scipy.interpolate.interp1d(x, y)``, linear between the points of a vector ``y``:
    the function it makes, `numpy_written.interp1d_at` with its options (SciPy's: raise out of
    range unless ``bounds_error=False``, then ``fill_value``, one number or a pair below and
    above)."""
    loc = loc_of(x, y)
    if kind not in ("linear", "slinear") or ndim_of(y) != 1 or ndim_of(x) != 1 \
            or axis not in (-1, 0):
        raise UnsupportedError("scipy.interpolate.interp1d other than linear (kind='linear') "
                               "between vectors x and y: write np.interp(x_new, x, y)", loc)
    if isinstance(fill_value, str):
        raise UnsupportedError(f"interp1d with fill_value={fill_value!r}: give numbers (or "
                               "write np.interp with left= and right=)", loc)
    below, above = (fill_value if isinstance(fill_value, tuple) and len(fill_value) == 2
                    else (fill_value, fill_value))
    if any(ndim_of(v) != 0 for v in (below, above)):
        raise UnsupportedError("interp1d with fill_value other than a number or a pair of "
                               "numbers (below, above)", loc)
    raises = True if bounds_error is None else bool(bounds_error)
    return functools.partial(numpy_written.interp1d_at, x=as_float_vector(x),
                             y=as_float_vector(y), bounds_error=raises, below=below,
                             above=above, assume_sorted=bool(assume_sorted))


def as_float_vector(v):
    return v if records(v) else np.asarray(v, dtype=float)


def interp1d_object(f):
    """A ``scipy.interpolate.interp1d`` made outside the function (a constant), called on
    graph values: its handler, or None where it is not linear between vectors."""
    if getattr(f, "_kind", None) not in ("linear", "slinear") or np.ndim(f.y) != 1:
        return None
    if isinstance(f.fill_value, str) or getattr(f, "_extrapolate", False):
        return None
    below = np.ravel(getattr(f, "_fill_value_below", f.fill_value))  # (SciPy keeps them
    above = np.ravel(getattr(f, "_fill_value_above", f.fill_value))  # as arrays of y's rest)
    if below.size != 1 or above.size != 1:
        return None
    x, y = np.asarray(f.x, dtype=float), np.asarray(f.y, dtype=float)
    return functools.partial(written, numpy_written.interp1d_at, x=x, y=y,
                             bounds_error=bool(f.bounds_error), below=float(below[0]),
                             above=float(above[0]), assume_sorted=True)


def handler_for(fn):
    """The handler of SciPy function ``fn`` (or of numpy.ma's getmask: numpy.ma, like SciPy,
    is looked up only once the user's code has imported it), or None."""
    ma = sys.modules.get("numpy.ma")
    if ma is not None and fn is getattr(ma, "getmask", None):
        return getmask
    special = sys.modules.get("scipy.special")
    if special is not None:
        for name, handler in (("erf", lambda x: record("erf", x)),
                              ("erfc", lambda x: record("erfc", x)),
                              ("expit", expit), ("logsumexp", logsumexp),
                              ("gammaln", lambda x: record("gammaln", x)),
                              ("gamma", lambda x: record("gamma", x)),
                              ("digamma", lambda x: record("digamma", x)),
                              ("psi", lambda x: record("digamma", x)),
                              ("polygamma", polygamma), ("lambertw", lambertw),
                              ("factorial", factorial), ("xlogy", xlogy),
                              ("loggamma", loggamma), ("wofz", wofz),
                              ("xlog1py", xlog1py), ("cosm1", cosm1), ("poch", poch),
                              ("sph_harm_y", sph_harm_y),
                              ("i0e", lambda x: record("ive", 0.0, x)),  # exp(-|x|) i0(x)
                              ("i1e", lambda x: record("ive", 1.0, x))):
            if fn is getattr(special, name, None):
                return handler
        for name, prim in _KERNELS.items():
            if fn is getattr(special, name, None):
                return _kernel_handler(prim)
        for name, handler in scipy_stats.SPECIAL.items():
            if fn is getattr(special, name, None):
                return handler
    for module, name, twin, dropped in _twins():
        loaded = sys.modules.get(module)
        if loaded is not None and fn is getattr(loaded, name, None):
            return _numpy_twin(twin, dropped)
    for module, table in (("scipy.linalg", scipy_stats.LINALG),
                          ("scipy.linalg", numpy_linalg.LINALG),
                          ("scipy.signal", scipy_stats.SIGNAL),
                          ("scipy.fft", scipy_stats.FFT), ("scipy.fftpack", scipy_stats.FFT),
                          ("scipy.linalg.lapack", scipy_stats.LAPACK),
                          ("autograd.scipy.signal", scipy_stats.AUTOGRAD_SIGNAL),
                          ("autograd.numpy", numpy_composed.AUTOGRAD_NUMPY),
                          ("scipy.integrate", numpy_composed.INTEGRATE)):
        loaded = sys.modules.get(module)
        if loaded is not None:
            for name, handler in table.items():
                if fn is getattr(loaded, name, None):
                    return handler
    distance = sys.modules.get("scipy.spatial.distance")
    if distance is not None:
        for name, handler in scipy_distance.DISTANCE.items():
            if fn is getattr(distance, name, None):
                return handler
    optimize = sys.modules.get("scipy.optimize")
    if optimize is not None:
        for name, handler in (("rosen", rosen), ("rosen_der", rosen_der)):
            if fn is getattr(optimize, name, None):
                return handler
    interpolate = sys.modules.get("scipy.interpolate")
    if interpolate is not None and fn is getattr(interpolate, "interp1d", None):
        return interp1d
    if interpolate is not None and fn is getattr(interpolate, "CubicSpline", None):
        return scipy_splines.spline_of
    if isinstance(fn, (scipy_splines.Piecewise, scipy_splines.Derivative)):
        return fn  # a spline made in the function, called
    if interpolate is not None and isinstance(fn, getattr(interpolate, "PPoly", ())):
        return scipy_splines.piecewise_object(fn)
    if interpolate is not None and isinstance(fn, getattr(interpolate, "BivariateSpline", ())):
        return scipy_splines.bivariate_object(fn)  # a RectBivariateSpline made outside, called
    owner = getattr(fn, "__self__", None)
    if interpolate is not None and isinstance(owner, getattr(interpolate, "BivariateSpline", ())) \
            and getattr(fn, "__name__", "") in ("ev", "__call__"):
        return getattr(scipy_splines.bivariate_object(owner), fn.__name__)  # spline.ev(x, y)
    if interpolate is not None and isinstance(fn, getattr(interpolate, "interp1d", ())):
        return interp1d_object(fn)
    stats = sys.modules.get("scipy.stats")
    if stats is not None:
        for name, handler in scipy_stats.STATS.items():
            if fn is getattr(stats, name, None):
                return handler
    if isinstance(fn, FrozenMethod):
        return fn
    if stats is not None:  # scipy.stats.norm(mu, sd): the frozen distribution
        for name in ("norm", *scipy_stats.DISTRIBUTIONS):
            if fn is getattr(stats, name, None):
                return _freeze(name)
    owner = getattr(fn, "__self__", None)
    frozen = frozen_distribution(owner) if owner is not None and stats is not None else None
    if frozen is not None:  # frozen.logpdf of a frozen distribution made outside
        try:
            return getattr(frozen, getattr(fn, "__name__", ""))
        except AttributeError:
            return None
    if stats is not None and owner is not None and owner is getattr(stats, "norm", None):
        method = getattr(fn, "__name__", "")
        return _NORM.get(method) or scipy_stats.DISTRIBUTIONS["norm"].get(method)
    if stats is not None and owner is not None:
        for name, methods in scipy_stats.DISTRIBUTIONS.items():
            if owner is getattr(stats, name, None):
                return methods.get(getattr(fn, "__name__", ""))
    return None
