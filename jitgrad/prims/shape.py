"""Shapes and data movement: ``transpose``, ``reshape``, ``expand_dims``, ``roll``, the
broadcasting pair ``broadcast_like``/``sum_to_like``, the reads of a shape (``shape_dim``,
``size``, ``same_size``, ``unpack_count``), and ``raise_error``, the user's own ``raise``.

Every rule here is linear: the adjoint moves ``g`` back the way the data came (the inverse
permutation, the input's shape, the opposite shift), and the tangent moves ``t`` the same way
as the value. A ``like`` input is read for its shape alone (``shape_only``) and takes no
gradient. The reads of a shape are integers: no derivative, a zero tangent.
"""

from __future__ import annotations

import builtins

import numpy as np

from jitgrad.core.types import Type
from jitgrad.prims.primitive import defjvp, defvjp, primitive, same_type

# ----------------------------------------------------------------------------- views


def _transpose_impl(x, axes=None):
    return np.transpose(x, axes)


def _reshape_type(ts, p):
    return Type(ts[0].kind, len(ts) - 1)


transpose = primitive("transpose", _transpose_impl, same_type, view=True)
reshape = primitive("reshape", lambda x, *dims: np.reshape(x, tuple(int(d) for d in dims)),
                    _reshape_type, view=True, view_if_contiguous=True, sizes_from=1)
reshape_like = primitive("reshape_like", lambda x, like: np.reshape(x, np.shape(like)),
                         lambda ts, p: Type(ts[0].kind, ts[1].ndim), view=True,
                         view_if_contiguous=True, shape_only={1}, same_shape_as=1)
expand_dims = primitive("expand_dims", lambda x, axis: np.expand_dims(x, axis),
                        lambda ts, p: Type(ts[0].kind, ts[0].ndim + 1), view=True)


def _transpose_vjp(g, ans, x, axes=None):
    if axes is None:
        return transpose(g)
    return transpose(g, axes=tuple(int(i) for i in np.argsort(axes)))


defvjp("transpose", _transpose_vjp)
defvjp("reshape", lambda g, ans, x, *dims: reshape_like(g, x), *([None] * 8))
defvjp("reshape_like", lambda g, ans, x, like: reshape_like(g, x), None)
defvjp("expand_dims", lambda g, ans, x, axis: reshape_like(g, x))
defjvp("transpose", lambda t, ans, x, axes=None: transpose(t) if axes is None
       else transpose(t, axes=axes))
defjvp("reshape", lambda t, ans, x, *dims: reshape(t, *dims), *([None] * 8))
defjvp("reshape_like", lambda t, ans, x, like: reshape_like(t, like), None)
defjvp("expand_dims", lambda t, ans, x, axis: expand_dims(t, axis=axis))

# ----------------------------------------------------------------------------- broadcasting


