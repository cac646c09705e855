"""The table of supported operations.

Each `Primitive` says, in one place: its name, how NumPy computes it (`impl`, used by the tape and
whenever a rule runs on concrete arrays), the type of its result (`type_rule`), how it is written
in the generated Numba source (`emit`), and whether it has a derivative (the rules themselves live
in `rules.py`, one per primitive). A primitive is callable: on arrays it runs `impl`; on the
symbolic values of `reverse.py` it records an equation. That is how one rule table serves both
the source transform and the interpreted tape.

Emission templates use ``np`` for NumPy and ``_rt`` for `jitgrad.backend.numba.runtime` (loop helpers Numba
compiles quickly, standing in for the NumPy forms Numba rejects or compiles slowly).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable

import numpy as np

from jitgrad.core import ops
from jitgrad.core.types import Type, broadcast_ndim, promote_kinds

PRIMITIVES: dict[str, Primitive] = {}


@dataclasses.dataclass(eq=False)
class Primitive:
    name: str
    impl: Callable
    type_rule: Callable  # (in_types, params) -> out Type
    emit: Callable  # (arg_sources, params, in_types) -> expression source
    differentiable: bool = True
    elementwise: bool = False  # broadcasts its array operands (adjoints are unbroadcast)
    custom_rule: bool = False  # a user's custom_vjp: the reverse transform builds its rule
    flags: ops.Flags = ops.NONE  # what the passes need to know (`core.ops.Flags`)

    def __call__(self, *args, **params):
        # A value that records operations (the transform's `Sym`, the tape's `Tensor`) says so
        # with a ``_jitgrad_apply`` method; anything else is computed with NumPy.
        for a in args:
            apply = getattr(type(a), "_jitgrad_apply", None)
            if apply is not None:
                return apply(a, self, args, params)
        return self.impl(*args, **params)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


_ROW_FIELDS = {"differentiable", "elementwise", "custom_rule"}


def primitive(name, impl, type_rule, emit, **kw) -> Primitive:
    """Define the primitive ``name``; keywords are the row's fields (``differentiable``,
    ``elementwise``, ``custom_rule``) and its flags (`core.ops.Flags`: ``view``,
    ``shape_only``, ``costly``, ...), declared for every pass to read."""
    row = {k: v for k, v in kw.items() if k in _ROW_FIELDS}
    flags = ops.declare(name, **{k: v for k, v in kw.items() if k not in _ROW_FIELDS})
    p = Primitive(name, impl, type_rule, emit, flags=flags, **row)
    PRIMITIVES[name] = p
    return p


# ----------------------------------------------------------------------------- type rules


def _float_elementwise(ts, p):
    return Type("f", broadcast_ndim(*ts))


def _arith_no_bool(ts, p):
    kind = promote_kinds("i", *(t.kind for t in ts))
    return Type(kind, broadcast_ndim(*ts))


def _compare(ts, p):
    return Type("b", broadcast_ndim(*ts))


def _same(ts, p):
    return ts[0]


def _where(ts, p):
    return Type(promote_kinds(ts[1].kind, ts[2].kind), broadcast_ndim(*ts))


# ----------------------------------------------------------------------------- elementwise


def _unary(name, fn, np_name=None, differentiable=True, type_rule=_float_elementwise, **flags):
    np_name = np_name or name
    primitive(name, fn, type_rule, lambda a, p, t: f"np.{np_name}({a[0]})",
              differentiable=differentiable, elementwise=True, **flags)


def _binop(name, fn, op, type_rule, differentiable=True, **flags):
    primitive(name, fn, type_rule, lambda a, p, t: f"{a[0]} {op} {a[1]}",
              differentiable=differentiable, elementwise=True, **flags)


# Transcendental functions: worth keeping rather than recomputing, and not linear.
COSTLY = {"costly": True, "nonlinear": True}


neg = primitive("neg", np.negative, _arith_no_bool, lambda a, p, t: f"-{a[0]}",
                elementwise=True, linear=True)
for _name in ("exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "arctan",
              "arcsin", "arccos", "sinh", "cosh", "arcsinh", "arccosh", "arctanh"):
    _unary(_name, getattr(np, _name), **COSTLY)
_unary("square", np.square, type_rule=_arith_no_bool, nonlinear=True)
_unary("abs", np.abs, type_rule=_arith_no_bool, nonlinear=True)
_unary("sign", np.sign, differentiable=False, type_rule=_arith_no_bool)
_unary("floor", np.floor, differentiable=False)
_unary("ceil", np.ceil, differentiable=False)
_unary("isnan", np.isnan, differentiable=False, type_rule=_compare)
_unary("isfinite", np.isfinite, differentiable=False, type_rule=_compare)
_unary("cbrt", np.cbrt, **COSTLY)
# erf/erfc: NumPy has none (and Numba compiles no scipy.special): math.erf on scalars only.
primitive("erf", np.vectorize(math.erf, otypes=[float]), _float_elementwise,
          lambda a, p, t: f"_rt.erf({a[0]})", elementwise=True, **COSTLY)
primitive("erfc", np.vectorize(math.erfc, otypes=[float]), _float_elementwise,
          lambda a, p, t: f"_rt.erfc({a[0]})", elementwise=True, **COSTLY)
for _name in ("arctan2", "hypot", "logaddexp", "logaddexp2", "copysign"):
    primitive(_name, getattr(np, _name), _float_elementwise,
              lambda a, p, t, _n=_name: f"np.{_n}({a[0]}, {a[1]})", elementwise=True,
              **(COSTLY if _name != "copysign" else {}))
primitive("logical_not", np.logical_not, _compare, lambda a, p, t: f"np.logical_not({a[0]})"
          if t[0].ndim else f"not {a[0]}", differentiable=False, elementwise=True)

_binop("add", np.add, "+", _arith_no_bool)
_binop("sub", np.subtract, "-", _arith_no_bool)
_binop("mul", np.multiply, "*", _arith_no_bool)
_binop("div", np.true_divide, "/", _float_elementwise)
_binop("pow", np.power, "**", _arith_no_bool, **COSTLY)
_binop("floordiv", np.floor_divide, "//", _arith_no_bool, differentiable=False)
_binop("mod", np.mod, "%", _arith_no_bool)
for _name, _fn, _op in (("lt", np.less, "<"), ("le", np.less_equal, "<="),
                        ("gt", np.greater, ">"), ("ge", np.greater_equal, ">="),
                        ("eq", np.equal, "=="), ("ne", np.not_equal, "!=")):
    _binop(_name, _fn, _op, _compare, differentiable=False)
primitive("logical_and", np.logical_and, _compare,
          lambda a, p, t: f"np.logical_and({a[0]}, {a[1]})" if max(x.ndim for x in t)
          else f"({a[0]} and {a[1]})", differentiable=False, elementwise=True)
primitive("logical_or", np.logical_or, _compare,
          lambda a, p, t: f"np.logical_or({a[0]}, {a[1]})" if max(x.ndim for x in t)
          else f"({a[0]} or {a[1]})", differentiable=False, elementwise=True)
primitive("maximum", np.maximum, _arith_no_bool,
          lambda a, p, t: f"np.maximum({a[0]}, {a[1]})" if max(x.ndim for x in t)
          else f"max({a[0]}, {a[1]})", elementwise=True, nonlinear=True)
primitive("minimum", np.minimum, _arith_no_bool,
          lambda a, p, t: f"np.minimum({a[0]}, {a[1]})" if max(x.ndim for x in t)
          else f"min({a[0]}, {a[1]})", elementwise=True, nonlinear=True)
tie_share = primitive("tie_share", lambda x, y: np.greater(x, y) + np.equal(x, y) * 0.5,
                      _float_elementwise,
                      lambda a, p, t: f"({a[0]} > {a[1]}) + ({a[0]} == {a[1]}) * 0.5",
                      differentiable=False, elementwise=True)
primitive("where", np.where, _where,
          lambda a, p, t: f"np.where({a[0]}, {a[1]}, {a[2]})" if max(x.ndim for x in t)
          else f"{a[1]} if {a[0]} else {a[2]}", elementwise=True)


def _cast_impl(x, kind):
    if np.ndim(x):
        return np.asarray(x, dtype={"f": float, "i": np.int64, "b": bool}[kind])
    return {"f": float, "i": int, "b": bool}[kind](x)


def _cast_emit(a, p, t):
    if t[0].ndim:
        return f"{a[0]}.astype({ {'f': 'np.float64', 'i': 'np.int64', 'b': 'np.bool_'}[p['kind']]})"
    if t[0].kind == "b" and p["kind"] != "b":  # Numba has no float(bool) / int(bool)
        return f"({'1.0' if p['kind'] == 'f' else '1'} if {a[0]} else {'0.0' if p['kind'] == 'f' else '0'})"
    return f"{ {'f': 'float', 'i': 'int', 'b': 'bool'}[p['kind']]}({a[0]})"


primitive("cast", _cast_impl, lambda ts, p: Type(p["kind"], ts[0].ndim), _cast_emit,
          linear=True)

# ----------------------------------------------------------------------------- reductions


def _reduce_type(ts, p):
    t = ts[0]
    kind = "i" if (p["op"] == "sum" and t.kind == "b") else t.kind
    if p["axis"] is None:
        return Type(kind, t.ndim if p["keepdims"] else 0)
    return Type(kind, t.ndim if p["keepdims"] else t.ndim - 1)


def reduced_shape_src(x: str, ndim: int, axis, keepdims: bool) -> str:
    """Source of the shape tuple of ``x`` reduced over ``axis`` (None: all axes)."""
    dims = []
    for k in range(ndim):
        if axis is None or k == axis:
            if keepdims:
                dims.append("1")
        else:
            dims.append(f"{x}.shape[{k}]")
    return "(" + "".join(d + ", " for d in dims).rstrip(" ") + ")" if dims else "()"


def _reduce_emit(op):
    def emit(a, p, t):
        axis, keep, ndim = p["axis"], p["keepdims"], t[0].ndim
        if axis is None:
            full = f"np.{op}({a[0]})"
            if keep:
                return f"np.full({reduced_shape_src(a[0], ndim, None, True)}, {full})"
            return full
        return f"_rt.{op}_axis({a[0]}, {axis}, {reduced_shape_src(a[0], ndim, axis, keep)})"
    return emit


def _reduce_impl(fn):
    return lambda x, axis=None, keepdims=False: fn(x, axis=axis, keepdims=keepdims)


reduce_sum = primitive("sum", _reduce_impl(np.sum),
                       lambda ts, p: _reduce_type(ts, dict(p, op="sum")), _reduce_emit("sum"))
primitive("max", _reduce_impl(np.max),
          lambda ts, p: _reduce_type(ts, dict(p, op="max")), _reduce_emit("max"))
primitive("min", _reduce_impl(np.min),
          lambda ts, p: _reduce_type(ts, dict(p, op="min")), _reduce_emit("min"))


def _prod_others_impl(x):
    """Each entry's product of all the other entries of ``x`` (exact where some are zero)."""
    flat = np.ravel(x).astype(float)
    before = np.concatenate(([1.0], np.cumprod(flat)[:-1]))
    after = np.concatenate((np.cumprod(flat[::-1])[::-1][1:], [1.0]))
    return np.reshape(before * after, np.shape(x))


