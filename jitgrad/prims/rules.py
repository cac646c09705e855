"""One derivative rule per primitive, written in NumPy.

``RULES[name]`` holds one function per input, ``vjp(g, ans, *ins, **params)``, returning that
input's share of the gradient given ``g``, the gradient of the result ``ans``. Rules are plain
NumPy: `jitgrad.tape` runs them on arrays, and the source transform runs them on `Sym`s, which
record each operation as an equation of the adjoint. ``None`` marks an input that takes no
gradient (an index, a shape, a template).

For elementwise primitives (`Primitive.elementwise`) a rule may return its share at the
broadcast shape of the result: the caller sums it back to the input's shape, in one place
(`unbroadcast`). Other rules return exactly the input's shape.

Kinks and ties follow one convention: the derivative there is the mean of the one-sided
derivatives. So ``abs'(0) = 0``, ``maximum(a, b)`` at ``a == b`` sends half of ``g`` to each,
and ``max`` over an axis shares ``g`` equally among tied maxima. Primitives with zero derivative
almost everywhere (comparisons, ``sign``, ``floor``, ``//``) have no rule and pass no gradient.
"""

from __future__ import annotations

import numpy as np

from jitgrad.prims import primitives

MAX_STACK = 64  # the most entries np.array([...]) / np.stack take (one rule per entry)

RULES: dict[str, tuple] = {}
_TWO_OVER_SQRT_PI = 1.1283791670955126  # d erf(x) / dx = 2 / sqrt(pi) exp(-x^2)


def defvjp(name: str, *vjps) -> None:
    assert name in primitives.PRIMITIVES, name
    RULES[name] = vjps