def _sum_to(g, shape):
    """Sum ``g`` down to ``shape`` (undo NumPy broadcasting)."""
    g = np.asarray(g)
    lead = g.ndim - len(shape)
    if lead > 0:
        g = g.sum(axis=tuple(range(lead)))
    elif lead < 0:  # a (1, n) value written into a row: its leading axes have size 1
        g = g.reshape((1,) * -lead + g.shape)
    axes = tuple(k for k, n in enumerate(shape) if n == 1 and g.shape[k] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g if shape else float(g)


# ``g`` broadcast to the shape of ``like`` (a read-only view), and its adjoint: ``g`` summed
# down to the shape of ``like`` (which unbroadcasts the share of an elementwise rule).
broadcast_like = primitive(
    "broadcast_like", lambda g, like: np.broadcast_to(g, np.shape(like)),
    lambda ts, p: Type(ts[0].kind, ts[1].ndim), read_only_view=True, shape_only={1},
    broadcasts=True, same_shape_as=1)
sum_to_like = primitive(
    "sum_to_like", lambda g, like: _sum_to(g, np.shape(like)),
    lambda ts, p: Type(ts[0].kind, ts[1].ndim), may_return_input=True, shape_only={1},
    same_shape_as=1, sums=True)

defvjp("broadcast_like", lambda g, ans, x, like: sum_to_like(g, x), None)
defvjp("sum_to_like", lambda g, ans, x, like: broadcast_like(g, x), None)
defjvp("broadcast_like", lambda t, ans, g, like: broadcast_like(t, like), None)
defjvp("sum_to_like", lambda t, ans, g, like: sum_to_like(t, like), None)

# ----------------------------------------------------------------------------- moves

roll = primitive("roll", lambda x, shift: np.roll(x, int(shift)), same_type)
defvjp("roll", lambda g, ans, x, shift: roll(g, -shift), None)
defjvp("roll", lambda t, ans, x, shift: roll(t, shift), None)

# ----------------------------------------------------------------------------- sizes

shape_dim = primitive("shape_dim", lambda x, axis: np.shape(x)[axis],
                      lambda ts, p: Type("i", 0), differentiable=False, zero_tangent=True,
                      shape_only={0}, nonnegative=True, reads_size=True, recomputable=True)
# The check of a size assumption (`symbolic.GraphBuilder.assume_same_sizes`): no result in
# generated code; its impl says whether it holds (`pipeline.sizes_hold`).
same_size = primitive("same_size", lambda n, m: n == m, lambda ts, p: None,
                      differentiable=False, no_tangent=True, checks_sizes=True)
# The check that an argument axis has at least so many entries (a slice ``x[:, 0:1]`` of it
# then has its stop's count: `size_assumptions.SizeAssumptions.assume_at_least`), as above.
size_at_least = primitive("size_at_least", lambda n, m: n >= m, lambda ts, p: None,
                          differentiable=False, no_tangent=True, checks_sizes=True)
size = primitive("size", np.size, lambda ts, p: Type("i", 0), differentiable=False,
                 zero_tangent=True, shape_only={0}, nonnegative=True, reads_size=True)



def _memory_impl(x, attr, axis=None):
    x = np.asarray(x)
    if attr == "strides":
        return x.strides[axis]
    if attr in ("c_contiguous", "f_contiguous"):
        return bool(getattr(x.flags, attr))
    return getattr(x, attr)


# Facts of an array's memory, read at run time (the width of its floats is Numba's to choose,
# not a part of its type): ``x.itemsize``, ``x.nbytes``, ``x.strides[axis]``,
# ``x.flags.c_contiguous`` and ``.f_contiguous``. Piecewise constant: no derivative.
memory = primitive("memory", _memory_impl,
                   lambda ts, p: Type("b" if p["attr"].endswith("contiguous") else "i", 0),
                   differentiable=False, zero_tangent=True)


def _unpack_count_impl(n, k):
    if int(n) != int(k):
        raise ValueError(f"cannot unpack an array of {int(n)} rows into {int(k)} names")
    return int(k)


# ``a, b, c = x``: the number of names, once the run time check of x's length passed (the
# reads of the rows are indexed from it, so the check stays in the code).
unpack_count = primitive("unpack_count", _unpack_count_impl, lambda ts, p: Type("i", 0),
                         differentiable=False)


SQUEEZED_SIZE_MESSAGE = (
    "jitgrad: np.squeeze(x) without axis=: an axis of x whose size jitgrad's build does not know is "
    "taken as not 1, and here it is 1 (the result's rank would change); name the axes to drop "
    "(np.squeeze(x, axis=k)) or index the entry")


def _squeezed_size_impl(n):
    if int(n) == 1:
        raise ValueError(SQUEEZED_SIZE_MESSAGE)
    return int(n)


# ``np.squeeze(x)`` without axis=: the size of an axis known only at run time, kept (the rank
# of the result is known while building), once checked not to be 1 (the reshape reads it, so
# the check stays in the code).
squeezed_size = primitive("squeezed_size", _squeezed_size_impl, lambda ts, p: Type("i", 0),
                          differentiable=False)


def _carried_size_impl(n, m, *, name):
    if int(n) != int(m):
        raise ValueError(CARRIED_SIZE_MESSAGE.format(name=name))


CARRIED_SIZE_MESSAGE = (
    "`{name}`, an array the loop carries, changed shape from one iteration to the next: "
    "jitgrad's gradient keeps one array of its shape for its adjoint. Keep its shape (allocate "
    "it before the loop at its largest size and count how much of it is in use), or give the "
    "new value another name")

# A float array a loop carries keeps its size along an axis from one iteration to the next:
# the check at the end of an iteration (`build_loops.check_carried_shapes`), where the build
# cannot tell (``h = h[1:]`` would else leave the adjoint reading past its array). No result;
# never dropped (``effects``).
same_carried_size = primitive("same_carried_size", _carried_size_impl, lambda ts, p: None,
                              differentiable=False, no_tangent=True, effects=True, raises=True)


def _raise_impl(*, exc, msg):
    error = getattr(builtins, exc)
    raise error() if msg is None else error(msg)


# ``raise ValueError("msg")`` (and a failed ``assert``) where the user's code raises: no inputs,
# no result; ``exc`` names a builtin exception class, ``msg`` is a constant string or None, as
# Numba raises them. Never dropped or moved (``effects``).
raise_error = primitive("raise_error", _raise_impl, lambda ts, p: None, differentiable=False,
                        no_tangent=True, effects=True, raises=True)