# prod over every axis; its adjoint needs the product of the others (not ans / x: zeros).
primitive("prod", lambda x: np.prod(x), lambda ts, p: Type(ts[0].kind, 0),
          lambda a, p, t: f"np.prod({a[0]})")
prod_others = primitive("prod_others", _prod_others_impl, lambda ts, p: Type("f", ts[0].ndim),
                        lambda a, p, t: f"_rt.prod_others({a[0]})", differentiable=False)
# The product along one axis, and each entry's product of the others along it (its adjoint).
primitive("prod_axis",
          lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims),
          lambda ts, p: Type(ts[0].kind, ts[0].ndim - (not p["keepdims"])),
          lambda a, p, t: f"_rt.prod_axis({a[0]}, {p['axis']}, "
          f"{reduced_shape_src(a[0], t[0].ndim, p['axis'], p['keepdims'])})")


def _prod_others_axis_impl(x, axis):
    x = np.asarray(x, dtype=float)
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = np.stack([_prod_others_impl(r) for r in rows]) if rows.size else rows.copy()
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


prod_others_axis = primitive("prod_others_axis", _prod_others_axis_impl,
                             lambda ts, p: Type("f", ts[0].ndim),
                             lambda a, p, t: f"_rt.prod_others_axis({a[0]}, {p['axis']})",
                             differentiable=False)
