"""Reductions and running reductions: ``sum``, ``max``, ``min``, ``prod``, ``cumsum``,
``cumprod``, ``argmax``/``argmin``/``argsort``, and the primitives their rules are made of.

Reductions take ``axis`` (None: every axis) and ``keepdims`` as parameters. Their adjoints copy
``g`` back along the reduced axis (`spread`); ``max`` and ``min`` share it among the entries
equal to the result (`_ties`: tied extremes share equally, the mean of the one-sided
derivatives, by elementwise operations and a count that the backend writes into its loop
nests). Products never divide by ``x`` (exact where entries are zero): their rules use the
product of the other entries (`prod_others`) and running-product loops of their own
(`cumprod_grad`, `cumprod_jvp`, `prod_others_jvp`), which are primitives with rules of their
own so that forward-over-reverse can differentiate the adjoint. Those loops (``*_loop``) are
written in what Numba compiles: the backend compiles these same functions for generated code,
so the numbers are written once.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.types import Type
from jitgrad.prims import indexing, shape
from jitgrad.prims.primitive import defjvp, defvjp, no_tangent_rule, primitive

# ----------------------------------------------------------------------------- sum, max, min


def _reduce_type(ts, p):
    t = ts[0]
    kind = "i" if (p["op"] == "sum" and t.kind == "b") else t.kind
    if p["axis"] is None:
        return Type(kind, t.ndim if p["keepdims"] else 0)
    return Type(kind, t.ndim if p["keepdims"] else t.ndim - 1)


def _reduce_impl(fn):
    return lambda x, axis=None, keepdims=False: fn(x, axis=axis, keepdims=keepdims)


reduce_sum = primitive("sum", _reduce_impl(np.sum),
                       lambda ts, p: _reduce_type(ts, dict(p, op="sum")), reduction=True,
                       sums=True)
reduce_max = primitive("max", _reduce_impl(np.max),
                       lambda ts, p: _reduce_type(ts, dict(p, op="max")), reduction=True,
                       extreme="max")
reduce_min = primitive("min", _reduce_impl(np.min),
                       lambda ts, p: _reduce_type(ts, dict(p, op="min")), reduction=True,
                       extreme="min")


def sum_all(x):
    """The sum of every entry of ``x``."""
    return reduce_sum(x, axis=None, keepdims=False)


def _spread_impl(g, like, axis=None):
    shape_ = np.shape(like)
    if axis is None:
        return np.full(shape_, np.reshape(g, ()))
    keep = list(shape_)
    keep[axis] = 1
    return np.broadcast_to(np.reshape(g, keep), shape_).copy()


# The adjoints of reductions. ``spread`` copies a reduced value back along ``axis`` (kept or
# not in ``g``) to the shape of ``like``.
spread = primitive("spread", _spread_impl, lambda ts, p: Type("f", ts[1].ndim), shape_only={1},
                   broadcasts=True, same_shape_as=1)


def _ties(x, ans, axis, keepdims):
    """Where ``x`` equals its extreme ``ans`` (spread back along ``axis``), and how many
    entries do along it (``ans``'s shape). Elementwise operations and a sum, so the backend
    writes them into its loop nests: a counting nest over ``x``, no array of shares."""
    hit = np.equal(x, spread(ans, x, axis=axis))
    count = reduce_sum(np.where(hit, 1.0, 0.0), axis=axis, keepdims=keepdims)
    return hit, np.maximum(count, 1.0)  # (no entry equals a nan maximum: nothing to share)


def _chooser_vjp(g, ans, x, axis, keepdims):
    """max/min: the gradient goes to the entries equal to the result, shared among ties (0
    elsewhere, also where the result is nan and no entry equals it)."""
    hit, count = _ties(x, ans, axis, keepdims)
    return np.where(hit, spread(g / count, x, axis=axis), 0.0)


def _chooser_jvp(t, ans, x, axis, keepdims):
    hit, count = _ties(x, ans, axis, keepdims)
    return reduce_sum(np.where(hit, t, 0.0), axis=axis, keepdims=keepdims) / count


defvjp("sum", lambda g, ans, x, axis, keepdims: spread(g, x, axis=axis))
defvjp("max", _chooser_vjp)
defvjp("min", _chooser_vjp)
defvjp("spread", lambda g, ans, x, like, axis: shape.reshape_like(
    reduce_sum(g, axis=axis, keepdims=False), x), None)
defjvp("sum", lambda t, ans, x, axis, keepdims: reduce_sum(t, axis=axis, keepdims=keepdims))
defjvp("max", _chooser_jvp)
defjvp("min", _chooser_jvp)
defjvp("spread", lambda t, ans, g, like, axis: spread(t, like, axis=axis), None)

# ----------------------------------------------------------------------------- products


def _prod_others_impl(x):
    """Each entry's product of all the other entries of ``x`` (exact where some are zero)."""
    flat = np.ravel(x).astype(float)
    before = np.concatenate(([1.0], np.cumprod(flat)[:-1]))
    after = np.concatenate((np.cumprod(flat[::-1])[::-1][1:], [1.0]))
    return np.reshape(before * after, np.shape(x))


def _prod_others_axis_impl(x, axis):
    x = np.asarray(x, dtype=float)
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = np.stack([_prod_others_impl(r) for r in rows]) if rows.size else rows.copy()
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def prod_others_jvp_loop(t, x):
    """The tangent of ``prod_others(x)`` given ``t``, without dividing by ``x``: with
    ``before[i]`` the product of the entries before ``i`` and ``after[i]`` of those after it,
    entry i is ``d(before[i]) after[i] + before[i] d(after[i])``, each running product's
    tangent built up as in `cumprod_jvp_loop`. Written in what Numba compiles (loops over
    arrays, nothing but NumPy): the primitive's implementation, and the function the backend
    compiles for generated code (`backend.numba.runtime_reduce`), so both compute the same
    numbers."""
    flat, dt = np.ravel(x), np.ravel(t)
    n = flat.size
    before, d_before = np.ones(n), np.zeros(n)
    for i in range(1, n):
        before[i] = before[i - 1] * flat[i - 1]
        d_before[i] = d_before[i - 1] * flat[i - 1] + before[i - 1] * dt[i - 1]
    after, d_after = np.ones(n), np.zeros(n)
    for i in range(n - 2, -1, -1):
        after[i] = after[i + 1] * flat[i + 1]
        d_after[i] = d_after[i + 1] * flat[i + 1] + after[i + 1] * dt[i + 1]
    return (d_before * after + before * d_after).reshape(np.shape(x))


# prod over every axis; its adjoint needs the product of the others (not ans / x: zeros).
reduce_prod = primitive("prod", lambda x: np.prod(x), lambda ts, p: Type(ts[0].kind, 0),
                        reduction=True)
prod_others = primitive("prod_others", _prod_others_impl, lambda ts, p: Type("f", ts[0].ndim),
                        differentiable=False)
# The product along one axis, and each entry's product of the others along it (its adjoint).
prod_axis = primitive("prod_axis",
                      lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims),
                      lambda ts, p: Type(ts[0].kind, ts[0].ndim - (not p["keepdims"])),
                      reduction=True)
