"""The table of supported operations: every primitive, its rules, one import.

Each primitive is declared once, in its family module, with its derivative rules beside it:
`elementwise` (ufuncs, operators, ``where``, ``cast``), `complex_special` (special functions
of a complex argument as their real and imaginary parts), `reductions` (sums, extremes, products,
running sums), `linalg` (``matmul`` and ``np.linalg``), `decompositions` (eigh, eig, svd, qr,
``pinv``, ``sqrtm``), `complex_decompositions` (svd, eigh, eig of a complex matrix's parts), `fft` (the discrete Fourier transform), `shape` (views, broadcasting, sizes),
`indexing` (reads, writes, rows by index) and `alloc` (new arrays, constants). What a row is,
and the rule tables the declarations fill, are `primitive`. This module imports the families
and re-exports their public names, so the rest of jitgrad reads one table::

    from jitgrad.prims import primitives
    primitives.PRIMITIVES["exp"], primitives.RULES["exp"], primitives.tie_share(x, y)

Importing it is what guarantees every family (and so every row and rule) is registered. How a
primitive is written in generated Numba source is the backend's (`backend.numba.lowering`).
"""

from __future__ import annotations

from jitgrad.prims import (  # noqa: F401 - their rows and rules
    complex_decompositions,
    complex_special,
    decompositions,
)
from jitgrad.prims.alloc import (
    CONSTANT_ARRAYS,
    arange,
    concatenate,
    constant,
    constant_array_name,
    constant_source,
    copy,
    empty,
    eye,
    full,
    ones,
    ones_like,
    stack,
    stack_kind,
    stop_gradient,
    zero_like,
    zeros,
    zeros_like,
)
from jitgrad.prims.elementwise import TRANSCENDENTAL, neg, tie_share
from jitgrad.prims.fft import dft
from jitgrad.prims.implicit import implicit_root, root_slope  # noqa: F401 - its rows and rules
from jitgrad.prims.indexing import (
    add_at,
    getitem,
    index_positions,
    index_source,
    index_value,
    setitem,
    take,
    take_add,
)
from jitgrad.prims.linalg import cholesky, det, inv, logabsdet, matmul, outer, signdet, solve
from jitgrad.prims.primitive import (
    JVPS,
    JVPS_ALL,
    MAX_STACK,
    PRIMITIVES,
    RULES,
    Primitive,
    defjvp,
    defjvp_all,
    defvjp,
    no_tangent_rule,
    primitive,
    same_type,
    unbroadcast,
    zero_tangent,
)
from jitgrad.prims.reductions import (
    argmax,
    argmin,
    argsort,
    cumprod,
    cumprod_grad,
    cumprod_jvp,
    cumsum,
    cumsum_axis,
    prod_axis,
    prod_others,
    prod_others_axis,
    prod_others_jvp,
    reduce_max,
    reduce_min,
    reduce_prod,
    reduce_sum,
    spread,
    sum_all,
)
from jitgrad.prims.shape import (
    broadcast_like,
    expand_dims,
    reshape,
    reshape_like,
    roll,
    same_size,
    shape_dim,
    size,
    size_at_least,
    sum_to_like,
    transpose,
    unpack_count,
)

__all__ = [
    "CONSTANT_ARRAYS", "JVPS", "JVPS_ALL", "MAX_STACK", "PRIMITIVES", "RULES", "TRANSCENDENTAL",
    "Primitive",
    "add_at", "arange", "argmax", "argmin", "argsort", "broadcast_like", "cholesky",
    "concatenate", "constant", "constant_array_name", "constant_source", "copy",
    "cumprod", "cumprod_grad", "cumprod_jvp", "cumsum", "cumsum_axis", "defjvp", "defjvp_all",
    "defvjp", "det", "dft", "empty", "expand_dims", "eye", "full", "getitem", "index_positions", "index_source",
    "index_value", "inv", "logabsdet", "matmul", "neg", "no_tangent_rule", "ones", "ones_like",
    "outer", "primitive", "prod_axis", "prod_others", "prod_others_axis", "prod_others_jvp",
    "reduce_max", "reduce_min", "reduce_prod", "reduce_sum", "reshape", "reshape_like", "roll",
    "same_size", "same_type", "setitem", "shape_dim", "signdet", "size", "size_at_least", "solve", "spread",
    "stack", "stack_kind", "stop_gradient", "sum_all", "sum_to_like", "take", "take_add",
    "tie_share", "transpose", "unbroadcast", "unpack_count", "zero_like", "zero_tangent",
    "zeros", "zeros_like",
]