# The running sum along one axis (np.cumsum(x, axis=k); Numba has no axis argument).
cumsum_axis = primitive("cumsum_axis", lambda x, axis: np.cumsum(x, axis=axis),
                        lambda ts, p: Type("i" if ts[0].kind == "b" else ts[0].kind, ts[0].ndim),
                        lambda a, p, t: f"_rt.cumsum_axis({a[0]}, {p['axis']})")
# Running sum of a vector (the adjoint is the running sum from the end).
cumsum = primitive("cumsum", np.cumsum, lambda ts, p: Type(ts[0].kind, 1),
                   lambda a, p, t: f"np.cumsum({a[0]})")



def _cumprod_grad_impl(g, x):
    """The adjoint of ``cumprod(x)`` given ``g``, without dividing by ``x`` (exact at zeros):
    entry j gets prod(x[:j]) * s[j], where s[j] = g[j] + x[j+1] * s[j+1] runs from the end."""
    x, g = np.ravel(x).astype(float), np.ravel(g).astype(float)
    out = np.empty(x.size)
    s = 0.0
    for j in range(x.size - 1, -1, -1):
        s = g[j] + (x[j + 1] * s if j + 1 < x.size else 0.0)
        out[j] = s
    before = 1.0
    for j in range(x.size):
        out[j] *= before
        before *= x[j]
    return out


