"""Derivative rules written by the user: `custom_vjp` and `stop_gradient`.

`stop_gradient(x)` is the primitive ``stop_gradient``: the identity in value, with no rule, so
no gradient passes through it.

`custom_vjp` wraps a function ``f`` given a rule with ``.defvjp(fwd, bwd)``, as in JAX:
``fwd(*args) -> (value, residuals)`` and ``bwd(residuals, g) -> tuple of gradients`` (one per
argument, ``None`` for one that takes none). All three are plain functions jitgrad can read.
Where the differentiated code calls ``f`` (directly, in a loop, in a helper), the builder builds
``fwd``'s body inline (`frontend.custom_call`), and the reverse transform builds ``bwd``'s into
the adjoint (`transforms.custom_rule`).
"""

from __future__ import annotations

import functools

from jitgrad.lang import symbolic
from jitgrad.prims import primitives


def stop_gradient(x):
    """``x`` in value; no gradient flows through it (its derivative is zero)."""
    return primitives.PRIMITIVES["stop_gradient"](x)


symbolic.NUMPY[stop_gradient] = stop_gradient


class custom_vjp:  # lower case, as in JAX
    """A function with a derivative rule written by hand: ``@jitgrad.custom_vjp``, then
    ``f.defvjp(fwd, bwd)``. Called from Python it runs ``f``; jitgrad uses the rule."""

    jitgrad_custom_rule = True  # what the builder looks for (`frontend.custom_call`)

    def __init__(self, fn):
        self.fn = fn
        self.fwd = None
        self.bwd = None
        functools.update_wrapper(self, fn)

    def defvjp(self, fwd, bwd):
        """Give the rule: ``fwd(*args) -> (value, residuals)``, and ``bwd(residuals, g)``
        returning a tuple with one gradient per argument (``None`` for one that takes none).
        Returns the function."""
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __deepcopy__(self, memo):
        return self  # equations name their rule; a copied graph names the same one

    def __repr__(self) -> str:
        return f"<jitgrad.custom_vjp {self.__qualname__}>"


__all__ = ["custom_vjp", "stop_gradient"]
