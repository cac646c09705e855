"""SciPy's piecewise polynomials at knots known while building: ``scipy.interpolate.CubicSpline``
of values of the graph (a drag curve fitted through its table), a ``PPoly``
(``CubicSpline``, ``PchipInterpolator``, ``Akima1DInterpolator``, ``PPoly``) made outside the
function, called at values of the graph, and a ``BivariateSpline`` (``RectBivariateSpline``)
made outside, called or ``.ev`` at values of the graph (`Bivariate`).

A cubic spline's coefficients are affine in the values ``y`` for knots and end conditions
known while building (every ``bc_type`` SciPy takes: the end conditions are linear equations
in them), so `spline_of` reads that map off SciPy itself (the coefficients of the spline of
each unit vector, and of zeros) and applies it to ``y``: SciPy's coefficients to rounding,
and their derivative. `Piecewise.__call__` evaluates as PPoly does: the interval of each
point by the knots at or below it (the first and last extended, SciPy's extrapolation),
Horner's rule in the offset from its knot, ``nu`` derivatives of it, NaN outside the knots
with ``extrapolate=False``.

Takes vectors ``x`` (constants, increasing) and ``y`` (constants or values of the graph);
other forms (a matrix ``y``, knots known only at run time, ``nu`` < 0) are refused at the
user's line.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang.numpy_args import as_array, known_array, records_inside
from jitgrad.lang.symbolic import loc_of, ndim_of, numpy_handler, record, records

_np = numpy_handler


class Piecewise:
    """A piecewise polynomial of one variable: knots ``x`` (constants), coefficients ``c`` of
    shape (order + 1, intervals), highest power first, as SciPy's PPoly holds them (constants
    or a value of the graph)."""

    def __init__(self, x, c, extrapolate=True, name="CubicSpline"):
        self.x, self.c, self.extrapolate, self.__name__ = x, c, extrapolate, name

    def __call__(self, x, nu=0, extrapolate=None):
        if not isinstance(nu, int) or nu < 0:
            raise UnsupportedError(f"{self.__name__}(x, nu) with nu a nonnegative integer "
                                   "known while building", loc_of(x))
        extrapolate = self.extrapolate if extrapolate is None else extrapolate
        scalar = ndim_of(x) == 0
        flat = _np(np.reshape)(as_array(x) if not scalar else x * _np(np.ones)(1), (-1,))
        knots = self.x
        # the interval of each point: the knots at or below it, the first and last extended
        below = _np(np.sum)(record("cast", _np(np.expand_dims)(flat, 1) >= knots[None, 1:-1],
                                   kind="i"), axis=1)
        t = flat - _np(np.take)(knots, below)
        order = self.c.shape[0] - 1
        value = 0.0
        for k in range(order - nu + 1):  # Horner's rule over the derivative's coefficients
            power = order - k  # of c[k], whose term is c[k] t**power
            factor = float(np.prod(np.arange(power - nu + 1, power + 1)))
            row = record("getitem", self.c, k, index_spec=("i",)) if records(self.c) \
                else self.c[k]
            value = value * t + _np(np.take)(row, below) * factor
        if not extrapolate:
            outside = _np(np.logical_or)(flat < knots[0], flat > knots[-1])
            value = _np(np.where)(outside, np.nan, value)
        if isinstance(value, float):  # (a derivative of higher order than the pieces: 0)
            value = flat * 0.0
        return record("getitem", value, 0, index_spec=("i",)) if scalar else \
            _np(np.reshape)(value, tuple(x.shape) if not isinstance(x, (list, tuple))
                            else (len(x),))

    def derivative(self, nu=1):
        return Derivative(self, nu)


class Derivative:
    """``spline.derivative(nu)``: called, the spline's ``nu``-th derivative."""

    def __init__(self, spline, nu):
        self.spline, self.nu, self.__name__ = spline, nu, "derivative"

    def __call__(self, x, nu=0, extrapolate=None):
        return self.spline(x, self.nu + nu, extrapolate)


def spline_of(x, y, axis=0, bc_type="not-a-knot", extrapolate=None):
    """``scipy.interpolate.CubicSpline(x, y, bc_type=...)`` of a vector ``y`` of the graph at
    knots ``x`` known while building: its coefficients, the map SciPy's give applied to ``y``."""
    import scipy.interpolate

    x = known_array(x)
    if x is None or x.ndim != 1 or ndim_of(y) != 1 or axis not in (0, -1):
        raise UnsupportedError("scipy.interpolate.CubicSpline of a vector of values at knots "
                               "known while building", loc_of(x, y))
    if extrapolate == "periodic":
        raise UnsupportedError("CubicSpline with extrapolate='periodic'", loc_of(y))
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    made = scipy.interpolate.CubicSpline(x, np.zeros(n), bc_type=bc_type)
    offset = made.c  # (4, n - 1): the affine part (nonzero derivatives at the ends)
    columns = np.stack([scipy.interpolate.CubicSpline(x, e, bc_type=bc_type).c - offset
                        for e in np.eye(n)], axis=-1)  # (4, n - 1, n)
    flat = _np(np.dot)(columns.reshape(-1, n), as_array(y)) + offset.reshape(-1)
    c = _np(np.reshape)(flat, offset.shape)
    return Piecewise(x, c, True if extrapolate is None else bool(extrapolate))


def piecewise_object(f):
    """A SciPy PPoly (a CubicSpline, Pchip or Akima interpolator) made outside the function
    from vectors: the `Piecewise` of its constants, or None."""
    c = np.asarray(getattr(f, "c", None))
    if c.ndim != 2 or np.ndim(f.x) != 1 or getattr(f, "axis", 0) != 0:
        return None
    if f.extrapolate not in (True, False):
        return None
    return Piecewise(np.asarray(f.x, dtype=float), c, bool(f.extrapolate),
                     type(f).__name__)


