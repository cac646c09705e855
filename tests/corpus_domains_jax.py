"""JAX transcriptions of the NumPy-style functions of ``corpus_domains_fns`` (the cases with
``jax=True`` in ``corpus_domains.py``).

Those functions are pure whole-array NumPy (no in-place writes, no Python ``min``/``max`` or
``if`` on array values), so their transcription to ``jax.numpy`` is the same source with ``np``
meaning ``jax.numpy``, ``math`` JAX's scalar functions and ``scipy.special``/``scipy.stats``
``jax.scipy``'s: every function of the module is rebuilt from its code object over a copy of
the module's globals where those names are rebound (helpers too, so a call reaches the rebuilt
helper). ``jax_value_and_grad(case, args)`` checks that the transcription computes the plain
function's value before its gradient is used.
"""

from __future__ import annotations

import functools
import types

import corpus_domains_fns as F
import numpy as np


@functools.cache
def _module():
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.special
    import jax.scipy.stats

    math_ns = types.SimpleNamespace(
        exp=jnp.exp, log=jnp.log, sqrt=jnp.sqrt, sin=jnp.sin, cos=jnp.cos, tanh=jnp.tanh,
        atan2=jnp.arctan2, acos=jnp.arccos, pi=np.pi, e=np.e, lgamma=jax.scipy.special.gammaln,
        log1p=jnp.log1p, expm1=jnp.expm1, radians=jnp.radians)
    scipy_ns = types.SimpleNamespace(special=jax.scipy.special, stats=jax.scipy.stats)
    g = dict(vars(F))
    g.update(np=jnp, math=math_ns, scipy=scipy_ns)
    for name, obj in vars(F).items():
        if isinstance(obj, types.FunctionType) and obj.__module__ == F.__name__:
            fn = types.FunctionType(obj.__code__, g, name, obj.__defaults__, obj.__closure__)
            fn.__kwdefaults__ = obj.__kwdefaults__
            g[name] = fn
    return jax, jnp, g


def jax_value_and_grad(case, args):
    """JAX's value and gradients (a tuple, one per ``case.wrt``) at ``args``."""
    jax, jnp, g = _module()
    fn = g[case.name]
    jargs = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a
                  for a in args)
    static = tuple(i for i, a in enumerate(args) if not isinstance(a, (np.ndarray, float, dict)))
    vg = jax.jit(jax.value_and_grad(fn, argnums=case.wrt), static_argnums=static)
    value, grads = vg(*jargs)
    return float(value), tuple(np.asarray(gr) if isinstance(a, np.ndarray) else float(gr)
                               for gr, a in zip(grads, (args[k] for k in case.wrt)))
