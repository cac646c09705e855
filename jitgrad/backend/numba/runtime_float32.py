"""The namespace a float32 build's generated code calls as ``_rt.<name>`` (``import
jitgrad.backend.numba.runtime_float32 as _rt``): `runtime`'s, but for the helpers that make a
float array of no argument's dtype, which make float32 ones here.

A gradient whose float array arguments are all float32 is built once as float32
(`Settings.float32`, `jitgrad.specialisations`): the arguments are not converted, and its
generated source is the float64 build's but for this module's name in its import line. So every
allocation the source writes with no dtype (``_rt.empty(shape)``, ``zeros``, ``ones``, ``full``,
``eye``, ``outer``) is float32 here, float64 there; an integer or bool one names its dtype and is
the same in both. Numbers stay float64 (Numba computes a float32 element times a float64 as
float64); a float32 array stores them rounded. Every other name is `runtime`'s own, bound here
by name when this module is imported (and a ufunc made on first use by `runtime.bind_ufuncs`,
which binds it in both): its helpers follow their operands' dtypes (`runtime_alloc.float_dtype`),
and the products call single-precision BLAS for float32 operands (`runtime_linalg`).
"""

from __future__ import annotations

from jitgrad.backend.numba import runtime as _base
from jitgrad.backend.numba.runtime_alloc import empty32 as empty  # noqa: F401 - the namespace's
from jitgrad.backend.numba.runtime_alloc import eye32 as eye  # noqa: F401
from jitgrad.backend.numba.runtime_alloc import full32 as full  # noqa: F401
from jitgrad.backend.numba.runtime_alloc import ones32 as ones  # noqa: F401
from jitgrad.backend.numba.runtime_alloc import outer32 as outer  # noqa: F401
from jitgrad.backend.numba.runtime_alloc import zeros32 as zeros  # noqa: F401

# every other public name of `runtime`, bound here (the float32 allocations above kept)
globals().update({name: value for name, value in vars(_base).items()
                  if not name.startswith("_") and name not in globals()})
_base.NAMESPACES.append(globals())
