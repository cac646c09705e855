"""SciPy's bracketing root finders (``scipy.optimize.brentq``, ``brenth``, ``ridder``,
``bisect``) called in a differentiated function, on a function of the user's (a closure over
differentiated values included).

The root is found by `brent_root`, Brent's method written in the Python jitgrad builds, so it
is a loop of the graph that calls the user's function; its result passes through
``stop_gradient``: the iterations are not differentiated (they would give the derivative of
the arithmetic of the search, not of the root). The derivative is the implicit function
theorem's, ``dx/dtheta = -(df/dtheta) / (df/dx)`` at the root: the handler builds ``f`` once
more at the root and records ``root_at(root, f(root), root)``; `transforms.implicit` adds the
slope ``df/dx`` and `prims.implicit` holds the rule. The root agrees with SciPy's to the
tolerance given (``xtol + rtol |x|``); the four methods share the one search.
"""

from __future__ import annotations

import collections
import inspect

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang.numpy_args import as_array
from jitgrad.lang.symbolic import NUMPY, Sym, ndim_of, record


def brent_root(f, a, b, args, xtol, rtol, maxiter, disp):
    """Brent's method (R. P. Brent, "Algorithms for Minimization without Derivatives", 1973,
    ch. 4): keep a bracket [b, c] with f(b) f(c) <= 0 and |f(b)| <= |f(c)|; step by inverse
    quadratic interpolation or the secant, or bisect where that would not shrink the bracket
    fast enough; stop when half the bracket is within tol = 2 rtol |b| + xtol / 2."""
    fa = f(a, *args)
    fb = f(b, *args)
    if fa * fb > 0.0:
        raise ValueError("f(a) and f(b) must have different signs")
    c = a
    fc = fa
    d = b - a
    e = d
    converged = fb == 0.0
    i = 0
    while not converged and i < maxiter:
        if fb * fc > 0.0:  # the root is between a and b: c takes a's place
            c = a
            fc = fa
            d = b - a
            e = d
        if abs(fc) < abs(fb):  # b the better end
            a = b
            b = c
            c = a
            fa = fb
            fb = fc
            fc = fa
        tol = 2.0 * rtol * abs(b) + 0.5 * xtol
        half = 0.5 * (c - b)
        if abs(half) <= tol or fb == 0.0:
            converged = True
        else:
            if abs(e) >= tol and abs(fa) > abs(fb):
                s = fb / fa
                if a == c:  # two points: the secant
                    p = 2.0 * half * s
                    q = 1.0 - s
                else:  # three: inverse quadratic interpolation
                    q = fa / fc
                    r = fb / fc
                    p = s * (2.0 * half * q * (q - r) - (b - a) * (r - 1.0))
                    q = (q - 1.0) * (r - 1.0) * (s - 1.0)
                if p > 0.0:
                    q = -q
                else:
                    p = -p
                if 2.0 * p < min(3.0 * half * q - abs(tol * q), abs(e * q)):
                    e = d
                    d = p / q
                else:
                    d = half
                    e = half
            else:
                d = half
                e = half
            a = b
            fa = fb
            if abs(d) > tol:
                b = b + d
            elif half > 0.0:
                b = b + tol
            else:
                b = b - tol
            fb = f(b, *args)
            i += 1
    if disp and not converged:
        raise RuntimeError("the root search did not converge in maxiter iterations")
    return b, converged


