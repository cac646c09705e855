"""The reverse rule of a `custom_vjp` equation (a primitive with ``custom_rule=True``).

``bwd(residuals, g)`` is built inline into the adjoint, on the residuals (forward values,
saved like any other the adjoint reads; a tuple, a namedtuple or one value, as ``fwd``
returned them) and the result's adjoint; each gradient it returns is
added into its argument's adjoint. So the function's own body is never differentiated, and
the generated source shows ``fwd`` and ``bwd`` at their lines.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import JitgradError, UnsupportedError
from jitgrad.frontend.build import Builder
from jitgrad.frontend.custom_call import flatten, unflatten
from jitgrad.frontend.parse import FunctionSource
from jitgrad.lang import symbolic
from jitgrad.transforms.reverse_context import AdjointWriter


def reverse_custom(adjoints: AdjointWriter, e, g) -> None:
    """The adjoint of one custom_vjp equation ``e`` given its result's adjoint ``g``, added
    into the reverse transform's adjoints through ``adjoints``."""
    rule = e.params["fn"]
    n = e.params["n_args"]
    args = e.ins[:n]
    if not any(adjoints.is_active(a) for a in args):
        return
    tree = e.params.get("tree")
    if tree is not None:  # trees of arguments or a tree value (`custom_call._tree_call`)
        _, value_tree, res_tree, n_res, j = tree
        residuals = unflatten(res_tree, iter([adjoints.value(a)
                                              for a in e.ins[n + 1:n + 1 + n_res]]))
        values = e.ins[n + 1 + n_res:]
        g = unflatten(value_tree, iter([g if k == j else _zeros(adjoints.value(v))
                                        for k, v in enumerate(values)]))
    else:
        residuals = tuple(adjoints.value(a) for a in e.ins[n + 1:])
        packed = e.params.get("packed", tuple)  # as ``fwd`` returned them
        residuals = residuals[0] if packed is None else residuals if packed is tuple \
            else packed(*residuals)
    src = FunctionSource.of(rule.bwd)
    builder = Builder(src, adjoints.graph)
    if len(builder.param_names()) != 2:
        raise UnsupportedError(f"{src.qualname} must take (residuals, g)", src.loc(src.node))
    saved_loc = adjoints.graph.loc
    try:
        with symbolic.building(adjoints.graph):
            builder.bind_params([residuals, g])
            grads = builder.run_body()
    except JitgradError as err:
        raise err.with_during(f"building {src.qualname}, the rule of {rule.__qualname__}")
    finally:
        adjoints.graph.loc = saved_loc
    if not isinstance(grads, tuple):
        grads = (grads,)
    if tree is not None:  # one gradient tree per argument: its leaves, in order
        if len(grads) != len(tree[0]):
            raise UnsupportedError(f"{src.qualname} returns {len(grads)} gradients for "
                                   f"{rule.__qualname__}'s {len(tree[0])} arguments",
                                   src.loc(src.node))
        flat = []
        for c, (structure, count) in zip(grads, tree[0]):
            leaves = [None] * count if c is None else flatten(c)[0]
            if len(leaves) != count:
                raise UnsupportedError(f"{src.qualname} returns a gradient of another "
                                       f"structure than its argument's", src.loc(src.node))
            flat += leaves
        grads = tuple(flat)
    if len(grads) != n:
        raise UnsupportedError(f"{src.qualname} returns {len(grads)} gradients for "
                               f"{rule.__qualname__}'s {n} arguments", src.loc(src.node))
    for a, c in zip(args, grads):
        if c is None or not adjoints.is_active(a):
            continue
        adjoints.add(a, c, e)


def _zeros(v):
    """Zeros of the value ``v`` (an array's shape, or 0.0): the adjoint of a value leaf whose
    own equation is not the one being reversed."""
    return symbolic.NUMPY[np.zeros_like](v) if getattr(v, "ndim", 0) else 0.0
