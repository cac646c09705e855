"""``jitgrad.jvp`` and ``jitgrad.vjp`` called inside a differentiated function: the transforms
the builder grafts (JAX's Autodiff Cookbook writes its Hessian-vector products, ``vgrad`` and
Jacobian-matrix products this way).

Takes: the function the call names (a plain function, a lifted local one, or a transform) and,
for ``jvp``, which of its arguments have a tangent. The builder (`frontend.transform_calls`)
reads the call; this module gives it transforms that trace themselves (``jitgrad_trace``), so
the call is grafted as ``jitgrad.grad(g)(x)`` is (`frontend.custom_call.build_transform_call`)
and the caller's derivative flows through them:

* `JvpOf`: called as ``(*primals, *tangents of the seeded)``, it gives ``(f(*primals),
  tangent)``: ``f``'s forward-mode trace, as ``jitgrad.jvp`` computes it from Python.
* `pullback`: the gradient of ``np.sum(f(*primals) * cotangent)`` with respect to the
  primals, a function written here: what ``vjp_fn(cotangent)`` returns for a function of one
  result (the transposed Jacobian times the cotangent).

Guarantees: the value and derivatives are those ``jitgrad.jvp`` / ``jitgrad.vjp`` give from
Python; a tangent of another type than its primal, a function of several results or a tree
argument is refused by name, never read as something else.
"""

from __future__ import annotations

import linecache

import numpy as np

from jitgrad import compose, pipeline
from jitgrad.api import grad
from jitgrad.core.errors import SignatureError, UnsupportedError


class JvpOf:
    """``jvp(fn, primals, tangents)`` with tangents for the arguments ``seeded``, as a
    transform: called with the primals and then those tangents, it returns ``(value,
    tangent)``."""

    jitgrad_transform = "jvp"

    def __init__(self, fn, seeded: tuple):
        self.fn, self.seeded = fn, tuple(seeded)
        self.n = len(compose.param_names(fn))
        self.param_names = [*compose.param_names(fn), *(f"_tangent{k}" for k in seeded)]

    def __call__(self, *args):
        raise UnsupportedError(f"{self!r} is called inside a transformed function only")

    def jitgrad_trace(self, types: tuple, args) -> compose.Traced:
        primal_types, tangent_types = types[:self.n], types[self.n:]
        for k, tt in zip(self.seeded, tangent_types):
            if primal_types[k].kind != "f":
                raise SignatureError(f"jvp of {compose.qualname(self.fn)}: a tangent for its "
                                     f"argument {k}, of type {primal_types[k]}; only float "
                                     "arguments take one (pass None)")
            if tt != primal_types[k]:
                raise SignatureError(f"jvp of {compose.qualname(self.fn)}: a tangent of type "
                                     f"{tt} for the argument {k} of type {primal_types[k]}")
        t = compose.trace(self.fn, tuple(primal_types), None)
        if len(t.params) != self.n:
            raise UnsupportedError(f"jvp of {compose.qualname(self.fn)} inside a differentiated "
                                   "function with a tuple, list or dict argument: pass its "
                                   "arrays as arguments of their own")
        body, tparams, touts = pipeline.forward(t.params, t.body, t.returns,
                                                [t.params[k] for k in self.seeded],
                                                t.fn_ir.namer)
        r = len(t.returns)
        return compose.Traced(list(t.params) + tparams, body, [*t.returns, *touts], t.fn_ir,
                              lambda v: (t.pack(v[:r]), t.pack(v[r:])))

    def __repr__(self) -> str:
        return f"<jitgrad.jvp of {self.fn!r} inside a differentiated function>"


_PULLBACK = """\
def vjp_of_{name}({params}, cotangent):
    return np.sum(fn({params}) * cotangent)
"""
_PULLBACKS: dict = {}


def pullback(fn, n_args: int, wrt: tuple):
    """The gradient, with respect to the arguments ``wrt``, of ``np.sum(fn(*args) *
    cotangent)`` (its last argument): ``vjp_fn(cotangent)`` of ``vjp(fn, *args)``. The written
    function is made once per (fn, n_args), its text in linecache."""
    made = _PULLBACKS.get((fn, n_args))
    if made is None:
        params = ", ".join(f"a{j}" for j in range(n_args))
        name = "".join(c if c.isalnum() else "_" for c in getattr(fn, "__name__", "f"))
        text = _PULLBACK.format(name=name, params=params)
        filename = f"<jitgrad vjp of {name}: {len(_PULLBACKS)}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"np": np, "fn": fn}
        exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own template
        made = _PULLBACKS[(fn, n_args)] = namespace[f"vjp_of_{name}"]
    return grad(made, wrt=tuple(wrt))


__all__ = ["JvpOf", "pullback"]