def newton_root(f, x0, fprime, fprime2, args, tol, rtol, maxiter, x1, disp, derivative):
    """Newton's method, or Halley's with a second derivative, or the secant method, as
    ``scipy.optimize.newton`` chooses them and stops them: after a step that moves x by at most
    ``tol + rtol |x|``, or where f is exactly 0, or (Newton) where the slope is 0.
    ``derivative`` says where the slope comes from, known while building: "given" (``fprime``,
    and ``fprime2`` if not None), "packed" (f returns ``(f, f')`` or ``(f, f', f'')``),
    "differences" (a forward difference of f, as ``root_scalar(method="newton")`` does without
    fprime), or "secant" (from the last two points)."""
    p0 = x0 * 1.0
    converged = False
    i = 0
    if derivative == "secant":
        if x1 is None:  # a start a little away from x0, on its side of 0
            p1 = p0 * 1.0001 + (1e-4 if p0 >= 0.0 else -1e-4)
        else:
            p1 = x1 * 1.0
        q0 = f(p0, *args)
        q1 = f(p1, *args)
        if abs(q1) < abs(q0):  # the better point last
            p0, p1, q0, q1 = p1, p0, q1, q0
        while not converged and i < maxiter:
            i += 1
            if q1 == q0:  # a flat secant: the midpoint, as SciPy returns it
                p1 = 0.5 * (p1 + p0)
                converged = True
            else:
                if abs(q1) > abs(q0):
                    p = (p0 - q0 / q1 * p1) / (1.0 - q0 / q1)
                else:
                    p = (p1 - q1 / q0 * p0) / (1.0 - q1 / q0)
                if abs(p - p1) <= tol + rtol * abs(p1):
                    converged = True
                else:
                    p0 = p1
                    q0 = q1
                    q1 = f(p, *args)
                p1 = p
        root = p1
    else:
        root = p0
        while not converged and i < maxiter:
            i += 1
            if derivative == "packed":
                values = f(p0, *args)
                fval = values[0]
                fder = values[1]
            else:
                fval = f(p0, *args)
                if derivative == "given":
                    fder = fprime(p0, *args)
                else:  # "differences": SciPy's step, relative to |x| (at least 1)
                    h = 1.4901161193847656e-08 * max(1.0, abs(p0))
                    if p0 < 0.0:
                        h = -h
                    fder = (f(p0 + h, *args) - fval) / h
            if fval == 0.0 or fder == 0.0:  # at a root, or stopped where the slope is 0
                root = p0
                converged = fval == 0.0
                i = maxiter + 1
            else:
                step = fval / fder
                if fprime2 is not None or derivative == "packed" and len(values) > 2:
                    curvature = values[2] if derivative == "packed" else fprime2(p0, *args)
                    shrink = step * curvature / fder / 2.0
                    if abs(shrink) < 1.0:  # Halley's correction
                        step = step / (1.0 - shrink)
                p = p0 - step
                root = p
                if abs(p - p0) <= tol + rtol * abs(p0):
                    converged = True
                p0 = p
    if disp and not converged:
        raise RuntimeError("the root search did not converge in maxiter iterations")
    return root, converged


def _bracketing(f, a, b, args=(), xtol=2e-12, rtol=8.881784197001252e-16, maxiter=100,
                full_output=False, disp=True):
    """SciPy's parameters of brentq, brenth, ridder and bisect (their defaults)."""


_SIGNATURE = inspect.signature(_bracketing)


def bound_arguments(signature, what, args, kwargs, loc) -> dict:
    """The call's arguments by name, defaults filled in, as SciPy's function would take them
    (a call it would not take is refused, with Python's reason)."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise UnsupportedError(f"{what}: {e}", loc) from None
    bound.apply_defaults()
    return bound.arguments


def build_root(builder, name, args, kwargs, node):
    """``scipy.optimize.<name>(f, a, b, ...)``: the root, differentiated by the implicit
    function theorem."""
    loc = builder.loc(node)
    p = bound_arguments(_SIGNATURE, f"scipy.optimize.{name}", args, kwargs, loc)
    if p["full_output"] is not False:
        raise UnsupportedError(f"scipy.optimize.{name} with full_output=True (its RootResults "
                               "object): pass full_output=False and use the root", loc)
    fargs = p["args"] if isinstance(p["args"], tuple) else (p["args"],)
    for what in ("xtol", "rtol", "maxiter", "disp"):
        if isinstance(p[what], Sym):
            raise UnsupportedError(f"scipy.optimize.{name} with {what} known only at run time: "
                                   "pass a number", loc)
    root, _ = builder.inline(brent_root, [p["f"], p["a"], p["b"], fargs, float(p["xtol"]),
                                          float(p["rtol"]), int(p["maxiter"]),
                                          bool(p["disp"])], {}, node)
    return _implicit(builder, name, p["f"], root, fargs, False, node)


def _implicit(builder, name, f, root, fargs, packed, node):
    """``root`` with the implicit function theorem's derivative: ``f`` built once more at
    ``stop_gradient(root)`` (its first value if ``packed``), and ``root_at`` recorded."""
    if not isinstance(root, Sym):
        return root
    loc = builder.loc(node)
    builder.gb.loc = loc
    at = record("stop_gradient", root)
    value = builder.call(f, [at, *fargs], {}, node)
    if packed:
        value = value[0]
    if not isinstance(value, Sym):  # f does not depend on anything differentiated
        return root
    if value.ndim:
        raise UnsupportedError(f"scipy.optimize.{name} of a function that returns an array: "
                               "it must return a number", loc)
    builder.gb.loc = loc
    return record("root_at", root, value, at)


def _newton(func, x0, fprime=None, args=(), tol=1.48e-08, maxiter=50, fprime2=None, x1=None,
            rtol=0.0, full_output=False, disp=True):
    """SciPy's parameters of newton (its defaults)."""


