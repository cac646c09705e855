"""NumPy functions that take the user's functions: ``np.piecewise`` and ``np.apply_over_axes``.

Part of the builder's builtins (`build_builtins.BUILTINS`); each handler takes the `Builder`,
the call's arguments (values of the build, the functions among them known while building),
and builds the user's functions inline where NumPy would call them. Guarantees:

* ``np.piecewise(x, condlist, funclist, *args, **kw)`` of a float ``x`` is the ``np.where``
  chain NumPy's loop amounts to: zeros, then for each condition in turn its piece (a number,
  or ``f(x, *args, **kw)``) where the condition holds (a later condition wins), and, with one
  more function than conditions, that one where none holds. NumPy calls ``f`` on the entries
  where its condition holds only; here it is built on all of them, which is the same only for
  an elementwise ``f``: every operation it builds on ``x`` must be elementwise (its primitive's
  row says so), else the call is refused. As `array_api`'s ``apply_where``, ``f`` sees 1 in
  place of the entries whose result is discarded, so that a ``log`` or a division there cannot
  put ``0 * inf`` into the gradient.
* ``np.apply_over_axes(func, a, axes)`` calls ``func(a, axis)`` for each axis in turn, keeping
  the axis (a result of one rank less gets it back as size 1), as NumPy does.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.core.ir import Eqn
from jitgrad.frontend.array_api import guarded
from jitgrad.lang import numpy_api, symbolic
from jitgrad.lang.symbolic import Sym
from jitgrad.prims.primitive import PRIMITIVES


def _numpy(fn, *args):
    """NumPy's ``fn`` of values of the build, or of constants (run now)."""
    if any(isinstance(a, Sym) for a in args):
        return symbolic.NUMPY[fn](*args)
    return fn(*args)


def _conditions(x, condlist) -> list:
    if isinstance(condlist, Sym) or np.isscalar(condlist) or (
            isinstance(condlist, np.ndarray) and condlist.dtype == bool):
        return [condlist]  # one condition (NumPy: a boolean array of x's shape)
    return list(condlist)


def _elementwise_piece(b, f, x, fargs, kwargs, node):
    """``f(x, *fargs, **kwargs)`` built inline, refused unless every operation it builds is
    elementwise (NumPy gives ``f`` the selected entries only, as a vector)."""
    block = b.gb.block
    start = len(block.stmts)
    value = b.call(f, (x, *fargs), kwargs, node)
    for s in block.stmts[start:]:
        if not (isinstance(s, Eqn) and PRIMITIVES[s.prim].elementwise):
            raise UnsupportedError(
                "np.piecewise with a function that is not elementwise (NumPy calls it on the "
                "entries where its condition holds; jitgrad builds it on all of them, which "
                "is the same for elementwise functions only): write the pieces with "
                "np.where(cond, f(x), g(x))", b.loc(node))
    return value


def _piecewise(b, args, kwargs, node):
    if len(args) < 3:
        raise UnsupportedError("np.piecewise(x, condlist, funclist, *args, **kw)", b.loc(node))
    x, condlist, funclist, *fargs = args
    if not isinstance(x, Sym):
        x = np.asarray(x)
    kind = x.type.kind if isinstance(x, Sym) else x.dtype.kind
    if kind != "f":
        raise UnsupportedError("np.piecewise of an array of integers or booleans (NumPy casts "
                               "each piece to its dtype): make x a float array",
                               b.loc(node))
    conds = _conditions(x, condlist)
    funcs = list(funclist) if isinstance(funclist, (list, tuple)) else [funclist]
    if len(funcs) not in (len(conds), len(conds) + 1):
        raise UnsupportedError(f"np.piecewise with {len(conds)} conditions takes {len(conds)} "
                               f"or {len(conds) + 1} functions, not {len(funcs)}", b.loc(node))
    if len(funcs) == len(conds) + 1:  # the last: where no condition holds
        anyone = conds[0]
        for c in conds[1:]:
            anyone = _numpy(np.logical_or, anyone, c)
        conds.append(_numpy(np.logical_not, anyone))
    out = _numpy(np.zeros_like, x)
    for cond, f in zip(conds, funcs):
        if callable(f):
            (guarded_x,) = guarded(cond, (x,), True)
            piece = _elementwise_piece(b, f, guarded_x, fargs, kwargs, node)
        else:
            piece = f
        out = numpy_api.np_where(cond, piece, out)
    return out


def _apply_over_axes(b, args, kwargs, node):
    try:
        func, a, axes = args
    except ValueError:
        raise UnsupportedError("np.apply_over_axes(func, a, axes)", b.loc(node)) from None
    if kwargs or isinstance(axes, Sym):
        raise UnsupportedError("np.apply_over_axes(func, a, axes) with axes known while "
                               "building", b.loc(node))
    val = a
    ndim = symbolic.ndim_of(a)
    for axis in np.atleast_1d(axes):
        axis = int(axis) + ndim if axis < 0 else int(axis)
        res = b.call(func, (val, axis), {}, node)
        if symbolic.ndim_of(res) == ndim:
            val = res
        elif symbolic.ndim_of(res) == ndim - 1:
            val = numpy_api.np_expand_dims(res, axis)
        else:
            raise UnsupportedError("np.apply_over_axes: the function must keep the rank or "
                                   "take one axis away", b.loc(node))
    return val


HANDLERS = {np.piecewise: _piecewise, np.apply_over_axes: _apply_over_axes}
