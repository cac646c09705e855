"""``jitgrad.jvp(f, primals, tangents)`` and ``y, vjp_fn = jitgrad.vjp(f, *primals)`` called
inside a differentiated function (the Autodiff Cookbook's ``hvp``, ``vgrad``, ``loop_mjp``):
read here, built as transforms the api layer makes (the function's ``jitgrad_inside``
marker: ``("jvp", JvpOf)`` or ``("vjp", pullback)``, `jitgrad.inside`).

Takes: the builder and the call's arguments as it holds them. ``f`` is a function known while
building: a module-level function or transform, or one defined inside or a transform of one
(lifted as `local_transforms.lift` lifts it, the values it reads passed as arguments of
their own). The
primals and tangents are a tuple or list written in the call.

Guarantees: ``jvp`` gives ``(f(*primals), tangent)`` (a tangent of None or 0 is no tangent);
``vjp`` gives ``f(*primals)``, built inline, and a `VjpInside` that, called with a cotangent,
grafts the gradient of ``sum(f(*primals) * cotangent)`` and returns one entry per primal
(None for an integer or bool one), as ``jitgrad.vjp`` does. The caller's derivative flows
through both (their traces are grafted). Anything else (keywords, ``has_aux``, primals not
written as a tuple) is refused by name.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.frontend import local_transforms
from jitgrad.frontend.build_ast import LocalFunction, fn_name
from jitgrad.lang.symbolic import Sym


def is_inside_call(fn) -> bool:
    """Whether ``fn`` is ``jitgrad.jvp``/``jitgrad.vjp`` or a `VjpInside`."""
    return isinstance(getattr(fn, "jitgrad_inside", None), tuple) or isinstance(fn, VjpInside)


def build(builder, fn, args, kwargs, node):
    if isinstance(fn, VjpInside):
        return fn.build(builder, args, kwargs, node)
    kind, maker = fn.jitgrad_inside
    return (_jvp if kind == "jvp" else _vjp)(builder, maker, args, kwargs, node)


def _function(builder, f, node):
    """(the function to transform, the run-time values it closed over, in its parameters'
    order after its own)."""
    if isinstance(f, LocalFunction):
        lifted, closed = local_transforms.lift(f, node)
        return lifted, list(closed.values())
    if isinstance(f, local_transforms.LocalTransform):  # ``jvp(grad(inner), ...)``
        lifted, closed = local_transforms.lift(f.local, node)
        return f.made(lifted), list(closed.values())
    if isinstance(f, Sym) or not callable(f):
        raise UnsupportedError(f"jvp/vjp inside a differentiated function of {fn_name(f)}: "
                               "it takes a function (defined at module level or here)",
                               builder.loc(node))
    return f, []


def _is_zero(t) -> bool:
    return t is None or (not isinstance(t, Sym) and not hasattr(t, "shape") and t == 0)


def _jvp(builder, maker, args, kwargs, node):
    if kwargs or len(args) != 3 or not all(isinstance(a, (tuple, list)) for a in args[1:]):
        raise UnsupportedError("jvp(f, primals, tangents) inside a differentiated function: "
                               "primals and tangents as tuples written in the call, no keywords",
                               builder.loc(node))
    f, primals, tangents = args
    if len(primals) != len(tangents):
        raise UnsupportedError(f"jvp got {len(primals)} primals and {len(tangents)} tangents",
                               builder.loc(node))
    fn, closed = _function(builder, f, node)
    seeded = tuple(k for k, t in enumerate(tangents) if not _is_zero(t))
    made = maker(fn, seeded)
    value, tangent = builder.call(made, (*primals, *closed, *(tangents[k] for k in seeded)),
                                  {}, node)
    if not seeded:  # no tangent: zeros of the value's shape
        tangent = builder.call(np.zeros_like, (value,), {}, node) if isinstance(value, Sym) \
            else 0.0
    return value, tangent


def _vjp(builder, maker, args, kwargs, node):
    if kwargs or not args:
        raise UnsupportedError("vjp(f, *primals) inside a differentiated function takes no "
                               "keywords (has_aux=)", builder.loc(node))
    f, *primals = args
    fn, closed = _function(builder, f, node)
    value = builder.call(f, tuple(primals), {}, node)
    wrt = tuple(k for k, p in enumerate(primals) if _is_float(p))
    return value, VjpInside(maker, fn, tuple(primals), tuple(closed), wrt)


def _is_float(p) -> bool:
    if isinstance(p, Sym):
        return p.type.kind == "f"
    return isinstance(p, float) or getattr(getattr(p, "dtype", None), "kind", "") == "f"


class VjpInside:
    """The ``vjp_fn`` of a ``vjp`` called inside a differentiated function: called with a
    cotangent, the pullback (`jitgrad.inside.pullback`) grafted there."""

    def __init__(self, maker, fn, primals, closed, wrt):
        self.maker, self.fn, self.primals, self.closed, self.wrt = maker, fn, primals, closed, wrt
        self.__qualname__ = f"vjp_fn of {fn_name(fn)}"

    def __call__(self, *args, **kwargs):  # a function value; only the builder calls it
        raise TypeError(f"{self.__qualname__} is built by the builder")

    def build(self, builder, args, kwargs, node):
        if kwargs or len(args) != 1:
            raise UnsupportedError(f"{self.__qualname__} takes one cotangent, by position",
                                   builder.loc(node))
        n = len(self.primals) + len(self.closed)
        if not self.wrt:
            return (None,) * len(self.primals)
        made = self.maker(self.fn, n, self.wrt)
        grads = builder.call(made, (*self.primals, *self.closed, args[0]), {}, node)
        grads = grads if isinstance(grads, tuple) else (grads,)
        out = [None] * len(self.primals)
        for k, g in zip(self.wrt, grads):
            out[k] = g
        return tuple(out)