class Bivariate:
    """A SciPy ``BivariateSpline`` made outside the function (``RectBivariateSpline``, its
    smoothing and least-squares kin), called (``spline(x, y, dx, dy, grid)``) or ``.ev(x, y)``
    at values of the graph.

    Between its distinct knots the spline is one polynomial of degree (kx, ky) per cell: its
    coefficients in the offset from the cell's centre (scaled by the half-widths) are solved
    while building from SciPy's own values at (kx + 1) x (ky + 1) Chebyshev points of each cell
    (SciPy's values to rounding). Called, each point is clamped to the knots' span as FITPACK's
    bispev clamps it (constant outside, derivative 0 there), its cell found by the knots at or
    below it, and the polynomial of that cell summed; its derivatives are the polynomial's."""

    def __init__(self, spline):
        tx, ty = spline.get_knots()
        kx, ky = spline.degrees
        self.spline, self.__name__ = spline, type(spline).__name__
        self.xb, self.yb = np.unique(tx), np.unique(ty)
        self.xm, self.ym = (self.xb[:-1] + self.xb[1:]) / 2, (self.yb[:-1] + self.yb[1:]) / 2
        self.xh, self.yh = np.diff(self.xb) / 2, np.diff(self.yb) / 2
        tn = np.cos(np.pi * (np.arange(kx + 1) + 0.5) / (kx + 1))
        sn = np.cos(np.pi * (np.arange(ky + 1) + 0.5) / (ky + 1))
        px = self.xm[:, None] + self.xh[:, None] * tn  # (cells in x, kx + 1)
        py = self.ym[:, None] + self.yh[:, None] * sn
        values = spline(px.reshape(-1, 1, 1, 1), py.reshape(1, 1, -1, 1), grid=False)
        values = values.reshape(len(self.xm), kx + 1, len(self.ym), ky + 1)
        inv_t = np.linalg.inv(np.vander(tn, increasing=True))  # values -> powers of t
        inv_s = np.linalg.inv(np.vander(sn, increasing=True))
        coeffs = np.einsum("ap,ipjq,bq->abij", inv_t, values, inv_s)
        self.coeffs = coeffs.reshape(kx + 1, ky + 1, -1)  # (power of t, of s, cell i * ny + j)

    def __call__(self, x, y, dx=0, dy=0, grid=True):
        if not any(records(v) or records_inside(v) for v in (x, y)):
            return self.spline(x, y, dx=dx, dy=dy, grid=grid)
        if not all(isinstance(d, int) and d >= 0 for d in (dx, dy)):
            raise UnsupportedError(f"{self.__name__}(x, y, dx, dy) with dx and dy nonnegative "
                                   "integers known while building", loc_of(x, y))
        x, y = as_array(x), as_array(y)
        if grid:  # SciPy's grid of every x with every y, (len(x), len(y))
            if ndim_of(x) > 1 or ndim_of(y) > 1:
                raise UnsupportedError(f"{self.__name__}(x, y) on a grid of vectors x and y "
                                       "(use .ev(x, y) for points)", loc_of(x, y))
            x = _np(np.reshape)(x, (-1, 1))
            y = _np(np.reshape)(y, (1, -1))
        px, py = x + 0.0 * y, y + 0.0 * x  # (broadcast to one shape)
        scalar = ndim_of(px) == 0
        if scalar:
            px, py = px * _np(np.ones)(1), py * _np(np.ones)(1)
        ix, t = self._cell(px, self.xb, self.xm, self.xh)
        iy, s = self._cell(py, self.yb, self.ym, self.yh)
        cell = ix * len(self.ym) + iy
        value = 0.0
        for a in range(self.coeffs.shape[0] - 1, dx - 1, -1):  # Horner's rule in t, then s
            row = 0.0
            for b in range(self.coeffs.shape[1] - 1, dy - 1, -1):
                factor = float(np.prod(np.arange(a - dx + 1, a + 1)) *
                               np.prod(np.arange(b - dy + 1, b + 1)))
                row = row * s + _np(np.take)(self.coeffs[a, b] * factor, cell)
            value = value * t + row
        if dx or dy:  # d/dx = d/dt / (half-width of the cell)
            value = value / (_np(np.take)(self.xh, ix) ** dx * _np(np.take)(self.yh, iy) ** dy)
        if isinstance(value, float):  # (a derivative of higher order than the pieces: 0)
            value = px * 0.0
        return record("getitem", value, 0, index_spec=("i",)) if scalar else value

    def ev(self, xi, yi, dx=0, dy=0):
        return self(xi, yi, dx, dy, grid=False)

    @staticmethod
    def _cell(p, knots, centres, halves):
        """The cell of each point (clamped to the knots' span) and its offset from the cell's
        centre in half-widths."""
        p = _np(np.clip)(p, knots[0], knots[-1])
        below = _np(np.sum)(record("cast", _np(np.expand_dims)(p, -1) >= knots[1:-1], kind="i"),
                            axis=-1)
        return below, (p - _np(np.take)(centres, below)) / _np(np.take)(halves, below)


_BIVARIATE: dict = {}  # id of a SciPy spline -> (the spline, its `Bivariate`)


def bivariate_object(spline):
    """The `Bivariate` of a SciPy BivariateSpline made outside the function (made once)."""
    made = _BIVARIATE.get(id(spline))
    if made is None or made[0] is not spline:
        made = _BIVARIATE[id(spline)] = (spline, Bivariate(spline))
    return made[1]