prod_others_axis = primitive("prod_others_axis", _prod_others_axis_impl,
                             lambda ts, p: Type("f", ts[0].ndim), differentiable=False,
                             same_shape_as=0)
# Forward mode's rule for prod's adjoint: a loop of its own.
prod_others_jvp = primitive("prod_others_jvp", prod_others_jvp_loop,
                            lambda ts, p: Type("f", ts[1].ndim), differentiable=False)

defvjp("prod", lambda g, ans, x: g * prod_others(x))
defvjp("prod_axis", lambda g, ans, x, axis, keepdims:
       spread(g, x, axis=axis) * prod_others_axis(x, axis=axis))
defjvp("prod", lambda t, ans, x: sum_all(t * prod_others(x)))
# The adjoint's own helper (forward-over-reverse differentiates the adjoint): linear in ``g``.
defjvp("prod_others", lambda t, ans, x: prod_others_jvp(t, x))  # no division: zeros work
defjvp("prod_others_jvp", lambda t, ans, tx, x: prod_others_jvp(t, x),
       no_tangent_rule("the tangent of np.prod's adjoint in x (third derivatives of np.prod)"))

# ----------------------------------------------------------------------------- running sums, products

# The running sum along one axis (np.cumsum(x, axis=k); Numba has no axis argument).
cumsum_axis = primitive("cumsum_axis", lambda x, axis: np.cumsum(x, axis=axis),
                        lambda ts, p: Type("i" if ts[0].kind == "b" else ts[0].kind, ts[0].ndim),
                        same_shape_as=0)
# Running sum of a vector (the adjoint is the running sum from the end).
cumsum = primitive("cumsum", np.cumsum, lambda ts, p: Type(ts[0].kind, 1))


def _flip(v):
    return indexing.getitem(v, -1, index_spec=(("s", False, False, True),))


def _flip_along(v, axis):
    return indexing.getitem(v, -1, index_spec=(":",) * axis + (("s", False, False, True),))