# Running product of a vector; its adjoint is a loop of its own (`_cumprod_grad_impl`).
primitive("cumprod", np.cumprod,
          lambda ts, p: Type("i" if ts[0].kind == "b" else ts[0].kind, 1),
          lambda a, p, t: f"np.cumprod({a[0]})")
cumprod_grad = primitive("cumprod_grad", _cumprod_grad_impl, lambda ts, p: Type("f", 1),
                         lambda a, p, t: f"_rt.cumprod_grad({a[0]}, {a[1]})",
                         differentiable=False)



def _cumprod_jvp_impl(t, x):
    """The tangent of ``cumprod(x)`` given ``t``, without dividing by ``x`` (exact at zeros):
    s[j] = x[j] * s[j-1] + t[j] * prod(x[:j])."""
    x, t = np.ravel(x).astype(float), np.ravel(t).astype(float)
    out = np.empty(x.size)
    s, before = 0.0, 1.0
    for j in range(x.size):
        s = x[j] * s + t[j] * before
        out[j] = s
        before *= x[j]
    return out


def _prod_others_jvp_impl(t, x):
    """The tangent of ``prod_others(x)`` given ``t``, without dividing by ``x``: with
    ``before[i]`` the product of the entries before ``i`` and ``after[i]`` of those after it,
    entry i is ``d(before[i]) after[i] + before[i] d(after[i])``, each running product's
    tangent built up as in `_cumprod_jvp_impl`."""
    flat, dt = np.ravel(x).astype(float), np.ravel(t).astype(float)
    n = flat.size
    before, d_before = np.ones(n), np.zeros(n)
    for i in range(1, n):
        before[i] = before[i - 1] * flat[i - 1]
        d_before[i] = d_before[i - 1] * flat[i - 1] + before[i - 1] * dt[i - 1]
    after, d_after = np.ones(n), np.zeros(n)
    for i in range(n - 2, -1, -1):
        after[i] = after[i + 1] * flat[i + 1]
        d_after[i] = d_after[i + 1] * flat[i + 1] + after[i + 1] * dt[i + 1]
    return np.reshape(d_before * after + before * d_after, np.shape(x))


# Forward mode's rules for prod's adjoint and cumprod (`rules.JVPS`): loops of their own.
prod_others_jvp = primitive("prod_others_jvp", _prod_others_jvp_impl,
                            lambda ts, p: Type("f", ts[1].ndim),
                            lambda a, p, t: f"_rt.prod_others_jvp({a[0]}, {a[1]})",
                            differentiable=False)
# Forward mode's rule for cumprod (`rules.JVPS`): a loop of its own, like the adjoint's.
cumprod_jvp = primitive("cumprod_jvp", _cumprod_jvp_impl, lambda ts, p: Type("f", 1),
                        lambda a, p, t: f"_rt.cumprod_jvp({a[0]}, {a[1]})",
                        differentiable=False)

# ----------------------------------------------------------------------------- linear algebra


def _matmul_type(ts, p):
    a, b = ts
    ndim = {(1, 1): 0, (1, 2): 1, (2, 1): 1, (2, 2): 2}[(a.ndim, b.ndim)]
    return Type(promote_kinds("f", a.kind, b.kind), ndim)


matmul = primitive("matmul", np.matmul, _matmul_type, lambda a, p, t: f"{a[0]} @ {a[1]}"
                   if t[0].ndim + t[1].ndim > 2 else f"np.dot({a[0]}, {a[1]})")
outer = primitive("outer", np.outer, lambda ts, p: Type("f", 2),
                  lambda a, p, t: f"np.outer({a[0]}, {a[1]})")