_NEWTON = inspect.signature(_newton)


def _known_numbers(p, names, what, loc):
    for name in names:
        if isinstance(p[name], Sym) and p[name] is not None:
            raise UnsupportedError(f"{what} with {name} known only at run time: pass a number",
                                   loc)


def _start(x, what, loc):
    """A starting point: a number (SciPy's vectorized newton of an array x0 is refused)."""
    if ndim_of(x) != 0:
        raise UnsupportedError(f"{what} from an array of starting points (SciPy's vectorized "
                               "form): call it once per entry in a loop", loc)
    return x


def build_newton(builder, args, kwargs, node):
    """``scipy.optimize.newton(func, x0, fprime, ...)``: `newton_root`, differentiated by the
    implicit function theorem."""
    loc = builder.loc(node)
    p = bound_arguments(_NEWTON, "scipy.optimize.newton", args, kwargs, loc)
    if p["full_output"] is not False:
        raise UnsupportedError("scipy.optimize.newton with full_output=True (its RootResults "
                               "object): pass full_output=False and use the root", loc)
    _known_numbers(p, ("tol", "rtol", "maxiter", "disp"), "scipy.optimize.newton", loc)
    fargs = p["args"] if isinstance(p["args"], tuple) else (p["args"],)
    x1 = None if p["x1"] is None else _start(p["x1"], "scipy.optimize.newton", loc)
    derivative = "secant" if p["fprime"] is None else "given"
    root, _ = builder.inline(newton_root, [
        p["func"], _start(p["x0"], "scipy.optimize.newton", loc), p["fprime"], p["fprime2"],
        fargs, float(p["tol"]), float(p["rtol"]), int(p["maxiter"]), x1, bool(p["disp"]),
        derivative], {}, node)
    return _implicit(builder, "newton", p["func"], root, fargs, False, node)


def _root_scalar(f, args=(), method=None, bracket=None, fprime=None, fprime2=None, x0=None,
                 x1=None, xtol=None, rtol=None, maxiter=None, options=None):
    """SciPy's parameters of root_scalar (its defaults)."""


_ROOT_SCALAR = inspect.signature(_root_scalar)

# The part of root_scalar's RootResults that jitgrad computes: the root, and whether the search
# converged (a run-time truth value; root_scalar does not raise when it does not).
RootResults = collections.namedtuple("RootResults", ["root", "converged", "method"])


