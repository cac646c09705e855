"""Derivative rules written by the user: `custom_vjp` and `stop_gradient`.

`stop_gradient(x)` is the primitive ``stop_gradient``: the identity in value, with no rule, so
no gradient passes through it.

`custom_vjp` wraps a function ``f`` given a rule with ``.defvjp(fwd, bwd)``, as in JAX:
``fwd(*args) -> (value, residuals)`` and ``bwd(residuals, g) -> tuple of gradients`` (one per
argument, ``None`` for one that takes none). All three are plain functions jitgrad can read.
Where the differentiated code calls ``f`` (directly, in a loop, in a helper), the builder
(`build_call`) builds ``fwd``'s body inline, as it builds any called function, and records one
equation ``custom_vjp<n>(*args, value, *residuals)`` whose value is ``value``. Its rule
(`reverse_custom`, called by the reverse transform) builds ``bwd``'s body inline into the
adjoint, on the residuals (forward values, saved like any other the adjoint reads) and the
result's adjoint, and adds each returned gradient into its argument's adjoint. So ``f``'s own
body is never differentiated, and the generated source shows ``fwd`` and ``bwd`` at their lines.
"""

from __future__ import annotations

import functools

from jitgrad.core.errors import JitgradError, UnsupportedError
from jitgrad.core.types import Type
from jitgrad.frontend.parse import FunctionSource, unwrap
from jitgrad.lang import symbolic
from jitgrad.prims import primitives
from jitgrad.prims.rules import defvjp


def _identity_emit(a, p, t):
    # An array result is a new array (`.copy()`): no alias for an in-place write to reach.
    return f"{a[0]}.copy()" if t[0].ndim else a[0]


primitives.primitive("stop_gradient", lambda x: x, lambda ts, p: Type("f", ts[0].ndim)
            if ts[0].kind == "f" else ts[0], _identity_emit, differentiable=False)


def stop_gradient(x):
    """``x`` in value; no gradient flows through it (its derivative is zero)."""
    return primitives.PRIMITIVES["stop_gradient"](x)


symbolic.NUMPY[stop_gradient] = stop_gradient


# ----------------------------------------------------------------------------- custom_vjp

_MAX_RESIDUALS = 64


def _custom_primitive(n_args: int) -> str:
    """The primitive for a rule of ``n_args`` arguments: inputs ``(*args, value,
    *residuals)``, value ``value``; each argument has a rule (applied by `reverse_custom`, all
    at once), the value and the residuals none."""
    name = f"custom_vjp{n_args}"
    if name not in primitives.PRIMITIVES:
        primitives.primitive(name, lambda *ins, fn, n_args: ins[n_args],
                    lambda ts, p: ts[p["n_args"]],
                    lambda a, p, t: _identity_emit(a[p["n_args"]:], p, t[p["n_args"]:]))
        primitives.PRIMITIVES[name].reverse = reverse_custom
        defvjp(name, *([_applied_by_reverse_custom] * n_args
                       + [None] * (1 + _MAX_RESIDUALS)))
    return name


def _applied_by_reverse_custom(g, ans, *ins, **params):
    raise JitgradError("a custom_vjp rule is applied by jitgrad.custom.reverse_custom "
                       "(the tape does not run custom rules)")


class custom_vjp:  # lower case, as in JAX
    """A function with a derivative rule written by hand: ``@jitgrad.custom_vjp``, then
    ``f.defvjp(fwd, bwd)``. Called from Python it runs ``f``; jitgrad uses the rule."""

    def __init__(self, fn):
        self.fn = fn
        self.fwd = None
        self.bwd = None
        functools.update_wrapper(self, fn)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __deepcopy__(self, memo):
        return self  # equations name their rule; a copied graph names the same one

    def __repr__(self) -> str:
        return f"<jitgrad.custom_vjp {self.__qualname__}>"

    # -- called from build.Builder.call ---------------------------------------------------

    def build_call(self, builder, args, kwargs, node):
        """Build a call in the user's code: ``fwd`` inline, then the rule's equation."""
        if self.fwd is None:
            raise UnsupportedError(f"the custom_vjp function {self.__qualname__} has no rule: "
                                   "call .defvjp(fwd, bwd) first", builder.loc(node))
        if kwargs:
            raise UnsupportedError("keyword arguments to a custom_vjp function",
                                   builder.loc(node))
        for a in args:
            if not isinstance(a, (symbolic.Sym, int, float, bool)):
                raise UnsupportedError("a custom_vjp function takes numbers and arrays",
                                       builder.loc(node))
        out = builder.inline(unwrap(self.fwd), list(args), {}, node)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise UnsupportedError(f"{self.fwd.__qualname__} must return (value, residuals)",
                                   builder.loc(node))
        value, residuals = out
        residuals = residuals if isinstance(residuals, tuple) else (residuals,)
        if isinstance(value, tuple) or value is None:
            raise UnsupportedError("a custom_vjp function returns one number or array",
                                   builder.loc(node))
        if len(residuals) > _MAX_RESIDUALS or any(
                not isinstance(r, (symbolic.Sym, int, float, bool))
                for r in residuals):
            raise UnsupportedError("residuals must be a tuple of numbers and arrays",
                                   builder.loc(node))
        if not isinstance(value, symbolic.Sym):
            value = float(value)
        if not any(isinstance(a, symbolic.Sym) for a in (*args, value, *residuals)):
            return value  # all known while building: nothing to differentiate
        name = _custom_primitive(len(args))
        builder.gb.loc = builder.loc(node)
        return primitives.PRIMITIVES[name](*args, value, *residuals, fn=self, n_args=len(args))


def reverse_custom(rev, e, g) -> None:
    """The adjoint of one custom_vjp equation: ``bwd(residuals, g)`` built inline into the
    adjoint; each gradient it returns is added into its argument's adjoint."""
    from jitgrad.frontend.build import (
        Builder,  # build imports this module's table entries at call time
    )

    rule: custom_vjp = e.params["fn"]
    n = e.params["n_args"]
    args = e.ins[:n]
    if not any(rev.active(a) for a in args):
        return
    residuals = tuple(rev.value(a) for a in e.ins[n + 1:])
    src = FunctionSource.of(rule.bwd)
    builder = Builder(src, rev.gb)
    if len(builder.param_names()) != 2:
        raise UnsupportedError(f"{src.qualname} must take (residuals, g)", src.loc(src.node))
    saved_loc = rev.gb.loc
    try:
        with symbolic.building(rev.gb):
            builder.bind_params([residuals, g])
            grads = builder.run_body()
    except JitgradError as err:
        raise err.with_during(f"building {src.qualname}, the rule of {rule.__qualname__}")
    finally:
        rev.gb.loc = saved_loc
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != n:
        raise UnsupportedError(f"{src.qualname} returns {len(grads)} gradients for "
                               f"{rule.__qualname__}'s {n} arguments", src.loc(src.node))
    for a, c in zip(args, grads):
        if c is None or not rev.active(a):
            continue
        rev.acc(a, rev.unbroadcast(c, a, e))


__all__ = ["custom_vjp", "stop_gradient"]
