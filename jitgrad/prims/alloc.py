"""New arrays: made from sizes (``zeros``, ``ones``, ``empty``, ``full``, ``eye``, ``arange``,
the ``*_like`` forms), from other arrays (``copy``, ``stack``, ``concatenate``), from a frozen
global (``constant``), and ``stop_gradient``.

Arrays made from sizes alone have no derivative and a zero tangent (``zero_tangent``); sizes
are integer inputs and take no gradient (``None``). The rules of arrays made from other arrays
route ``g`` back to the inputs it came from: each row of a stack, each piece of a
concatenation gets its slice of ``g`` (one rule per input, up to `MAX_STACK` of them), and the
tangent of a stack is the stack of the tangents (`defjvp_all`, zeros where an input has none).
``full(v, *dims)`` broadcasts ``v``: its adjoint is the sum of ``g``.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from jitgrad.core.types import Type, promote_kinds
from jitgrad.prims import indexing, reductions
from jitgrad.prims.primitive import MAX_STACK, defjvp, defjvp_all, defvjp, primitive, same_type

# ----------------------------------------------------------------------------- from sizes


def _alloc_type(kind):
    return lambda ts, p: Type(p.get("kind", kind), len(ts) - p.get("extra", 0))


# From sizes alone: no derivative, a zero tangent; a fresh array the program may fill in place.
FROM_SIZES = {"differentiable": False, "zero_tangent": True, "allocates": True}

zeros = primitive("zeros", lambda *dims, kind="f": np.zeros(tuple(int(d) for d in dims)),
                  _alloc_type("f"), buffer=True, zero_filled=True, sizes_from=0, **FROM_SIZES)
ones = primitive("ones", lambda *dims, kind="f": np.ones(tuple(int(d) for d in dims)),
                 _alloc_type("f"), buffer=True, sizes_from=0, **FROM_SIZES)
empty = primitive("empty", lambda *dims, kind="f": np.empty(tuple(int(d) for d in dims)),
                  _alloc_type("f"), buffer=True, uninitialised=True, sizes_from=0, **FROM_SIZES)
zeros_like = primitive("zeros_like", np.zeros_like, lambda ts, p: ts[0].with_kind("f"),
                       buffer=True, zero_filled=True, shape_only={0}, same_shape_as=0,
                       **FROM_SIZES)
ones_like = primitive("ones_like", np.ones_like, lambda ts, p: ts[0].with_kind("f"),
                      buffer=True, shape_only={0}, same_shape_as=0, **FROM_SIZES)
arange = primitive("arange", lambda start, stop, step: np.arange(start, stop, step),
                   lambda ts, p: Type(promote_kinds("i", *(t.kind for t in ts)), 1),
                   counts=True, **FROM_SIZES)
eye = primitive("eye", lambda n: np.eye(int(n)), lambda ts, p: Type("f", 2), square=True,
                **FROM_SIZES)
# The Kaiser window of M points (np.kaiser): NumPy's and Numba's own, ``beta`` a constant.
kaiser = primitive("kaiser", lambda m, beta: np.kaiser(int(m), beta), lambda ts, p: Type("f", 1),
                   **FROM_SIZES)
full = primitive("full", lambda v, *dims: np.full(tuple(int(d) for d in dims), v),
                 lambda ts, p: Type(ts[0].kind if ts[0].kind != "b" else "b", len(ts) - 1),
                 allocates=True, buffer=True, sizes_from=1)

defvjp("full", lambda g, ans, v, *dims: reductions.sum_all(g), *([None] * 8))
defjvp("full", lambda t, ans, v, *dims: full(t, *dims), *([None] * 8))


def zero_like(x):
    """A zero of the shape of ``x``: an array of zeros, or 0.0 for a scalar."""
    return zeros_like(x) if np.ndim(x) else 0.0


# ----------------------------------------------------------------------------- from arrays

copy = primitive("copy", lambda x: np.array(x, copy=True), same_type, allocates=True,
                 buffer=True, linear=True, same_value=True, same_shape_as=0)
defvjp("copy", lambda g, ans, x: g)
defjvp("copy", lambda t, ans, x: copy(t))


def stack_kind(kinds) -> str:
    """Integers stay integers (``np.array([-1, 0, 2])`` indexes, as in NumPy); anything else is
    a float array."""
    return "i" if all(k == "i" for k in kinds) else "f"


def _stack_type(ts, p):
    return Type(stack_kind([t.kind for t in ts]), ts[0].ndim + 1)


def _stack_impl(*xs):
    ints = all(np.asarray(x).dtype.kind in "iu" for x in xs)
    return np.array(xs, dtype=np.int64 if ints else float)


# ``np.array([a, b, c])`` of scalars, ``np.array([row0, row1])``, ``np.stack`` on axis 0: the
# inputs (all of one shape) become the rows of a new array, of integers if they all are (as
# NumPy makes them), else of floats.
stack = primitive("stack", _stack_impl, _stack_type, allocates=True)
# Arrays of one rank joined along ``axis`` (np.concatenate, hstack, vstack); all float.
concatenate = primitive("concatenate", lambda *xs, axis: np.concatenate(xs, axis=axis),
                        lambda ts, p: Type(promote_kinds(*(t.kind for t in ts)), ts[0].ndim))


def _row(k):
    return lambda g, ans, *xs: indexing.getitem(g, k, index_spec=("i",))


def _piece(k):
    """Input k of a concatenation gets its slice of g along the axis."""
    def vjp(g, ans, *xs, axis):
        start = 0
        for x in xs[:k]:
            start = start + np.shape(x)[axis]
        stop = start + np.shape(xs[k])[axis]
        spec = (":",) * axis + (("s", True, True, False),)
        return indexing.getitem(g, start, stop, index_spec=spec)
    return vjp


def _stack_jvp(ts, ans, *xs):
    return stack(*[t if t is not None else zero_like(x) for t, x in zip(ts, xs)])


def _concatenate_jvp(ts, ans, *xs, axis):
    return concatenate(*[t if t is not None else zeros_like(x) for t, x in zip(ts, xs)],
                       axis=axis)


defvjp("stack", *[_row(k) for k in range(MAX_STACK)])  # entry k of np.array([...]) gets g[k]
defvjp("concatenate", *[_piece(k) for k in range(MAX_STACK)])
defjvp_all("stack", _stack_jvp)
defjvp_all("concatenate", _concatenate_jvp)

# ----------------------------------------------------------------------------- powers


def _vander_slopes(x, n, increasing):
    """d x**p / dx = p x**(p - 1) for the powers p of each column of ``np.vander(x, n)`` (0
    for p = 0, never x**-1)."""
    powers = arange(0, n, 1)
    if not increasing:
        powers = (n - 1) - powers
    return powers * np.expand_dims(x, 1) ** np.maximum(powers - 1, 0)


# ``np.vander(x, n, increasing)``: the powers of a vector, one column per power, each the
# previous one times x (NumPy's and Numba's own, so the same products).
vander = primitive("vander", lambda x, n, increasing: np.vander(x, int(n), increasing),
                   lambda ts, p: Type(promote_kinds("i", ts[0].kind), 2), allocates=True)
defvjp("vander", lambda g, ans, x, n, increasing: np.sum(g * _vander_slopes(x, n, increasing),
                                                         axis=1), None)
defjvp("vander", lambda t, ans, x, n, increasing: np.expand_dims(t, 1) * _vander_slopes(
    x, n, increasing), None)

# ----------------------------------------------------------------------------- constants

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


constant = primitive("constant", lambda name, type: CONSTANT_ARRAYS[name],
                     lambda ts, p: p["type"], differentiable=False, zero_tangent=True)


def constant_source(value) -> str:
    """Python source for a constant the builder folded (floats keep a decimal point)."""
    if isinstance(value, float):
        if math.isinf(value):
            return "np.inf" if value > 0 else "-np.inf"
        if math.isnan(value):
            return "np.nan"
        return repr(value)
    return repr(value)


# ``jitgrad.stop_gradient(x)``: x in value, no rule (so no gradient passes).
stop_gradient = primitive("stop_gradient", lambda x: x,
                          lambda ts, p: Type("f", ts[0].ndim) if ts[0].kind == "f" else ts[0],
                          differentiable=False, zero_tangent=True)
