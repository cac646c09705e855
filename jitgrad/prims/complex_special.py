"""Special functions of a complex argument, as pairs of real functions of its two parts.

jitgrad computes a complex value as its real and imaginary parts (`lang.complex_pairs`), so a
function of a complex argument z = x + iy is two real primitives of (x, y): its real part and
its imaginary part. Here: the Faddeeva function w(z) = exp(-z^2) erfc(-iz)
(``scipy.special.wofz``), the principal branch of log Gamma(z) (``scipy.special.loggamma``)
and its derivative the digamma function psi(z). Each is one scalar function of plain Python
(`math`, `cmath`, complex arithmetic) returning the pair, which the interpreter runs through
``np.vectorize`` and the backend compiles (`runtime_elementwise`, given the compiled function:
`part_of`).

Their derivatives follow from analyticity: with f' = a + ib, d Re f / dx = a, d Re f / dy = -b,
d Im f / dx = b, d Im f / dy = a (Cauchy-Riemann). w'(z) = -2 z w(z) + 2i / sqrt(pi), written
with w itself, so second derivatives follow; loggamma'(z) = psi(z); psi's own derivative (the
complex trigamma, a second derivative of loggamma) is refused.
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.core.types import Type, broadcast_ndim
from jitgrad.prims.elementwise import COSTLY
from jitgrad.prims.primitive import PRIMITIVES, defvjp, primitive

_TWO_OVER_SQRT_PI = 1.1283791670955126  # 2 / sqrt(pi)
_HALF_LOG_2PI = 0.9189385332046728  # log(2 pi) / 2


def faddeeva(x, y):
    """w(x + iy) = exp(-z^2) erfc(-iz) as (Re w, Im w), for finite x and y.

    In the first quadrant (then extended by w(-conj z) = conj w(z), and below the real axis by
    w(z) = 2 exp(-z^2) - w(-z)), following W. Gautschi, "Efficient computation of the complex
    error function", SIAM J. Numer. Anal. 7 (1970), with the region boundaries and parameters
    of G. P. M. Poppe and C. M. J. Wijers, "More efficient computation of the complex error
    function", ACM TOMS 16 (1990), which report 14 significant digits: near the origin (inside
    the ellipse (x/6.3)^2 + (y/4.4)^2 < 0.292^2) the Taylor series of erfc(-iz), elsewhere
    Laplace's continued fraction i/sqrt(pi) / (z - 1/2 / (z - 1 / (z - ...))) evaluated from
    its tail, accelerated inside the ellipse of radius 1 by Gautschi's truncated Taylor
    expansion about z + ih. On the real axis Re w(x) = exp(-x^2) exactly. Within 1e-13
    (relative, of |w|) of SciPy's wofz over the grid of tests/test_complex_special.py."""
    if math.isnan(x) or math.isnan(y):
        return math.nan, math.nan
    ax, ay = abs(x), abs(y)
    if math.isinf(ax) or math.isinf(ay):
        return (0.0, 0.0) if y >= 0.0 else (math.nan, math.nan)
    s, t = ax / 6.3, ay / 4.4
    q = s * s + t * t
    if q < 0.085264:  # erfc(-iz) = 1 + (2i/sqrt(pi)) z sum_n z^(2n) / (n! (2n + 1))
        z = complex(ax, ay)
        z2 = z * z
        term = 1.0 + 0.0j
        total = 1.0 + 0.0j
        for n in range(1, 200):
            term = term * z2 / n
            part = term / (2 * n + 1)
            total += part
            if abs(part) < 1e-17 * abs(total):
                break
        w = cmath.exp(-z2) * (1.0 + 1j * _TWO_OVER_SQRT_PI * z * total)
    else:
        if q >= 1.0:  # outside the ellipse: the continued fraction alone
            h, last, nu = 0.0, 0, int(3.0 + 1442.0 / (26.0 * math.sqrt(q) + 77.0))
        else:
            r = (1.0 - t) * math.sqrt(1.0 - q)
            h, last, nu = 1.88 * r, int(7.0 + 34.0 * r + 0.5), int(16.0 + 26.0 * r + 0.5)
        base = complex(ay + h, -ax)  # h - iz
        ratio = 0.0j
        acc = 0.0j
        lam = (2.0 * h) ** last if h > 0.0 else 0.0
        for n in range(nu, -1, -1):
            ratio = 0.5 / (base + (n + 1) * ratio)
            if h > 0.0 and n <= last:
                acc = ratio * (lam + acc)
                lam = lam / (2.0 * h)
        w = _TWO_OVER_SQRT_PI * (acc if h > 0.0 else ratio)
        if ay == 0.0:
            w = complex(math.exp(-ax * ax), w.imag)
    if y < 0.0:  # w(z) = 2 exp(-z^2) - w(-z), -z in the upper half-plane
        z = complex(x, y)
        w_neg = w.conjugate() if x >= 0.0 else w
        w = 2.0 * cmath.exp(-z * z) - w_neg
    elif x < 0.0:
        w = w.conjugate()
    return w.real, w.imag


