"""``scipy.integrate.quad(f, a, b, args=...)`` in a differentiated function, on a function
of the user's (a bound method or a closure over differentiated values included).

The integral is `gauss_kronrod`, an adaptive Gauss-Kronrod (7-15 point) integration written
in the Python jitgrad builds, so it is a loop of the graph that calls the user's function: the
interval of largest error estimate is bisected until the estimates sum to within ``max(epsabs,
epsrel |value|)`` or ``limit`` intervals. An infinite limit is taken by the change of
variables ``x = a + (1 - t) / t`` (``x = b - (1 - t) / t``; both: ``f(x) + f(-x)``) on
``0 < t <= 1``, as QUADPACK's qagi does. The derivative is that of the rule on the intervals
it chose (as `build_solvers.dopri_odeint`'s is of its steps): Leibniz's rule for the
quadrature, the integrand's own derivative at its nodes plus, through the nodes' dependence
on the limits, the limits' terms. quad gives (value, abserr); abserr is not differentiated.
The value agrees with SciPy's to the tolerances asked (its own error estimate |K15 - G7| on
each interval, which QUADPACK scales down: this one stops no sooner).
"""

from __future__ import annotations

import inspect
import math
import sys

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang.symbolic import Sym, record

# Kronrod's 15 nodes on [-1, 1] (the 7 of Gauss's rule among them, at odd positions from the
# end) and weights, and Gauss's 7-point weights at those nodes (zero elsewhere).
_HALF_NODES = np.array([0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
                        0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
                        0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
                        0.207784955007898467600689403773245, 0.0])
_HALF_KRONROD = np.array([
    0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
    0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
    0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
    0.204432940075298892414161999234649, 0.209482141084727828012999174891714])
_HALF_GAUSS = np.array([0.0, 0.129484966168869693270611432679082, 0.0,
                        0.279705391489276667901467771423780, 0.0,
                        0.381830050505118944950369775488975, 0.0,
                        0.417959183673469387755102040816327])
NODES = np.concatenate([-_HALF_NODES[:-1], _HALF_NODES[::-1]])
KRONROD = np.concatenate([_HALF_KRONROD[:-1], _HALF_KRONROD[::-1]])
GAUSS = np.concatenate([_HALF_GAUSS[:-1], _HALF_GAUSS[::-1]])


def _integrand(f, args, t, kind, origin):
    """f at the node ``t`` of the interval integrated: ``t`` itself (``kind`` 0), or mapped
    from (0, 1] to [origin, inf) (1), (-inf, origin] (-1) or the whole line (2), times dx/dt."""
    if kind == 0:
        return f(t, *args)
    x = (1.0 - t) / t
    if kind == 2:
        return (f(x, *args) + f(-x, *args)) / (t * t)
    return f(origin + kind * x, *args) / (t * t)


def gauss_kronrod(f, a, b, args, epsabs, epsrel, limit, kind, origin):
    """The integral of ``f(x, *args)`` from ``a`` to ``b`` (0 to 1 in t where ``kind`` maps an
    infinite range) and the sum of the error estimates. Each iteration bisects the interval of
    largest estimate (the first, [a, b] itself) and integrates both halves by the 15-point
    Kronrod rule, |K15 - G7| its estimate."""
    if kind == 0 and not (np.isfinite(a) and np.isfinite(b)):
        raise ValueError("quad: a limit known only at run time is infinite: pass np.inf itself")
    lo = np.zeros(limit + 1)
    hi = np.zeros(limit + 1)
    est = np.zeros(limit + 1)
    err = np.zeros(limit + 1)
    lo[0] = a
    hi[0] = b
    err[0] = np.inf
    n = 1
    while n <= limit and np.sum(err) > max(epsabs, epsrel * abs(np.sum(est))):
        i = np.argmax(err)
        left = lo[i]
        right = hi[i]
        mid = 0.5 * (left + right)
        for side in range(2):  # [left, mid] into slot i, [mid, right] into slot n
            start = left + side * (mid - left)
            half = 0.25 * (right - left)
            center = start + half
            k = 0.0
            g = 0.0
            for j in range(15):
                fx = _integrand(f, args, center + half * NODES[j], kind, origin)
                k += KRONROD[j] * fx
                g += GAUSS[j] * fx
            slot = i + side * (n - i)
            lo[slot] = start
            hi[slot] = start + 2.0 * half
            est[slot] = half * k
            err[slot] = abs(half * (k - g))
        n += 1
    return np.sum(est), np.sum(err)


def _quad(func, a, b, args=(), full_output=0, epsabs=1.49e-08, epsrel=1.49e-08, limit=50,
          points=None, weight=None, wvar=None, wopts=None, maxp1=50, limlst=50,
          complex_func=False):
    """SciPy's parameters of quad (its defaults)."""


_QUAD = inspect.signature(_quad)


def quad_for(fn) -> bool:
    """Whether ``fn`` is scipy.integrate.quad."""
    loaded = sys.modules.get("scipy.integrate")
    return loaded is not None and fn is getattr(loaded, "quad", None)


def build_quad(builder, args, kwargs, node):
    """``scipy.integrate.quad(func, a, b, args=(), epsabs=, epsrel=, limit=)``: `gauss_kronrod`
    built in place; (value, abserr), abserr through ``stop_gradient``."""
    loc = builder.loc(node)
    try:
        p = _QUAD.bind(*args, **kwargs).arguments
    except TypeError as e:
        raise UnsupportedError(f"scipy.integrate.quad: {e}", loc) from None
    p = {**{k: v.default for k, v in _QUAD.parameters.items()}, **p}
    for what in ("full_output", "points", "weight", "wvar", "wopts", "complex_func"):
        if p[what] is not _QUAD.parameters[what].default and p[what] not in (0, None, False):
            raise UnsupportedError(f"scipy.integrate.quad with {what}= (QUADPACK's weighted or "
                                   "singular rules and reports): integrate the function itself "
                                   "over [a, b], split at the points yourself", loc)
    for what in ("epsabs", "epsrel", "limit"):
        if isinstance(p[what], Sym):
            raise UnsupportedError(f"scipy.integrate.quad with {what} known only at run time: "
                                   "pass a number", loc)
    fargs = p["args"] if isinstance(p["args"], tuple) else (p["args"],)
    a, b = p["a"], p["b"]
    infinite = [not isinstance(v, Sym) and math.isinf(float(v)) for v in (a, b)]
    if infinite == [False, False]:
        kind, origin, lo, hi, sign = 0, 0.0, a, b, 1.0
    elif infinite == [True, True]:
        if float(a) == float(b):
            return 0.0, 0.0
        kind, origin, lo, hi, sign = 2, 0.0, 0.0, 1.0, 1.0 if float(b) > 0 else -1.0
    else:  # one infinite limit: integrate towards it from the other
        finite, towards = (a, float(b)) if infinite[1] else (b, float(a))
        kind, origin, lo, hi = (1 if towards > 0 else -1), finite, 0.0, 1.0
        # the range mapped runs upwards: ∫_a^inf and ∫_-inf^b as they are, the others negated
        sign = 1.0 if (towards > 0) == infinite[1] else -1.0
    value, err = builder.inline(gauss_kronrod, [p["func"], lo, hi, fargs, float(p["epsabs"]),
                                                float(p["epsrel"]), int(p["limit"]), kind,
                                                origin], {}, node)
    builder.gb.loc = loc
    if isinstance(err, Sym):
        err = record("stop_gradient", err)
    return (sign * value, err)