def build_root_scalar(builder, args, kwargs, node):
    """``scipy.optimize.root_scalar(f, ...)``: the method SciPy would pick (bracketing methods
    share `brent_root`, toms748 included; newton, halley, secant are `newton_root`); its
    ``.root`` is differentiated by the implicit function theorem."""
    loc = builder.loc(node)
    what = "scipy.optimize.root_scalar"
    p = bound_arguments(_ROOT_SCALAR, what, args, kwargs, loc)
    p.update(p.pop("options") or {})
    _known_numbers(p, ("xtol", "rtol", "maxiter"), what, loc)
    fargs = p["args"] if isinstance(p["args"], tuple) else (p["args"],)
    f, fprime, fprime2 = p["f"], p["fprime"], p["fprime2"]
    packed = fprime is True or fprime2 is True
    method = p["method"]
    if not method:  # SciPy's choice
        method = "brentq" if p["bracket"] is not None else \
            "halley" if fprime and fprime2 else "secant" if not fprime and p["x1"] is not None \
            else "newton" if p["x0"] is not None else None
    if method is None:
        raise UnsupportedError(f"{what} with neither a bracket nor a starting point x0", loc)
    method = method.lower()
    if method in ("brentq", "brenth", "ridder", "bisect", "toms748"):
        if not isinstance(p["bracket"], (list, tuple)) or len(p["bracket"]) < 2:
            raise UnsupportedError(f"{what}(method={method!r}) needs bracket=(a, b)", loc)
        xtol = 2e-12 if p["xtol"] is None else float(p["xtol"])
        rtol = 8.881784197001252e-16 if p["rtol"] is None else float(p["rtol"])
        root, converged = builder.inline(brent_root, [
            f, p["bracket"][0], p["bracket"][1], fargs, xtol, rtol,
            100 if p["maxiter"] is None else int(p["maxiter"]), False], {}, node)
    elif method in ("newton", "halley", "secant"):
        if p["x0"] is None:
            raise UnsupportedError(f"{what}(method={method!r}) needs a starting point x0", loc)
        if method == "halley" and not (fprime and fprime2):
            raise UnsupportedError(f"{what}(method='halley') needs fprime and fprime2", loc)
        derivative = "secant" if method == "secant" else "packed" if packed else \
            "given" if fprime else "differences"
        x1 = None if p["x1"] is None else _start(p["x1"], what, loc)
        root, converged = builder.inline(newton_root, [
            f, _start(p["x0"], what, loc), None if packed else fprime,
            fprime2 if method == "halley" and not packed else None, fargs,
            1.48e-08 if p["xtol"] is None else float(p["xtol"]),
            0.0 if p["rtol"] is None else float(p["rtol"]),
            50 if p["maxiter"] is None else int(p["maxiter"]), x1, False, derivative], {}, node)
    else:
        raise UnsupportedError(f"{what}(method={method!r}): jitgrad finds roots of one variable "
                               "by brentq, brenth, ridder, bisect, toms748, newton, halley or "
                               "secant", loc)
    root = _implicit(builder, "root_scalar", f, root, fargs, packed, node)
    return RootResults(root, converged, method)


METHODS = ("brentq", "brenth", "ridder", "bisect")


def solver_for(fn):
    """The name of the bracketing root finder ``fn`` is, or None."""
    import sys
    optimize = sys.modules.get("scipy.optimize")
    if optimize is None:
        return None
    for name in METHODS:
        if fn is getattr(optimize, name, None):
            return name
    return None


def root_finder_for(fn):
    """The builder of ``fn`` if it is scipy.optimize.newton or root_scalar, else None."""
    import sys
    optimize = sys.modules.get("scipy.optimize")
    if optimize is None:
        return None
    if fn is getattr(optimize, "newton", None):
        return build_newton
    if fn is getattr(optimize, "root_scalar", None):
        return build_root_scalar
    return None


# ---- scipy.integrate.odeint: an adaptive Runge-Kutta integration written out ----------------

# Dormand and Prince's 5(4) pair (J. R. Dormand, P. J. Prince, "A family of embedded
# Runge-Kutta formulae", 1980) as a table: stage j is the derivative at time tc + NODES[j] h and
# state y + h (STAGES[j] @ k); its last row is the fifth-order solution's weights, and ERROR
# (the last stage being the derivative at that solution) the weights of the difference of
# the fifth- and fourth-order solutions.
NODES = np.array([0.0, 0.2, 0.3, 0.8, 8.0 / 9.0, 1.0, 1.0])
STAGES = np.array([
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0, 0.0],
    [19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0, 0.0, 0.0, 0.0],
    [9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0, 0.0,
     0.0],
    [35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0],
])
ERROR = np.array([71.0 / 57600.0, 0.0, -71.0 / 16695.0, 71.0 / 1920.0, -17253.0 / 339200.0,
                  22.0 / 525.0, -1.0 / 40.0])