# Linear algebra Numba compiles (LAPACK through SciPy), on float matrices.
def _linalg(name, fn, type_rule, src=None):
    return primitive(name, fn, type_rule, lambda a, p, t: f"{src or 'np.linalg.' + name}("
                     f"{', '.join(a)})")


inv = _linalg("inv", np.linalg.inv, lambda ts, p: Type("f", 2))
solve = _linalg("solve", np.linalg.solve, lambda ts, p: Type("f", ts[1].ndim))
_linalg("det", np.linalg.det, lambda ts, p: Type("f", 0))
_linalg("cholesky", np.linalg.cholesky, lambda ts, p: Type("f", 2))
primitive("logabsdet", lambda a: np.linalg.slogdet(a)[1], lambda ts, p: Type("f", 0),
          lambda a, p, t: f"np.linalg.slogdet({a[0]})[1]")
primitive("signdet", lambda a: np.linalg.slogdet(a)[0], lambda ts, p: Type("f", 0),
          lambda a, p, t: f"np.linalg.slogdet({a[0]})[0]", differentiable=False)


def _transpose_impl(x, axes=None):
    return np.transpose(x, axes)


def _transpose_emit(a, p, t):
    if p.get("axes") is None:
        return f"{a[0]}.T" if t[0].ndim else a[0]
    return f"np.transpose({a[0]}, {tuple(p['axes'])})"


transpose = primitive("transpose", _transpose_impl, _same, _transpose_emit, view=True)


def _reshape_type(ts, p):
    return Type(ts[0].kind, len(ts) - 1)