def complex_loggamma(x, y):
    """The principal branch of log Gamma(x + iy) as (real part, imaginary part), as
    scipy.special.loggamma of a complex argument: analytic off the negative real axis, whose
    points take the limit from above (y = -0 as +0); nan at the poles 0, -1, -2, ...

    The recurrence log Gamma(z) = log Gamma(z + n) - sum_{k<n} log(z + k) (each log principal:
    in one half-plane their sum is analytic, so it is the branch) moves z to where Stirling's
    series (z - 1/2) log z - z + log(2 pi)/2 + sum_k B_2k / (2k (2k - 1) z^(2k-1)), seven
    terms, is exact to rounding (|z| >= 15, |arg z| <= pi/2). Near the zeros of Re log Gamma
    (z = 1, 2) the error is absolute, about 1e-15."""
    if y == 0.0:
        if x <= 0.0 and x == math.floor(x):
            return math.nan, math.nan
        if x > 0.0:
            return math.lgamma(x), 0.0
        y = 0.0  # -0.0: the branch from above, as SciPy
    z = complex(x, y)
    shift = 0.0j
    while z.real < 15.0 and (abs(z.imag) < 15.0 or z.real < 0.0):  # to |z| >= 15, Re z >= 0
        shift += cmath.log(z)
        z += 1.0
    iz = 1.0 / z
    iz2 = iz * iz
    series = iz * (1.0 / 12 - iz2 * (1.0 / 360 - iz2 * (1.0 / 1260 - iz2 * (
        1.0 / 1680 - iz2 * (1.0 / 1188 - iz2 * (691.0 / 360360 - iz2 / 156))))))
    out = (z - 0.5) * cmath.log(z) - z + _HALF_LOG_2PI + series - shift
    return out.real, out.imag


def complex_digamma(x, y):
    """psi(x + iy) = d log Gamma / dz as (real part, imaginary part): the recurrence
    psi(z) = psi(z + n) - sum_{k<n} 1/(z + k), then the asymptotic series
    log z - 1/(2z) - sum_k B_2k / (2k z^2k), seven terms; nan at the poles."""
    if y == 0.0 and x <= 0.0 and x == math.floor(x):
        return math.nan, math.nan
    z = complex(x, y)
    acc = 0.0j
    while z.real < 15.0 and (abs(z.imag) < 15.0 or z.real < 0.0):
        acc -= 1.0 / z
        z += 1.0
    iz2 = 1.0 / (z * z)
    series = iz2 * (1.0 / 12 - iz2 * (1.0 / 120 - iz2 * (1.0 / 252 - iz2 * (
        1.0 / 240 - iz2 * (1.0 / 132 - iz2 * (691.0 / 32760 - iz2 / 12))))))
    out = acc + cmath.log(z) - 0.5 / z - series
    return out.real, out.imag


def part_of(pair_fn, k: int):
    """The scalar function ``(x, y) -> pair_fn(x, y)[k]``: the real (0) or imaginary (1) part
    of a function of a complex argument (the backend passes the compiled ``pair_fn``)."""
    def part(x, y):
        return pair_fn(x, y)[k]
    return part


# The rows: name -> (the pair function, the part). The backend compiles each the same way.
PARTS = {"wofz_re": (faddeeva, 0), "wofz_im": (faddeeva, 1),
         "loggamma_re": (complex_loggamma, 0), "loggamma_im": (complex_loggamma, 1),
         "digamma_re": (complex_digamma, 0), "digamma_im": (complex_digamma, 1)}
for _name, (_fn, _k) in PARTS.items():  # elementwise: real results of the broadcast shape
    primitive(_name, np.vectorize(part_of(_fn, _k), otypes=[float]),
              lambda ts, p: Type("f", broadcast_ndim(*ts)), elementwise=True, **COSTLY)
wofz_re, wofz_im = PRIMITIVES["wofz_re"], PRIMITIVES["wofz_im"]
digamma_re, digamma_im = PRIMITIVES["digamma_re"], PRIMITIVES["digamma_im"]


def _wofz_slope(x, y):
    """w'(z) = -2 z w(z) + 2i/sqrt(pi) as its two parts (a, b)."""
    u, v = wofz_re(x, y), wofz_im(x, y)
    return (x * u - y * v) * -2.0, (x * v + y * u) * -2.0 + _TWO_OVER_SQRT_PI


# f' = a + ib: d Re f = a dx - b dy, d Im f = b dx + a dy
defvjp("wofz_re", lambda g, ans, x, y: g * _wofz_slope(x, y)[0],
       lambda g, ans, x, y: -(g * _wofz_slope(x, y)[1]))
defvjp("wofz_im", lambda g, ans, x, y: g * _wofz_slope(x, y)[1],
       lambda g, ans, x, y: g * _wofz_slope(x, y)[0])
defvjp("loggamma_re", lambda g, ans, x, y: g * digamma_re(x, y),
       lambda g, ans, x, y: -(g * digamma_im(x, y)))
defvjp("loggamma_im", lambda g, ans, x, y: g * digamma_im(x, y),
       lambda g, ans, x, y: g * digamma_re(x, y))


def _no_complex_trigamma(g, ans, x, y):
    raise UnsupportedError("the derivative of the complex digamma function (a second "
                           "derivative of scipy.special.loggamma of a complex argument) is "
                           "not implemented")


for _name in ("digamma_re", "digamma_im"):
    defvjp(_name, _no_complex_trigamma, _no_complex_trigamma)
