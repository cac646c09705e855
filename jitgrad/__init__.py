"""jitgrad: reverse-mode gradients of plain NumPy/loop Python, emitted as readable source and
compiled with numba.njit.

    import jitgrad as jg

    @jg.grad
    def f(x):
        return np.square(x)

    f(3.0)  # 6.0
"""

from jitgrad import inside as _inside
from jitgrad.api import GradFunction, check_grad, grad, show, value_and_grad
from jitgrad.core.errors import (
    JitgradError,
    MissingDependencyError,
    RecompileWarning,
    ShapeError,
    SignatureError,
    UnsupportedError,
)
from jitgrad.custom import custom_vjp, stop_gradient
from jitgrad.frontend import autograd_names as _autograd_names
from jitgrad.jvp import hessian, hvp, jvp
from jitgrad.vjp import jacobian, vjp
from jitgrad.vmap import vmap

__all__ = [
           "GradFunction",
           "JitgradError",
           "MissingDependencyError",
           "RecompileWarning",
           "ShapeError",
           "SignatureError",
           "UnsupportedError",
           "check_grad",
           "custom_vjp",
           "grad",
           "hessian",
           "hvp",
           "jacobian",
           "jvp",
           "show",
           "stop_gradient",
           "value_and_grad",
           "vjp",
           "vmap",
]
__version__ = "0.1.0"

# The transforms a differentiated function may make in its body (``jitgrad.grad(g)(x)``): the
# frontend calls them while building (their arguments are known then) and grafts the result's
# trace into the graph (`frontend.custom_call.build_transform_call`).
for _factory in (grad, value_and_grad, jacobian, hessian, hvp):
    _factory.jitgrad_factory = True
del _factory
# jvp(f, primals, tangents) and vjp(f, x) called inside a differentiated function: built as
# the transforms `inside` makes (`frontend.transform_calls`)
jvp.jitgrad_inside = ("jvp", _inside.JvpOf)
vjp.jitgrad_inside = ("vjp", _inside.pullback)


def _as_autograds(name, transform):
    """``transform`` called as autograd's of the same name: ``(fun, argnum=0)``."""
    def made(fun, argnum=0):
        g = transform(fun, argnum)
        g.autograd_name = name  # its refusals say whose semantics differ
        g.one_entry = name in ("grad", "value_and_grad")  # of a one-entry array too, as autograd
        if name == "elementwise_grad":  # autograd's: the vjp of ones, the grad of the sum
            g.one_entry = "sum"
        return g
    made.jitgrad_factory = True
    return made


# autograd's transforms inside a differentiated function are jitgrad's (`autograd_names`)
_autograd_names.TRANSFORMS.update({name: _as_autograds(name, transform) for name, transform in (
    ("grad", grad), ("value_and_grad", value_and_grad), ("jacobian", jacobian),
    ("hessian", hessian), ("elementwise_grad", grad))})
