"""Values defined implicitly: a root ``x`` of ``f(x, theta) = 0`` found by a loop
(``scipy.optimize.brentq``, ``newton``, ``root_scalar``), differentiated by the implicit function theorem,
``dx/dtheta = -(df/dtheta) / (df/dx)`` at the root, not through the loop's iterations.

``implicit_root(root, fv, fx)`` is ``root`` in value. The builder (`frontend.build_solvers`)
computes ``fv = f(x, theta)`` and its slope ``fx = df/dx`` at ``x = stop_gradient(root)``, so
``fv`` carries exactly the derivative in ``theta``; the rule sends ``g`` to ``fv`` scaled by
``root_slope(fx, root) = -1 / fx``, and from there the rules of ``f`` take it to ``theta``.
Nothing flows to ``root`` (the loop) or to ``fx``. The tangent is ``-t_fv / fx``.

A second derivative would need the slope's own derivative in ``theta`` through the root,
which these rules do not give: ``root_slope`` has no rule, so differentiating a gradient
program that contains it (``root``, the loop's result, is active there) is refused, never
taken as zero.
"""

from __future__ import annotations

from jitgrad.core.errors import JitgradError, UnsupportedError
from jitgrad.prims.primitive import defjvp, defvjp, primitive, same_type

SECOND_DERIVATIVE = (
    "the second derivative of a root found by scipy.optimize (brentq, newton, root_scalar) is not implemented (its "
    "first derivative is the implicit function theorem's): take one derivative, or write the "
    "root as a fixed number of Newton steps from a start that does not depend on the "
    "differentiated arguments")

# As built, before `transforms.implicit` computes the slope: ``root_at(root, fv, xs)``.
root_at = primitive("root_at", lambda root, fv, xs: root, same_type)
implicit_root = primitive("implicit_root", lambda root, fv, fx: root, same_type)
root_slope = primitive("root_slope", lambda fx, root: -1.0 / fx, same_type)


def _second_derivative(*args, **kwargs):
    raise UnsupportedError(SECOND_DERIVATIVE)


def _slope_missing(*args, **kwargs):
    raise JitgradError("root_at is differentiated after transforms.implicit gives it its slope "
                       "(pipeline.build_graph runs it on every graph)")


defvjp("root_at", _slope_missing, _slope_missing, _slope_missing)
defjvp("root_at", _slope_missing, _slope_missing, _slope_missing)
defvjp("implicit_root", None, lambda g, ans, root, fv, fx: g * root_slope(fx, root), None)
defjvp("implicit_root", None, lambda t, ans, root, fv, fx: t * root_slope(fx, root), None)
defvjp("root_slope", _second_derivative, _second_derivative)
defjvp("root_slope", _second_derivative, _second_derivative)

__all__ = ["SECOND_DERIVATIVE", "implicit_root", "root_at", "root_slope"]
