"""Independent central finite differences in float64: the reference gradients for the corpus.

Nothing here uses jitgrad.  `numeric_grad`: each element of argument ``k`` is perturbed by
``h = eps * max(1, |x|)`` in both directions; the quotient uses the step actually represented
in float64 (``x + h`` minus ``x - h``).  `numeric_grad5`: the 5-point stencil, for references
with ~1000x smaller rounding error.  Arguments are copied before every call, so a function
that (wrongly) writes into its inputs cannot corrupt later evaluations.
"""

import numpy as np


def _copied(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _value(f, args):
    return float(f(*_copied(args)))


def _with(args, k, v):
    return args[:k] + (v,) + args[k + 1:]


def numeric_grad(f, args, k, eps=1e-6):
    """Central-difference gradient of scalar ``f(*args)`` w.r.t. argument ``k``.

    Argument ``k`` must be a Python float (result: float) or a float64 ndarray of any rank,
    including 0-d (result: float64 array of the same shape).
    """
    args = tuple(args)
    x = args[k]
    if isinstance(x, np.ndarray):
        if x.dtype != np.float64:
            raise TypeError(f"argument {k} has dtype {x.dtype}, expected float64")
        g = np.zeros(x.shape, dtype=np.float64)
        for idx in np.ndindex(*x.shape):
            h = eps * max(1.0, abs(float(x[idx])))
            xp = x.copy()
            xm = x.copy()
            xp[idx] += h
            xm[idx] -= h
            fp = _value(f, _with(args, k, xp))
            fm = _value(f, _with(args, k, xm))
            g[idx] = (fp - fm) / (xp[idx] - xm[idx])
        return g
    if isinstance(x, float):
        x = float(x)
        h = eps * max(1.0, abs(x))
        xp, xm = x + h, x - h
        return (_value(f, _with(args, k, xp)) - _value(f, _with(args, k, xm))) / (xp - xm)
    raise TypeError(f"argument {k} is {type(x).__name__}, expected float or float64 array")


def _five_point(value, h):
    """``(8 (v(h) - v(-h)) - (v(2h) - v(-2h))) / 12h`` of ``value(t)`` (f moved by ``t``)."""
    return (8 * (value(h) - value(-h)) - (value(2 * h) - value(-2 * h))) / (12 * h)


def numeric_grad5(f, args, k, eps=1e-3):
    """Like `numeric_grad`, with the 5-point central stencil (`_five_point`) at
    ``h = eps * max(1, |x|)``: its truncation error is h^4 f^(5) / 30 (2 points: h^2 f''' / 6),
    which allows a larger step and so ~1000x less rounding error at h = 1e-3 than
    `numeric_grad` at 1e-6."""
    args = tuple(args)
    x = args[k]
    if isinstance(x, float):
        def moved_float(t):
            return _value(f, _with(args, k, x + t))
        return _five_point(moved_float, eps * max(1.0, abs(x)))
    if not isinstance(x, np.ndarray) or x.dtype != np.float64:
        raise TypeError(f"argument {k} must be a float or a float64 array")
    g = np.zeros(x.shape, dtype=np.float64)
    for idx in np.ndindex(*x.shape):
        def moved_entry(t, idx=idx):
            moved = x.copy()
            moved[idx] += t
            return _value(f, _with(args, k, moved))
        g[idx] = _five_point(moved_entry, eps * max(1.0, abs(float(x[idx]))))
    return g


def check_two_steps(fn, args, wrt, value, grads, value_rtol=1e-12):
    """A value and gradients (jitgrad's) against plain Python and central differences at two
    steps, which must agree with each other (no kink or branch switch inside the steps)."""
    np.testing.assert_allclose(value, fn(*_copied(args)), rtol=value_rtol, atol=value_rtol)
    for k, g in zip(wrt, grads):
        fine, coarse = numeric_grad(fn, args, k, eps=1e-7), numeric_grad(fn, args, k, eps=1e-5)
        np.testing.assert_allclose(fine, coarse, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{fn.__name__}: the two steps disagree (a kink)")
        np.testing.assert_allclose(g, coarse, rtol=1e-6, atol=1e-6,
                                   err_msg=f"{fn.__name__}: gradient w.r.t. argument {k}")
    return grads


def check_against(fn, args, wrt, value, grads, want, rtol=1e-9, atol=1e-11):
    """A value and gradients (jitgrad's) against plain Python, central differences, and
    ``want``: an independent oracle's gradients (JAX's), one per argument in ``wrt``."""
    np.testing.assert_allclose(value, fn(*_copied(args)), rtol=1e-12)
    for k, got, ref in zip(wrt, grads, want):
        np.testing.assert_allclose(got, numeric_grad(fn, args, k), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got, np.asarray(ref), rtol=rtol, atol=atol)


def check_optional_oracle(fn, args, wrt, value, grads, want):
    """A value and gradients against plain Python and central differences, and against
    ``want`` (an oracle's gradients, JAX's) where given (None where JAX is not installed)."""
    wrt, grads = (wrt, grads) if isinstance(wrt, tuple) else ((wrt,), (grads,))
    if want is not None:
        want = want if isinstance(want, tuple) else (want,)
        check_against(fn, args, wrt, value, grads, want)
        return
    np.testing.assert_allclose(value, fn(*_copied(args)), rtol=1e-12)
    for k, got in zip(wrt, grads):
        np.testing.assert_allclose(got, numeric_grad(fn, args, k), rtol=1e-6, atol=1e-7)


def check_form(fn, args, wrt, jax_form):
    """jitgrad's value and gradients of ``fn`` against central differences, and against JAX's
    gradients of ``jax_form(jnp, *args)`` where JAX is installed and a form is given."""
    import jitgrad
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    want = None
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        jax = None
    if jax is not None and jax_form is not None:
        want = jax.grad(lambda *a: jax_form(jnp, *a), argnums=wrt)(*args)
    check_optional_oracle(fn, args, wrt, value, grads, want)