# the adjoint of a running sum is the running sum of g from the end: flip, cumsum, flip
defvjp("cumsum", lambda g, ans, x: _flip(cumsum(_flip(g))))
defvjp("cumsum_axis", lambda g, ans, x, axis: _flip_along(cumsum_axis(_flip_along(g, axis),
                                                                      axis=axis), axis))
defjvp("cumsum", lambda t, ans, x: cumsum(t))


# The running product's adjoint and tangent, as loops that never divide by ``x`` (exact at
# zeros). Like `prod_others_jvp_loop`, each is the primitive's implementation and the function
# the backend compiles for generated code.


def cumprod_grad_loop(g, x):
    """The adjoint of ``cumprod(x)`` given ``g``: entry j gets prod(x[:j]) * s[j], where
    s[j] = g[j] + x[j+1] * s[j+1] runs from the end."""
    xs, gs = np.ravel(x), np.ravel(g)
    n = xs.size
    out = np.empty(n)
    s = 0.0
    for j in range(n - 1, -1, -1):
        if j + 1 < n:
            s = gs[j] + xs[j + 1] * s
        else:
            s = gs[j]
        out[j] = s
    before = 1.0
    for j in range(n):
        out[j] *= before
        before *= xs[j]
    return out


def cumprod_jvp_loop(t, x):
    """The tangent of ``cumprod(x)`` given ``t``: s[j] = x[j] * s[j-1] + t[j] * prod(x[:j])."""
    xs, ts = np.ravel(x), np.ravel(t)
    out = np.empty(xs.size)
    s = 0.0
    before = 1.0
    for j in range(xs.size):
        s = xs[j] * s + ts[j] * before
        out[j] = s
        before *= xs[j]
    return out


# Running product of a vector; its adjoint is a loop of its own (`cumprod_grad_loop`), and so
# is forward mode's rule (`cumprod_jvp_loop`).
cumprod = primitive("cumprod", np.cumprod,
                    lambda ts, p: Type("i" if ts[0].kind == "b" else ts[0].kind, 1))
cumprod_grad = primitive("cumprod_grad", cumprod_grad_loop, lambda ts, p: Type("f", 1),
                         differentiable=False)
cumprod_jvp = primitive("cumprod_jvp", cumprod_jvp_loop, lambda ts, p: Type("f", 1),
                        differentiable=False)

defvjp("cumprod", lambda g, ans, x: cumprod_grad(g, x))  # no division by x: zeros work
defjvp("cumprod", lambda t, ans, x: cumprod_jvp(t, x))  # no division by x: zeros work
defjvp("cumprod_jvp", lambda t, ans, tx, x: cumprod_jvp(t, x),
       no_tangent_rule("the tangent of np.cumprod in x (second derivatives of np.cumprod)"))
# The adjoint's own helper: linear in the cotangent ``g``; not differentiated in ``x``.
defjvp("cumprod_grad", lambda t, ans, g, x: cumprod_grad(t, x),
       no_tangent_rule("the adjoint of np.cumprod (second derivatives of np.cumprod)"))

# ----------------------------------------------------------------------------- positions

# The flat index of the largest / smallest entry (the first one, as NumPy): an integer; with
# ``axis``, the index along that axis of each line (an integer array of one rank less).
def _position_type(ts, p):
    return Type("i", 0 if p.get("axis") is None else ts[0].ndim - 1)


argmax = primitive("argmax", lambda x, axis=None: np.argmax(x, axis=axis), _position_type,
                   differentiable=False, zero_tangent=True, reduction=True)
argmin = primitive("argmin", lambda x, axis=None: np.argmin(x, axis=axis), _position_type,
                   differentiable=False, zero_tangent=True, reduction=True)
# The order that sorts a vector, stably (ties keep their order, as NumPy's mergesort).
argsort = primitive("argsort", lambda x: np.argsort(x, kind="mergesort"),
                    lambda ts, p: Type("i", 1), differentiable=False)


# Where values fall among sorted ones: integers, piecewise constant in every input. A sorted
# vector ``a`` and the values ``v`` (a number or an array): the index where each would be
# inserted to keep ``a`` sorted, before equal entries (``side="left"``) or after them.
searchsorted = primitive("searchsorted",
                         lambda a, v, side: np.searchsorted(a, v, side=side),
                         lambda ts, p: Type("i", ts[1].ndim), differentiable=False,
                         zero_tangent=True, same_shape_as=1)
# The bin of each entry of ``x`` among the monotonic edges ``bins`` (np.digitize: NumPy's and
# Numba's own function, which also takes decreasing edges and refuses others).
digitize = primitive("digitize", lambda x, bins, right: np.digitize(x, bins, right=right),
                     lambda ts, p: Type("i", ts[0].ndim), differentiable=False,
                     zero_tangent=True, same_shape_as=0)
