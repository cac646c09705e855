"""The few SciPy functions that numerical NumPy code calls, written with jitgrad's primitives.

Numba compiles no SciPy function, but NumPy-style kernels (Black-Scholes with
``scipy.stats.norm.cdf``, a logistic loss with ``scipy.special.expit``) use these; each is
recorded as existing primitives (``erf``/``erfc``, ``exp``, ``log``, reductions), so its
derivative follows. `handler_for(fn)` finds the handler of a SciPy function the user called, by
identity with the function in an already imported SciPy module (jitgrad never imports SciPy's
statistics itself: that takes a second). Anything else from SciPy stays refused at its line.
"""

from __future__ import annotations

import math
import sys

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang.numpy_api import np_reduce, np_sum
from jitgrad.lang.symbolic import loc_of, record, records

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


def logsumexp(a, axis=None, keepdims=False, **kw):
    """log(sum(exp(a))) around the largest entry (its gradient is the softmax)."""

    if kw:
        raise UnsupportedError(f"scipy.special.logsumexp(..., {', '.join(kw)}=)", loc_of(a))
    top = np_reduce("max", a, axis, True)
    out = record("log", np_sum(record("exp", a - top), axis, True)) + top
    return out if keepdims else np_sum(out, axis, False)  # drop the kept axes (size 1)


_NORM = {"cdf": norm_cdf, "sf": norm_sf, "pdf": norm_pdf, "logpdf": norm_logpdf}


def handler_for(fn):
    """The handler of SciPy function ``fn``, or None."""
    special = sys.modules.get("scipy.special")
    if special is not None:
        for name, handler in (("erf", lambda x: record("erf", x)),
                              ("erfc", lambda x: record("erfc", x)),
                              ("expit", expit), ("logsumexp", logsumexp)):
            if fn is getattr(special, name, None):
                return handler
    stats = sys.modules.get("scipy.stats")
    owner = getattr(fn, "__self__", None)
    if stats is not None and owner is not None and owner is getattr(stats, "norm", None):
        return _NORM.get(getattr(fn, "__name__", ""))
    return None
