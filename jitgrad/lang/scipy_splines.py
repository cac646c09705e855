"""SciPy's piecewise polynomials at knots known while building: ``scipy.interpolate.CubicSpline``
of values of the graph (a drag curve fitted through its table), and a ``PPoly``
(``CubicSpline``, ``PchipInterpolator``, ``Akima1DInterpolator``, ``PPoly``) made outside the
function, called at values of the graph.

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
from jitgrad.lang.numpy_args import as_array, known_array
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
