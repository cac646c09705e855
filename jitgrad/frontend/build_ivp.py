"""``scipy.integrate.solve_ivp(fun, t_span, y0, t_eval=...)`` in a differentiated function: the
adaptive Dormand-Prince integration `build_solvers.dopri_odeint` (odeint's) built in place, from
``t_span[0]`` through the times ``t_eval``; backwards in time (metpy's moist adiabat, from the
surface pressure up) as the forward integration of ``s = -t`` (the direction decided at run
time: ``t_span`` and ``t_eval`` may be values of the graph). The derivative is that of the
discrete solution at the tolerances given (its steps included), as for odeint; the solution
agrees with SciPy's to those tolerances, whatever ``method`` names (every method's answer is
the ODE's to them).

Takes the user's ``fun(t, y, *args)`` (a vector or list of the derivatives), ``t_span`` (two
numbers) and ``t_eval`` (a vector in ``t_span``'s direction, checked at run time), ``y0`` (a
vector or a number), ``rtol``, ``atol``, ``first_step`` and ``max_step`` numbers known while
building. Guarantees: the result has SciPy's ``t``, ``y`` (n, len(t_eval)),
``success`` (True: a failure raises at run time), ``status`` and ``message``; ``events=``
(a root of the solution, where the integration stops), ``dense_output=True`` and a call
without ``t_eval`` (whose output times are the solver's own steps) are refused naming what to
write instead.
"""

from __future__ import annotations

import collections
import inspect

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.frontend.build_solvers import bound_arguments, dopri_odeint
from jitgrad.lang.numpy_args import as_array
from jitgrad.lang.symbolic import NUMPY, Sym, ndim_of

IvpResult = collections.namedtuple(
    "IvpResult", ["t", "y", "success", "status", "message", "t_events", "y_events"])

_RTOL, _ATOL = 1e-3, 1e-6  # solve_ivp's defaults
_STEPS = 100000  # steps between two output times before the integration gives up


def solution(fun, t0, t1, times, y0, args, rtol, atol, first_step, max_step):
    """SciPy's ``y``: the solution at ``times``, one column each, integrated from ``t0`` towards
    ``t1`` (backwards as the forward integration of ``s = -t``)."""
    sign = 1.0 - 2.0 * (t1 < t0)
    if np.any((times - t0) * sign < 0.0) or np.any((times - t1) * sign > 0.0):
        raise ValueError("solve_ivp: values in t_eval are not within t_span")
    grid = np.zeros(times.shape[0] + 1)
    grid[0] = t0 * sign
    grid[1:] = times * sign
    out = dopri_odeint(signed, y0, grid, (fun, args, sign), rtol, atol, first_step, max_step,
                       _STEPS, True)
    return out[1:].T


def signed(s, y, fun, args, sign):
    """The derivative of the solution in ``s = sign t``: ``sign fun(t, y)``."""
    return sign * np.asarray(fun(sign * s, y, *args))


def _solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
               vectorized=False, args=None, rtol=_RTOL, atol=_ATOL, first_step=None,
               max_step=np.inf):
    """SciPy's parameters of solve_ivp (its defaults; its other options refused)."""


_SOLVE_IVP = inspect.signature(_solve_ivp)


def build_solve_ivp(builder, args, kwargs, node):
    """``scipy.integrate.solve_ivp(...)``: `dopri_odeint` built in place (see the module)."""
    loc = builder.loc(node)
    p = bound_arguments(_SOLVE_IVP, "scipy.integrate.solve_ivp", args, kwargs, loc)
    if p["events"] is not None:
        raise UnsupportedError(
            "scipy.integrate.solve_ivp with events= (the time where a function of the solution "
            "crosses 0, where a terminal event stops it) is not supported: integrate to a time "
            "past the event with t_eval, then find the crossing with scipy.optimize.brentq of "
            "an interpolant, or step the integration in a `for` loop and stop it yourself", loc)
    if p["dense_output"] or p["vectorized"]:
        raise UnsupportedError("scipy.integrate.solve_ivp with dense_output=True or "
                               "vectorized=True: pass t_eval, the times you read", loc)
    if p["t_eval"] is None:
        raise UnsupportedError(
            "scipy.integrate.solve_ivp without t_eval: its output times would be the adaptive "
            "solver's own steps; pass t_eval, the times you read (`t_eval=[t_end]` for the "
            "end state)", loc)
    span = p["t_span"]
    times = as_array(p["t_eval"])
    if not (isinstance(span, (tuple, list)) and len(span) == 2 and all(
            ndim_of(t) == 0 for t in span)) or ndim_of(times) != 1:
        raise UnsupportedError("scipy.integrate.solve_ivp with t_span two numbers and t_eval "
                               "a vector", loc)
    known = {}
    for what, default in (("rtol", _RTOL), ("atol", _ATOL), ("first_step", 0.0),
                          ("max_step", 0.0)):
        value = p[what]
        if isinstance(value, Sym) or (value is not None and np.ndim(value) != 0):
            raise UnsupportedError(f"scipy.integrate.solve_ivp with {what} an array or known "
                                   "only at run time: pass a number", loc)
        known[what] = default if value is None or not np.isfinite(value) else float(value)
    y0 = as_array(p["y0"])
    if ndim_of(y0) == 0:
        y0 = NUMPY[np.reshape](y0, (1,))
    if ndim_of(y0) != 1:
        raise UnsupportedError("scipy.integrate.solve_ivp of a vector y0", loc)
    if not isinstance(y0, Sym):
        y0 = builder.known(np.asarray(y0, dtype=float), node)
    if not isinstance(times, Sym):
        times = builder.known(np.asarray(times, dtype=float), node)
    fargs = () if p["args"] is None else tuple(p["args"])
    y = builder.inline(solution, [p["fun"], span[0], span[1], times, y0, fargs, known["rtol"],
                                  known["atol"], known["first_step"], known["max_step"]],
                       {}, node)
    return IvpResult(times, y, True, 0,
                     "The solver successfully reached the end of the integration interval.",
                     None, None)


def solve_ivp_for(fn) -> bool:
    """Whether ``fn`` is scipy.integrate.solve_ivp."""
    import sys
    loaded = sys.modules.get("scipy.integrate")
    return loaded is not None and fn is getattr(loaded, "solve_ivp", None)