def dopri_odeint(func, y0, t, args, rtol, atol, h0, hmax, mxstep, tfirst):
    """The solution at every time of ``t`` (increasing), by steps of the Dormand-Prince pair,
    each accepted where its error estimate is within ``atol + rtol |y|`` (root mean square),
    the next step scaled by 0.9 err^(-1/5) (between 0.2 and 5 times); each output time is hit
    exactly (the step before it is shortened). The first step: ``h0``, else a thousandth of
    the time span (the control grows it up to five times a step). The seven stages are one
    loop (the user's function is built once); the last is the derivative at the new state,
    for the error estimate (not reused by the next step: one more call per step, less code
    to compile)."""
    y = y0 * 1.0
    n = y.shape[0]
    tc = t[0]
    out = np.zeros((t.shape[0], n))
    out[0] = y
    span = t[t.shape[0] - 1] - t[0]
    h = h0 if h0 > 0.0 else 1e-3 * span
    if hmax > 0.0:
        h = min(h, hmax)
    for i in range(1, t.shape[0]):
        t_end = t[i]
        if t_end < t[i - 1]:
            raise ValueError("odeint: the times must not decrease")
        steps = 0
        while tc < t_end and steps < mxstep:
            last = tc + h >= t_end
            step = t_end - tc if last else h
            k = np.zeros((7, n))
            for j in range(7):
                k[j] = _derivative(func, tfirst, tc + NODES[j] * step,
                                   y + step * (STAGES[j] @ k), args)
            y_new = y + step * (STAGES[6] @ k)
            err = step * (ERROR @ k)
            norm = np.sqrt(np.mean((err / (atol + rtol * np.maximum(np.abs(y),
                                                                    np.abs(y_new)))) ** 2))
            if norm <= 1.0:
                tc = t_end if last else tc + step
                y = y_new
            h = step * min(5.0, max(0.2, 0.9 * max(norm, 1e-10) ** -0.2))
            if hmax > 0.0:
                h = min(h, hmax)
            steps += 1
        if tc < t_end:
            raise RuntimeError("odeint: more than mxstep steps between two output times")
        out[i] = y
    return out


def _derivative(func, tfirst, tc, y, args):
    return func(tc, y, *args) if tfirst else func(y, tc, *args)


def _odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
            rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0,
            mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    """SciPy's parameters of odeint (its defaults)."""


_ODEINT = inspect.signature(_odeint)
_ODE_TOL = 1.49012e-8  # odeint's default rtol and atol


def build_odeint(builder, args, kwargs, node):
    """``scipy.integrate.odeint(func, y0, t, args, rtol=, atol=)`` (and autograd's, the same
    function): `dopri_odeint` built in place, so the derivative is that of the discrete
    solution at the tolerances given (its steps included)."""
    loc = builder.loc(node)
    p = bound_arguments(_ODEINT, "scipy.integrate.odeint", args, kwargs, loc)
    if p["full_output"]:
        raise UnsupportedError("scipy.integrate.odeint with full_output (LSODA's report): "
                               "pass full_output=0", loc)
    if p["tcrit"] is not None or p["hmin"]:
        raise UnsupportedError("scipy.integrate.odeint with tcrit= or hmin=", loc)
    fargs = p["args"] if isinstance(p["args"], tuple) else (p["args"],)
    known = {}
    for what, default in (("rtol", _ODE_TOL), ("atol", _ODE_TOL), ("h0", 0.0), ("hmax", 0.0),
                          ("mxstep", 500)):
        value = p[what]
        if isinstance(value, Sym) or (value is not None and np.ndim(value) != 0):
            raise UnsupportedError(f"scipy.integrate.odeint with {what} an array or known only "
                                   "at run time: pass a number", loc)
        known[what] = default if value is None or (what == "mxstep" and not value) \
            else value
    y0, t = as_array(p["y0"]), as_array(p["t"])
    if ndim_of(y0) == 0:  # a number: SciPy's state of one entry
        y0 = NUMPY[np.reshape](y0, (1,))
    if ndim_of(y0) != 1 or ndim_of(t) != 1:
        raise UnsupportedError("scipy.integrate.odeint of a vector y0 at a vector of times t",
                               loc)
    if not isinstance(y0, Sym):
        y0 = builder.known(np.asarray(y0, dtype=float), node)
    if not isinstance(t, Sym):
        t = np.asarray(t, dtype=float)
        if np.any(np.diff(t) < 0.0):
            raise UnsupportedError("scipy.integrate.odeint with times that decrease (SciPy "
                                   "integrates backwards): pass increasing times", loc)
        t = builder.known(t, node)
    return builder.inline(dopri_odeint, [p["func"], y0, t, fargs, float(known["rtol"]),
                                         float(known["atol"]), float(known["h0"]),
                                         float(known["hmax"]), int(known["mxstep"]),
                                         bool(p["tfirst"])], {}, node)


def odeint_for(fn) -> bool:
    """Whether ``fn`` is scipy.integrate.odeint or autograd's wrapper of it."""
    import sys
    for module in ("scipy.integrate", "autograd.scipy.integrate"):
        loaded = sys.modules.get(module)
        if loaded is not None and fn is getattr(loaded, "odeint", None):
            return True
    return False