def _shape_src(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


reshape = primitive("reshape", lambda x, *dims: np.reshape(x, tuple(int(d) for d in dims)),
                    _reshape_type,
                    lambda a, p, t: f"_rt.reshape({a[0]}, {_shape_src(a[1:])})", view=True)
def _spread_impl(g, like, axis=None):
    shape = np.shape(like)
    if axis is None:
        return np.full(shape, np.reshape(g, ()))
    keep = list(shape)
    keep[axis] = 1
    return np.broadcast_to(np.reshape(g, keep), shape).copy()


def _choose_share_impl(x, m, axis=None):
    if axis is None:
        hit = x == np.reshape(m, ())
        return hit / hit.sum()
    keep = list(np.shape(x))
    keep[axis] = 1
    hit = x == np.reshape(m, keep)
    return hit / hit.sum(axis=axis, keepdims=True)


# The adjoints of reductions. ``spread`` copies a reduced value back along ``axis`` (kept or
# not in ``g``) to the shape of ``like``; ``choose_share`` weighs the entries of ``x`` equal to
# their reduction ``m`` (a max or min), 1/count each, so tied maxima share the gradient.
spread = primitive("spread", _spread_impl, lambda ts, p: Type("f", ts[1].ndim),
                   lambda a, p, t: f"_rt.broadcast_like({a[0]}, {a[1]})" if p["axis"] is None
                   else f"_rt.spread({a[0]}, {a[1]}, {p['axis']})", shape_only={1})
choose_share = primitive("choose_share", _choose_share_impl, lambda ts, p: Type("f", ts[0].ndim),
                         lambda a, p, t: f"_rt.choose_share_all({a[0]}, {a[1]})"
                         if p["axis"] is None else f"_rt.choose_share({a[0]}, {a[1]}, "
                         f"{p['axis']})", differentiable=False)
reshape_like = primitive("reshape_like", lambda x, like: np.reshape(x, np.shape(like)),
                         lambda ts, p: Type(ts[0].kind, ts[1].ndim),
                         lambda a, p, t: f"_rt.reshape({a[0]}, {a[1]}.shape)"
                         if t[1].ndim else f"{a[0]}.item()" if t[0].ndim else a[0],
                         view=True, shape_only={1})
expand_dims = primitive("expand_dims", lambda x, axis: np.expand_dims(x, axis),
                        lambda ts, p: Type(ts[0].kind, ts[0].ndim + 1),
                        lambda a, p, t: f"np.expand_dims({a[0]}, {p['axis']})", view=True)
broadcast_like = primitive(
    "broadcast_like", lambda g, like: np.broadcast_to(g, np.shape(like)),
    lambda ts, p: Type(ts[0].kind, ts[1].ndim),
    lambda a, p, t: f"_rt.broadcast_like({a[0]}, {a[1]})" if t[1].ndim else a[0],
    read_only_view=True, shape_only={1})
sum_to_like = primitive(
    "sum_to_like", lambda g, like: _sum_to(g, np.shape(like)),
    lambda ts, p: Type(ts[0].kind, ts[1].ndim),
    lambda a, p, t: _sum_to_emit(a, t), may_return_input=True, shape_only={1})


def _sum_to(g, shape):
    """Sum ``g`` down to ``shape`` (undo NumPy broadcasting)."""
    g = np.asarray(g)
    lead = g.ndim - len(shape)
    if lead > 0:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(k for k, n in enumerate(shape) if n == 1 and g.shape[k] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g if shape else float(g)


def _sum_to_emit(a, t):
    g, like = a
    if t[1].ndim == 0:
        return f"np.sum({g})" if t[0].ndim else g
    for k in range(1, t[0].ndim - t[1].ndim + 1):  # sum away the leading axes, one by one
        g = f"_rt.sum_axis({g}, 0, {a[0]}.shape[{k}:])"
    return f"_rt.sum_to({g}, {like})"


# ----------------------------------------------------------------------------- indexing


def index_source(x: str, spec: tuple, args: list[str]) -> str:
    """``x[...]`` for an index spec: items 'i' (an atom), 's' + 3 flags (slice parts), ':'."""
    parts, k = [], 0
    for item in spec:
        if item == "i":
            parts.append(args[k])
            k += 1
        elif item == ":":
            parts.append(":")
        else:
            _, has_start, has_stop, has_step = item
            bits = []
            for present in (has_start, has_stop, has_step):
                if present:
                    bits.append(args[k])
                    k += 1
                else:
                    bits.append("")
            s = f"{bits[0]}:{bits[1]}" + (f":{bits[2]}" if has_step else "")
            parts.append(s)
    return f"{x}[{', '.join(parts)}]"


def index_value(spec, vals):
    out, k = [], 0
    for item in spec:
        if item == "i":
            out.append(int(vals[k]))
            k += 1
        elif item == ":":
            out.append(slice(None))
        else:
            parts = []
            for present in item[1:]:
                parts.append(int(vals[k]) if present else None)
                k += int(present)
            out.append(slice(*parts))
    return tuple(out)


def _getitem_type(ts, p):
    spec = p["index_spec"]
    ints = sum(1 for s in spec if s == "i")
    return Type(ts[0].kind, ts[0].ndim - ints)


def _getitem_emit(a, p, t):
    src = index_source(a[0], p["index_spec"], a[1:])
    # A full-array result of basic indexing is a view: callers that keep it get a copy only where
    # the analysis in reverse.py says the storage is written later.
    return src


getitem = primitive("getitem", lambda x, *idx, index_spec: x[index_value(index_spec, idx)],
                    _getitem_type, _getitem_emit, view=True, index_from=1)


def _setitem_impl(x, v, *idx, index_spec):
    x = np.array(x, dtype=float)
    x[index_value(index_spec, idx)] = v
    return x


# ``setitem`` returns the array it wrote into (same storage): ``y[i] = v`` becomes
# ``y_1 = setitem(y, v, i)`` in the IR and ``y[i] = v`` in the generated source.
setitem = primitive("setitem", _setitem_impl, lambda ts, p: ts[0],
                    lambda a, p, t: index_source(a[0], p["index_spec"], a[2:]),
                    writes_into_first=True, effects=True, index_from=2)

# ``add_at`` is the adjoint of a read: ``g_x[idx] += v`` on an adjoint array jitgrad owns.
add_at = primitive("add_at", lambda x, v, *idx, index_spec: np.add.at(
    x, index_value(index_spec, idx), v) or x, lambda ts, p: ts[0],
    lambda a, p, t: index_source(a[0], p["index_spec"], a[2:]), differentiable=False,
    writes_into_first=True, effects=True, accumulates=True, index_from=2)

# ----------------------------------------------------------------------------- shapes, allocation

shape_dim = primitive("shape_dim", lambda x, axis: np.shape(x)[axis],
                      lambda ts, p: Type("i", 0),
                      lambda a, p, t: f"{a[0]}.shape[{p['axis']}]", differentiable=False,
                      shape_only={0}, nonnegative=True)
# The check of a size assumption (`symbolic.GraphBuilder.assume_same_sizes`): no result.
same_size = primitive("same_size", lambda n, m: None, lambda ts, p: None,
                      lambda a, p, t: f"_rt.same_size({a[0]}, {a[1]})", differentiable=False,
                      no_tangent=True)
size = primitive("size", np.size, lambda ts, p: Type("i", 0), lambda a, p, t: f"{a[0]}.size",
                 differentiable=False, shape_only={0}, nonnegative=True)


def _alloc_type(kind):
    return lambda ts, p: Type(p.get("kind", kind), len(ts) - p.get("extra", 0))


def _dtype_src(p):
    return {"f": "np.float64", "i": "np.int64", "b": "np.bool_"}[p.get("kind", "f")]


zeros = primitive("zeros", lambda *dims, kind="f": np.zeros(tuple(int(d) for d in dims)),
                  _alloc_type("f"),
                  lambda a, p, t: f"np.zeros({_shape_src(a)}, {_dtype_src(p)})",
                  differentiable=False, allocates=True, buffer=True)
ones = primitive("ones", lambda *dims, kind="f": np.ones(tuple(int(d) for d in dims)),
                 _alloc_type("f"),
                 lambda a, p, t: f"np.ones({_shape_src(a)}, {_dtype_src(p)})",
                 differentiable=False, allocates=True, buffer=True)
empty = primitive("empty", lambda *dims, kind="f": np.empty(tuple(int(d) for d in dims)),
                  _alloc_type("f"),
                  lambda a, p, t: f"np.empty({_shape_src(a)}, {_dtype_src(p)})",
                  differentiable=False, allocates=True, buffer=True)
zeros_like = primitive("zeros_like", np.zeros_like, lambda ts, p: ts[0].with_kind("f"),
                       lambda a, p, t: f"np.zeros_like({a[0]}, np.float64)"
                       if t[0].ndim else "0.0", differentiable=False, allocates=True, buffer=True,
                       shape_only={0})
ones_like = primitive("ones_like", np.ones_like, lambda ts, p: ts[0].with_kind("f"),
                      lambda a, p, t: f"np.ones_like({a[0]}, np.float64)"
                      if t[0].ndim else "1.0", differentiable=False, allocates=True, buffer=True,
                      shape_only={0})
full = primitive("full", lambda v, *dims: np.full(tuple(int(d) for d in dims), v),
                 lambda ts, p: Type(ts[0].kind if ts[0].kind != "b" else "b", len(ts) - 1),
                 lambda a, p, t: f"np.full({_shape_src(a[1:])}, {a[0]})", allocates=True, buffer=True)
copy = primitive("copy", lambda x: np.array(x, copy=True), _same,
                 lambda a, p, t: f"{a[0]}.copy()" if t[0].ndim else a[0], allocates=True, buffer=True,
                 linear=True)


def _stack_kind(kinds) -> str:
    """Integers stay integers (``np.array([-1, 0, 2])`` indexes, as in NumPy); anything else is
    a float array."""
    return "i" if all(k == "i" for k in kinds) else "f"


def _stack_type(ts, p):
    return Type(_stack_kind([t.kind for t in ts]), ts[0].ndim + 1)


def _stack_emit(a, p, t):
    if t[0].ndim:
        return f"np.stack(({', '.join(a)},))"
    if _stack_kind([u.kind for u in t]) == "i":
        return f"np.array([{', '.join(a)}], dtype=np.int64)"
    return f"np.array([{', '.join(f'float({x})' if u.kind != 'f' else x for x, u in zip(a, t))}])"


def _stack_impl(*xs):
    ints = all(np.asarray(x).dtype.kind in "iu" for x in xs)
    return np.array(xs, dtype=np.int64 if ints else float)


# ``np.array([a, b, c])`` of scalars, ``np.array([row0, row1])``, ``np.stack`` on axis 0: the
# inputs (all of one shape) become the rows of a new array, of integers if they all are (as
# NumPy makes them), else of floats.
stack = primitive("stack", _stack_impl, _stack_type, _stack_emit, allocates=True)
# Arrays of one rank joined along ``axis`` (np.concatenate, hstack, vstack); all float.
concatenate = primitive("concatenate", lambda *xs, axis: np.concatenate(xs, axis=axis),
                        lambda ts, p: Type(promote_kinds(*(t.kind for t in ts)), ts[0].ndim),
                        lambda a, p, t: f"np.concatenate(({', '.join(a)},), axis={p['axis']})")
# The flat index of the largest / smallest entry (the first one, as NumPy): an integer.
primitive("argmax", np.argmax, lambda ts, p: Type("i", 0),
          lambda a, p, t: f"np.argmax({a[0]})", differentiable=False)
primitive("argmin", np.argmin, lambda ts, p: Type("i", 0),
          lambda a, p, t: f"np.argmin({a[0]})", differentiable=False)
def _unpack_count_impl(n, k):
    if int(n) != int(k):
        raise ValueError(f"cannot unpack an array of {int(n)} rows into {int(k)} names")
    return int(k)


# ``a, b, c = x``: the number of names, once the run time check of x's length passed (the
# reads of the rows are indexed from it, so the check stays in the code).
primitive("unpack_count", _unpack_count_impl, lambda ts, p: Type("i", 0),
          lambda a, p, t: f"_rt.unpack_count({a[0]}, {a[1]})",
          differentiable=False)
# The order that sorts a vector, stably (ties keep their order, as NumPy's mergesort).
primitive("argsort", lambda x: np.argsort(x, kind="mergesort"),
          lambda ts, p: Type("i", 1),
          lambda a, p, t: f"np.argsort({a[0]}, kind='mergesort')",
          differentiable=False)
# ``x[idx]`` with a 1-D integer array: the rows of x at idx (Numba allows one such index).
take = primitive("take", lambda x, idx: x[np.asarray(idx)], lambda ts, p: ts[0],
                 lambda a, p, t: f"{a[0]}[{a[1]}]")


def _take_add_impl(g, idx, n):
    g = np.asarray(g)
    out = np.zeros((int(n),) + g.shape[1:], dtype=g.dtype)
    np.add.at(out, np.asarray(idx), g)  # repeated rows add up; negative ones count from the end
    return out


# The adjoint of ``take``: zeros of n rows, with row k of g added at row idx[k] (a scatter-add,
# O(len(idx)) work; negative indices count from the end and repeated ones add up, as x[idx]
# reads them).
take_add = primitive("take_add", _take_add_impl, lambda ts, p: ts[0],
                     lambda a, p, t: f"_rt.take_add_{'vector' if t[0].ndim == 1 else 'rows'}("
                                     f"{a[0]}, {a[1]}, {a[2]})")
roll = primitive("roll", lambda x, shift: np.roll(x, int(shift)), _same,
                 lambda a, p, t: f"np.roll({a[0]}, {a[1]})")
arange = primitive("arange", lambda start, stop, step: np.arange(start, stop, step),
                   lambda ts, p: Type(promote_kinds("i", *(t.kind for t in ts)), 1),
                   lambda a, p, t: f"np.arange({a[0]}, {a[1]}, {a[2]})", differentiable=False,
                   allocates=True)
eye = primitive("eye", lambda n: np.eye(int(n)), lambda ts, p: Type("f", 2),
                lambda a, p, t: f"np.eye({a[0]})", differentiable=False, allocates=True)


# A global array, or one a closure captured, read as a constant, as Numba freezes them: the
# generated code names it (``_const_<hash of its bytes>``, so other contents make other code)
# and `compile.load` puts the array into the generated module's globals.
CONSTANT_ARRAYS: dict[str, np.ndarray] = {}


def constant_array_name(value: np.ndarray) -> str:
    value = np.ascontiguousarray(value)
    digest = hashlib.sha256(f"{value.dtype.str}{value.shape}".encode() + value.tobytes())
    name = f"_const_{digest.hexdigest()[:16]}"
    if name not in CONSTANT_ARRAYS:
        frozen = value.copy()
        frozen.flags.writeable = False
        CONSTANT_ARRAYS[name] = frozen
    return name


primitive("constant", lambda name, type: CONSTANT_ARRAYS[name],
          lambda ts, p: p["type"], lambda a, p, t: p["name"], differentiable=False)


def identity_copy_emit(a, p, t):
    # An array result is a new array (`.copy()`): no alias for an in-place write to reach.
    return f"{a[0]}.copy()" if t[0].ndim else a[0]


# ``jitgrad.stop_gradient(x)``: x in value, no rule (so no gradient passes).
primitive("stop_gradient", lambda x: x,
          lambda ts, p: Type("f", ts[0].ndim) if ts[0].kind == "f" else ts[0],
          identity_copy_emit, differentiable=False)


def constant_source(value) -> str:
    """Python source for a constant the builder folded (floats keep a decimal point)."""
    if isinstance(value, float):
        if math.isinf(value):
            return "np.inf" if value > 0 else "-np.inf"
        if math.isnan(value):
            return "np.nan"
        return repr(value)
    return repr(value)