defvjp("neg", lambda g, ans, x: -g)
defvjp("add", lambda g, ans, x, y: g, lambda g, ans, x, y: g)
defvjp("sub", lambda g, ans, x, y: g, lambda g, ans, x, y: -g)
defvjp("mul", lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
defvjp("div", lambda g, ans, x, y: g / y, lambda g, ans, x, y: -(g * ans) / y)
def _pow_slope(x, y):
    """d(x**y)/dx = y x**(y-1), taken as 0 where y == 0: x**0 is 1 for every x, 0 included (as
    JAX and autograd take it), not 0 * inf = nan at x == 0."""
    if isinstance(y, (int, float)):  # a constant exponent: decided while building
        return y * x ** (y - 1) if y != 0 else _zero_like(x)
    # Masking x (not the slope) keeps 0 * inf out of this rule's own derivative too (Hessians).
    return y * np.where(y == 0, 1.0, x) ** (y - 1)


# d(x**y)/dy = x**y log(x), taken as 0 where x == 0 (as JAX and autograd do: 0**y is 0 for
# every y > 0, so it does not change with y), not 0 * -inf = nan.
defvjp("pow", lambda g, ans, x, y: g * _pow_slope(x, y),
       lambda g, ans, x, y: g * (ans * np.log(np.where(x == 0, 1.0, x))))
defvjp("mod", lambda g, ans, x, y: g, lambda g, ans, x, y: -(g * np.floor(x / y)))
defvjp("exp", lambda g, ans, x: g * ans)
defvjp("expm1", lambda g, ans, x: g * (ans + 1.0))
defvjp("log", lambda g, ans, x: g / x)
defvjp("log1p", lambda g, ans, x: g / (x + 1.0))
# sqrt'(0) is taken as 0, not inf: a square root at 0 in numerical code is a norm, a distance or
# a standard deviation at 0 (a cone, whose one-sided derivatives average 0), and inf times the
# zero derivative of the sum of squares beneath it would make the whole gradient NaN.
defvjp("sqrt", lambda g, ans, x: np.where(ans == 0.0, 0.0, g / (ans * 2.0)))
defvjp("square", lambda g, ans, x: g * (x * 2.0))
defvjp("sin", lambda g, ans, x: g * np.cos(x))
defvjp("cos", lambda g, ans, x: -(g * np.sin(x)))
defvjp("tan", lambda g, ans, x: g * (ans * ans + 1.0))
defvjp("tanh", lambda g, ans, x: g * (1.0 - ans * ans))
defvjp("arctan", lambda g, ans, x: g / (x * x + 1.0))
defvjp("arcsin", lambda g, ans, x: g / np.sqrt(1.0 - x * x))
defvjp("arccos", lambda g, ans, x: -(g / np.sqrt(1.0 - x * x)))
defvjp("sinh", lambda g, ans, x: g * np.cosh(x))
defvjp("cosh", lambda g, ans, x: g * np.sinh(x))
defvjp("arcsinh", lambda g, ans, x: g / np.sqrt(x * x + 1.0))
defvjp("arccosh", lambda g, ans, x: g / np.sqrt(x * x - 1.0))
defvjp("arctanh", lambda g, ans, x: g / (1.0 - x * x))
defvjp("abs", lambda g, ans, x: g * np.sign(x))
defvjp("cbrt", lambda g, ans, x: g / (ans * ans * 3.0))
defvjp("erf", lambda g, ans, x: g * (np.exp(-(x * x)) * _TWO_OVER_SQRT_PI))
defvjp("erfc", lambda g, ans, x: -(g * (np.exp(-(x * x)) * _TWO_OVER_SQRT_PI)))
defvjp("arctan2", lambda g, ans, y, x: g * (x / (x * x + y * y)),
       lambda g, ans, y, x: -(g * (y / (x * x + y * y))))
defvjp("hypot", lambda g, ans, x, y: g * (x / ans), lambda g, ans, x, y: g * (y / ans))
defvjp("logaddexp", lambda g, ans, x, y: g * np.exp(x - ans),
       lambda g, ans, x, y: g * np.exp(y - ans))
# logaddexp2(x, y) = log2(2**x + 2**y): the shares of 2**x and 2**y in the sum
defvjp("logaddexp2", lambda g, ans, x, y: g * np.exp2(x - ans),
       lambda g, ans, x, y: g * np.exp2(y - ans))
# copysign(x, y) = ±|x|: the sign of y is constant almost everywhere, so y takes no gradient.
defvjp("copysign", lambda g, ans, x, y: g * (np.sign(x) * np.copysign(1.0, y)), None)


# tie_share(x, y): 1 where x wins, 1/2 at a tie, 0 where y wins.
defvjp("maximum", lambda g, ans, x, y: g * primitives.tie_share(x, y),
       lambda g, ans, x, y: g * primitives.tie_share(y, x))
defvjp("minimum", lambda g, ans, x, y: g * primitives.tie_share(y, x),
       lambda g, ans, x, y: g * primitives.tie_share(x, y))
defvjp("where", None, lambda g, ans, c, x, y: g * c, lambda g, ans, c, x, y: g * ~c
       if not isinstance(c, (bool, np.bool_)) else g * (not c))
defvjp("cast", lambda g, ans, x, kind: g)
defvjp("copy", lambda g, ans, x: g)


def _sum_vjp(g, ans, x, axis, keepdims):
    return primitives.spread(g, x, axis=axis)


def _chooser_vjp(g, ans, x, axis, keepdims):
    """max/min: the gradient goes to the entries equal to the result, shared among ties.
    (The shares first, so that the spread and the product are adjacent: one loop nest.)"""
    share = primitives.choose_share(x, ans, axis=axis)
    return primitives.spread(g, x, axis=axis) * share


defvjp("sum", lambda g, ans, x, axis, keepdims: _sum_vjp(g, ans, x, axis, keepdims))
defvjp("prod", lambda g, ans, x: g * primitives.prod_others(x))
defvjp("prod_axis", lambda g, ans, x, axis, keepdims:
       primitives.spread(g, x, axis=axis) * primitives.prod_others_axis(x, axis=axis))
# the adjoint of a running sum is the running sum of g from the end: flip, cumsum, flip
defvjp("cumsum", lambda g, ans, x: _flip(primitives.cumsum(_flip(g))))
defvjp("cumsum_axis", lambda g, ans, x, axis: _flip_along(primitives.cumsum_axis(_flip_along(g, axis),
                                                                       axis=axis), axis))
defvjp("cumprod", lambda g, ans, x: primitives.cumprod_grad(g, x))  # no division by x: zeros work


def _flip(v):
    return primitives.getitem(v, -1, index_spec=(("s", False, False, True),))


def _flip_along(v, axis):
    return primitives.getitem(v, -1, index_spec=(":",) * axis + (("s", False, False, True),))


def _row(k):
    return lambda g, ans, *xs: primitives.getitem(g, k, index_spec=("i",))


defvjp("stack", *[_row(k) for k in range(MAX_STACK)])  # entry k of np.array([...]) gets g[k]
def _piece(k):
    """Input k of a concatenation gets its slice of g along the axis."""
    def vjp(g, ans, *xs, axis):
        start = 0
        for x in xs[:k]:
            start = start + np.shape(x)[axis]
        stop = start + np.shape(xs[k])[axis]
        spec = (":",) * axis + (("s", True, True, False),)
        return primitives.getitem(g, start, stop, index_spec=spec)
    return vjp


def _take_vjp(g, ans, x, idx):
    """x[idx] read rows of x: each row's gradient is the sum of g's rows that read it
    (repeated indices add up; a negative index is the row it reads, counted from the end)."""
    return primitives.take_add(g, idx, np.shape(x)[0])


defvjp("concatenate", *[_piece(k) for k in range(MAX_STACK)])
defvjp("take", _take_vjp, None)
defvjp("take_add", lambda g, ans, rows, idx, n: primitives.take(g, idx), None, None)
defvjp("roll", lambda g, ans, x, shift: primitives.roll(g, -shift), None)
defvjp("max", _chooser_vjp)
defvjp("min", _chooser_vjp)


def _matmul_a(g, ans, a, b):
    if np.ndim(b) == 1:
        return primitives.outer(g, b) if np.ndim(a) == 2 else g * b
    return primitives.matmul(g, primitives.transpose(b))


def _matmul_b(g, ans, a, b):
    if np.ndim(a) == 1:
        return primitives.outer(a, g) if np.ndim(b) == 2 else g * a
    return primitives.matmul(primitives.transpose(a), g)


defvjp("matmul", _matmul_a, _matmul_b)
defvjp("outer", lambda g, ans, x, y: primitives.matmul(g, y), lambda g, ans, x, y: primitives.matmul(x, g))


# Linear algebra: the standard adjoints (Giles, "An extended collection of matrix derivative
# results"), with A^-T written as transpose(inv(A)).
def _solve_a(g, ans, a, b):
    gb = primitives.solve(primitives.transpose(a), g)
    return -(primitives.outer(gb, ans) if np.ndim(ans) == 1 else primitives.matmul(gb, primitives.transpose(ans)))


def _cholesky_vjp(g, ans, a):
    """A = L L^T: Phi(L^T g) keeps the lower triangle with the diagonal halved;
    S = L^-T Phi L^-1; the gradient is S made symmetric."""
    x = primitives.matmul(primitives.transpose(ans), g)
    phi = np.tril(x) - primitives.eye(np.shape(x)[0]) * x * 0.5
    l_inv = primitives.inv(ans)
    s = primitives.matmul(primitives.matmul(primitives.transpose(l_inv), phi), l_inv)
    return (s + primitives.transpose(s)) * 0.5


defvjp("inv", lambda g, ans, a: -primitives.matmul(primitives.matmul(primitives.transpose(ans), g), primitives.transpose(ans)))
defvjp("solve", _solve_a, lambda g, ans, a, b: primitives.solve(primitives.transpose(a), g))
defvjp("det", lambda g, ans, a: g * ans * primitives.transpose(primitives.inv(a)))
defvjp("logabsdet", lambda g, ans, a: g * primitives.transpose(primitives.inv(a)))
defvjp("cholesky", _cholesky_vjp)


def _transpose_vjp(g, ans, x, axes=None):
    if axes is None:
        return primitives.transpose(g)
    return primitives.transpose(g, axes=tuple(int(i) for i in np.argsort(axes)))


defvjp("transpose", _transpose_vjp)
defvjp("reshape", lambda g, ans, x, *dims: primitives.reshape_like(g, x), *([None] * 8))
defvjp("reshape_like", lambda g, ans, x, like: primitives.reshape_like(g, x), None)
defvjp("expand_dims", lambda g, ans, x, axis: primitives.reshape_like(g, x))
defvjp("broadcast_like", lambda g, ans, x, like: primitives.sum_to_like(g, x), None)
defvjp("spread", lambda g, ans, x, like, axis: primitives.reshape_like(
    primitives.reduce_sum(g, axis=axis, keepdims=False), x), None)
defvjp("sum_to_like", lambda g, ans, x, like: primitives.broadcast_like(g, x), None)
defvjp("full", lambda g, ans, v, *dims: primitives.reduce_sum(g), *([None] * 8))


# Indexing. The transform accumulates these in place into an adjoint array it owns (see
# reverse.py); the NumPy forms below are what the tape runs.


def _getitem_vjp(g, ans, x, *idx, index_spec):
    out = np.zeros(np.shape(x))
    return primitives.add_at(out, g, *idx, index_spec=index_spec)


def _setitem_x_vjp(g, ans, x, v, *idx, index_spec):
    out = np.array(g, dtype=float)
    out[primitives.index_value(index_spec, idx)] = 0.0
    return out


def _setitem_v_vjp(g, ans, x, v, *idx, index_spec):
    return unbroadcast(primitives.getitem(g, *idx, index_spec=index_spec), v)


defvjp("getitem", _getitem_vjp, *([None] * 8))
defvjp("setitem", _setitem_x_vjp, _setitem_v_vjp, *([None] * 8))


def unbroadcast(contribution, like):
    """Sum an elementwise rule's ``contribution`` back to the shape of ``like`` (one place)."""
    c_ndim, x_ndim = np.ndim(contribution), np.ndim(like)
    if x_ndim == 0 and c_ndim == 0:
        return contribution
    return primitives.sum_to_like(contribution, like)


# ----------------------------------------------------------------------------- tangent rules
#
# Forward mode (`forward.py`) has its own table beside the adjoint one: ``JVPS[name]`` holds
# one function per input, ``jvp(t, ans, *ins, **params)``, giving that input's part of the
# result's tangent when the input's tangent is ``t`` (the parts add up; ``None``: an input
# with no derivative, an index or a shape). ``ZERO_TANGENT`` lists the primitives whose
# derivative is zero wherever it exists (piecewise constant, or reading only a shape). A
# primitive in neither is refused by forward mode when one of its inputs has a tangent.

JVPS: dict[str, tuple] = {}
ZERO_TANGENT = {"sign", "floor", "ceil", "floordiv", "tie_share", "choose_share", "stop_gradient",
                "zeros", "ones", "empty", "zeros_like", "ones_like", "eye", "arange", "constant",
                "shape_dim", "size", "argmax", "argmin", "signdet", "isnan", "isfinite"}


def defjvp(name: str, *jvps) -> None:
    assert name in primitives.PRIMITIVES, name
    JVPS[name] = jvps


def no_tangent_rule(what: str):
    """A tangent rule that refuses: the input has a derivative jitgrad has no rule for."""
    def refuse(t, ans, *ins, **params):
        from jitgrad.core.errors import UnsupportedError
        raise UnsupportedError(f"forward mode has no tangent rule for {what}")
    return refuse


# Elementwise primitives have a diagonal Jacobian: each adjoint rule above is ``g`` times the
# partial derivative, so applied to a tangent it is the tangent rule (`elementwise_jvps`).
def elementwise_jvps() -> None:
    for name, p in primitives.PRIMITIVES.items():
        if p.elementwise and name in RULES and name not in JVPS:
            JVPS[name] = RULES[name]


def _sum_all(x):
    return primitives.reduce_sum(x, axis=None, keepdims=False)


def _zero_like(x):
    return primitives.zeros_like(x) if np.ndim(x) else 0.0


def _stack_jvp(ts, ans, *xs):
    return primitives.stack(*[t if t is not None else _zero_like(x) for t, x in zip(ts, xs)])


def _concatenate_jvp(ts, ans, *xs, axis):
    return primitives.concatenate(*[t if t is not None else primitives.zeros_like(x) for t, x in zip(ts, xs)],
                         axis=axis)


def _cholesky_jvp(t, ans, a):
    """A = L L^T: dL = L Phi(L^-1 dA L^-T), Phi keeping the lower triangle, diagonal halved."""
    l_inv = primitives.inv(ans)
    y = primitives.matmul(primitives.matmul(l_inv, t), primitives.transpose(l_inv))
    phi = np.tril(y) - primitives.eye(np.shape(y)[0]) * y * 0.5
    return primitives.matmul(ans, phi)


# Rules taking all the tangents at once (``None`` for an input without one): the result is
# built from every input, so its parts do not add up input by input.
JVPS_ALL = {"stack": _stack_jvp, "concatenate": _concatenate_jvp}

defjvp("cast", lambda t, ans, x, kind: t)
defjvp("copy", lambda t, ans, x: primitives.copy(t))
defjvp("sum", lambda t, ans, x, axis, keepdims: primitives.reduce_sum(t, axis=axis, keepdims=keepdims))
defjvp("prod", lambda t, ans, x: _sum_all(t * primitives.prod_others(x)))
defjvp("cumsum", lambda t, ans, x: primitives.cumsum(t))
defjvp("cumprod", lambda t, ans, x: primitives.cumprod_jvp(t, x))  # no division by x: zeros work
defjvp("cumprod_jvp", lambda t, ans, tx, x: primitives.cumprod_jvp(t, x),
       no_tangent_rule("the tangent of np.cumprod in x (second derivatives of np.cumprod)"))
defjvp("max", lambda t, ans, x, axis, keepdims: primitives.reduce_sum(
    t * primitives.choose_share(x, ans, axis=axis), axis=axis, keepdims=keepdims))
defjvp("min", lambda t, ans, x, axis, keepdims: primitives.reduce_sum(
    t * primitives.choose_share(x, ans, axis=axis), axis=axis, keepdims=keepdims))
defjvp("take", lambda t, ans, x, idx: primitives.take(t, idx), None)
defjvp("take_add", lambda t, ans, g, idx, n: primitives.take_add(t, idx, n), None, None)
defjvp("roll", lambda t, ans, x, shift: primitives.roll(t, shift), None)
defjvp("matmul", lambda t, ans, a, b: primitives.matmul(t, b), lambda t, ans, a, b: primitives.matmul(a, t))
defjvp("outer", lambda t, ans, x, y: primitives.outer(t, y), lambda t, ans, x, y: primitives.outer(x, t))
defjvp("inv", lambda t, ans, a: -primitives.matmul(primitives.matmul(ans, t), ans))
defjvp("solve", lambda t, ans, a, b: -primitives.solve(a, primitives.matmul(t, ans)),
       lambda t, ans, a, b: primitives.solve(a, t))
defjvp("det", lambda t, ans, a: ans * _sum_all(primitives.transpose(primitives.inv(a)) * t))
defjvp("logabsdet", lambda t, ans, a: _sum_all(primitives.transpose(primitives.inv(a)) * t))
defjvp("cholesky", _cholesky_jvp)
defjvp("transpose", lambda t, ans, x, axes=None: primitives.transpose(t) if axes is None
       else primitives.transpose(t, axes=axes))
defjvp("reshape", lambda t, ans, x, *dims: primitives.reshape(t, *dims), *([None] * 8))
defjvp("reshape_like", lambda t, ans, x, like: primitives.reshape_like(t, like), None)
defjvp("expand_dims", lambda t, ans, x, axis: primitives.expand_dims(t, axis=axis))
defjvp("broadcast_like", lambda t, ans, g, like: primitives.broadcast_like(t, like), None)
defjvp("spread", lambda t, ans, g, like, axis: primitives.spread(t, like, axis=axis), None)
defjvp("sum_to_like", lambda t, ans, g, like: primitives.sum_to_like(t, like), None)
defjvp("full", lambda t, ans, v, *dims: primitives.full(t, *dims), *([None] * 8))
defjvp("getitem", lambda t, ans, x, *idx, index_spec: primitives.getitem(t, *idx, index_spec=index_spec),
       *([None] * 8))
# The adjoint's own helpers (forward-over-reverse differentiates the adjoint): both are linear
# in the cotangent ``g``; the exact adjoint of cumprod is not differentiated in ``x``.
defjvp("cumprod_grad", lambda t, ans, g, x: primitives.cumprod_grad(t, x),
       no_tangent_rule("the adjoint of np.cumprod (second derivatives of np.cumprod)"))
defjvp("prod_others", lambda t, ans, x: primitives.prod_others_jvp(t, x))  # no division: zeros work
defjvp("prod_others_jvp", lambda t, ans, tx, x: primitives.prod_others_jvp(t, x),
       no_tangent_rule("the tangent of np.prod's adjoint in x (third derivatives of np.prod)"))
elementwise_jvps()
