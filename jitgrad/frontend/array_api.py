"""SciPy's array-API plumbing read as NumPy (issue #43).

SciPy 1.15+ writes its functions for any array library: ``xp = array_namespace(x)`` picks the
namespace of the arguments, and ``xpx.apply_where(cond, args, f1, f2, fill_value=)`` applies
``f1`` to the entries where ``cond`` holds and ``f2`` (or ``fill_value``) elsewhere. jitgrad's
arrays are NumPy's, so both are known while building:

* ``array_namespace(...)`` is the module ``numpy`` (``xp.asarray``, ``xp.sum``... are then
  NumPy's functions, which jitgrad differentiates).
* ``xp_promote(*arrays, force_floating=True)`` casts integer arrays to float64, as NumPy.
* ``atleast_nd(x, ndim=n)`` puts axes of size 1 in front, as ``np.atleast_1d``... do.
* ``apply_where`` is ``np.where(cond, f1(*args1), f2(*args2))`` (or ``fill_value``), with
  ``f1``/``f2`` built inline where they are called (lambdas, nested functions, ``operator``'s).
  SciPy evaluates ``f1`` only on the entries where ``cond`` holds; here it runs on all of them,
  so its arguments are guarded as JAX's "double where" does: where ``cond`` is False, ``f1``
  sees 1 in place of each numeric argument (``f2`` likewise where ``cond`` is True). Its
  values there are discarded by the outer ``where``, and its derivative there is multiplied by
  zero; without the guard, ``log(0)`` on a discarded entry would give ``0 * inf = nan`` in the
  gradient. The values and derivatives at the kept entries are those of ``f1`` itself, as
  ``apply_where`` requires ``f1`` to be elementwise.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import numpy_api
from jitgrad.lang.numpy_composed import np_broadcast_arrays
from jitgrad.lang.symbolic import Sym, record


def _array_namespace(b, args, kwargs, node):
    """``array_namespace(x, ...)``: NumPy, the namespace of jitgrad's arrays."""
    return np


def _xp_promote(b, args, kwargs, node):
    """``xp_promote(*arrays, broadcast=False, force_floating=False, xp=)``: jitgrad's
    differentiated values are float64 already; an integer or boolean array becomes float64
    where ``force_floating``, and ``broadcast`` broadcasts them together."""
    broadcast = kwargs.pop("broadcast", False)
    floating = kwargs.pop("force_floating", False)
    kwargs.pop("xp", None)
    if kwargs or any(isinstance(v, Sym) for v in (broadcast, floating)):
        raise UnsupportedError(f"xp_promote(..., {', '.join(kwargs) or 'a run-time flag'}=)",
                               b.loc(node))
    out = []
    for a in args:
        if a is not None and floating:
            if isinstance(a, Sym):
                a = a if a.type.kind == "f" else record("cast", a, kind="f")
            else:
                a = np.asarray(a, dtype=np.result_type(np.asarray(a).dtype, np.float64))
        out.append(a)
    if broadcast:
        out = list(np_broadcast_arrays(*out))
    return out[0] if len(out) == 1 else tuple(out)


def _atleast_nd(b, args, kwargs, node):
    """``atleast_nd(x, ndim=n)``: axes of size 1 put in front until ``x`` has rank ``n``."""
    try:
        (x,) = args
        n = kwargs.pop("ndim")
        kwargs.pop("xp", None)
    except (ValueError, KeyError):
        raise UnsupportedError("atleast_nd(x, ndim=n)", b.loc(node)) from None
    if kwargs or isinstance(n, Sym):
        raise UnsupportedError("atleast_nd(x, ndim=n) with a rank known while building",
                               b.loc(node))
    if not isinstance(x, Sym):
        x = np.asarray(x)
        return x.reshape((1,) * (n - x.ndim) + x.shape) if x.ndim < n else x
    while x.ndim < n:
        x = numpy_api.np_expand_dims(x, 0)
    return x


def _apply_where_signature(cond, args, f1, f2=None, /, *, fill_value=None, xp=None):
    return cond, args, f1, f2, fill_value


def guarded(cond, args, keep):
    """``args`` with 1 in place of each numeric argument's entries where ``cond`` is not
    ``keep`` (the entries whose result is discarded): an integer or constant argument too,
    as ``x * log(n)`` with ``n == 0`` there would make ``x``'s derivative ``0 * inf``."""
    out = []
    for a in args:
        kind = a.type.kind if isinstance(a, Sym) else (
            a.dtype.kind if isinstance(a, np.ndarray) and a.ndim else None)
        if kind in ("f", "i"):
            one = 1.0 if kind == "f" else 1
            if isinstance(cond, Sym) or isinstance(a, Sym):
                a = record("where", cond, a, one) if keep else record("where", cond, one, a)
            else:
                a = np.where(cond, a, one) if keep else np.where(cond, one, a)
        out.append(a)
    return tuple(out)


def _apply_where(b, args, kwargs, node):
    """``apply_where(cond, args, f1, f2=None, /, *, fill_value=None)`` as ``np.where``."""
    try:
        cond, fargs, f1, f2, fill = _apply_where_signature(*args, **kwargs)
    except TypeError as e:
        raise UnsupportedError(f"apply_where: {e}", b.loc(node)) from None
    if (f2 is None) == (fill is None):
        raise UnsupportedError("apply_where takes exactly one of f2 and fill_value",
                               b.loc(node))
    fargs = tuple(fargs) if isinstance(fargs, (tuple, list)) else (fargs,)
    if not isinstance(cond, Sym):  # known while building: NumPy's boolean array
        cond = np.asarray(cond, dtype=bool)
    taken = b.call(f1, guarded(cond, fargs, True), {}, node)
    other = fill if f2 is None else b.call(f2, guarded(cond, fargs, False), {}, node)
    if not any(isinstance(v, Sym) for v in (cond, taken, other)):
        return np.where(cond, taken, other)
    return numpy_api.np_where(cond, taken, other)


HANDLERS = {("scipy._lib._array_api_override", "array_namespace"): _array_namespace,
            ("scipy._lib._array_api", "array_namespace"): _array_namespace,
            ("scipy._lib._array_api", "xp_promote"): _xp_promote,
            ("scipy._lib.array_api_extra._lib._funcs", "apply_where"): _apply_where,
            ("scipy._lib.array_api_extra._delegation", "atleast_nd"): _atleast_nd}
