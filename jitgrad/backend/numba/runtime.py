"""The namespace generated code calls as ``_rt.<name>`` (``import jitgrad.backend.numba.runtime
as _rt``): the helpers of the ``runtime_*`` modules, re-exported by name, nothing of its own but
`bind_ufuncs`.

Each helper lives in the module of what it is, which says what it takes and guarantees and why
the backend has it (in short: Numba compiles these once per machine, `compile.jit` with its disk
cache, where the NumPy forms they stand for compile slowly in every process or not at all):

* `runtime_reduce`: reductions along an axis and the adjoints of reductions and broadcasting;
* `runtime_elementwise`: the elementwise primitives on arrays (and the ufuncs made on first use);
* `runtime_linalg`: products and linear algebra (`USES_SCIPY`);
* `runtime_complex_linalg`: svd, eigh and eig of a complex matrix's parts;
* `runtime_fft`: the discrete Fourier transform (Numba does not compile ``np.fft``);
* `runtime_alloc`: new arrays (allocations, eye, arange, outer) and reshapes;
* `runtime_loops`: trip counts, high-water marks, growing stacks, size checks;
* `runtime_parallel`: a parallel loop's chunk count, partial results and thread settings;
* `runtime_index`: reads and writes through index arrays and masks, checked;
* `runtime_writes`: writes into a region of an array (`add_into`, `copy_into`).

Numbers that are the primitives' own (a derivative's loop, a scalar function) are not written in
the backend: the ``runtime_*`` modules compile the functions of `jitgrad.prims` (and the chunk
count of `core.chunking`) themselves. Nothing here imports the emitter or its tables.
"""

from __future__ import annotations

import re

from jitgrad.backend.numba import runtime_complex_linalg, runtime_linalg
from jitgrad.backend.numba.runtime_alloc import (  # noqa: F401 - re-exported
    arange,
    empty,
    entry_of,
    eye,
    full,
    ones,
    outer,
    reshape,
    zeros,
)
from jitgrad.backend.numba.runtime_complex_linalg import (  # noqa: F401 - re-exported
    ceig_values_im,
    ceig_values_re,
    ceig_vectors_im,
    ceig_vectors_re,
    ceigh_vectors_im,
    ceigh_vectors_re,
    ceigvalsh,
    csvd_u_im,
    csvd_u_re,
    csvd_vt_im,
    csvd_vt_re,
    csvdvals,
    inverse_square_gaps,
)
from jitgrad.backend.numba.runtime_elementwise import (  # noqa: F401 - re-exported
    UFUNC_SCALARS,
    abs,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    cbrt,
    ceil,
    copysign,
    cos,
    cosh,
    div,
    eq,
    exp,
    expm1,
    floor,
    floordiv,
    frexp_exponent,
    frexp_exponent_scalar,
    ge,
    gt,
    hypot,
    invert,
    isfinite,
    isinf,
    isnan,
    le,
    left_shift,
    log,
    log1p,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    lt,
    maximum,
    minimum,
    mod,
    mul,
    ne,
    neg,
    nextafter,
    pow,
    right_shift,
    rint,
    round_float32,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    sub,
    tan,
    tanh,
    tanh_scalar,
    tie_share,
    trunc,
    ufunc,
    where,
)
from jitgrad.backend.numba.runtime_fft import dft  # noqa: F401 - re-exported
from jitgrad.backend.numba.runtime_index import (  # noqa: F401 - re-exported
    along_positions,
    mask_positions,
    mask_rows,
    pair_positions,
    rows_at,
    same_shape,
    squeezed_size,
    strided_positions,
    take_add_rows,
    take_add_vector,
    unpack_count,
)
from jitgrad.backend.numba.runtime_linalg import (  # noqa: F401 - re-exported
    cholesky,
    cholesky_fails,
    companion,
    det,
    det_stack,
    dot,
    eig_values,
    eig_vectors,
    eigh_vectors,
    eigh_vectors_upper,
    eigvalsh,
    inv,
    inv_stack,
    inverse_gaps,
    link_routines,
    logabsdet,
    matmul,
    matrix_rank,
    pinv,
    qr_q,
    qr_r,
    signdet,
    solve,
    sqrtm,
    sqrtm_adjoint,
    svd_u,
    svd_vt,
    svdvals,
)
from jitgrad.backend.numba.runtime_loops import (  # noqa: F401 - re-exported
    broadcast_size,
    grow,
    larger,
    nonnegative,
    reserve,
    same_size,
    size_at_least,
    trip_count,
)
from jitgrad.backend.numba.runtime_parallel import (  # noqa: F401 - re-exported
    chunk_count,
    limit_threads,
    put_part,
    set_chunksize,
    set_threads,
)
from jitgrad.backend.numba.runtime_reduce import (  # noqa: F401 - re-exported
    broadcast_like,
    cumprod_grad,
    cumprod_jvp,
    cumsum_axis,
    max_axis,
    min_axis,
    nonempty,
    prod_axis,
    prod_others,
    prod_others_axis,
    prod_others_jvp,
    spread,
    sum_all,
    sum_axis,
    sum_to,
)
from jitgrad.backend.numba.runtime_writes import add_into, copy_into  # noqa: F401 - re-exported

# the helpers that call LAPACK through SciPy (`compile.require_scipy`)
USES_SCIPY = runtime_linalg.USES_SCIPY + runtime_complex_linalg.USES_SCIPY

_CALLS = re.compile(r"\b_rt\.(\w+)\(")
# The namespaces generated code imports as ``_rt``: this one, and `runtime_float32`'s (which
# adds itself when imported)
NAMESPACES = [globals()]


def bind_ufuncs(source: str) -> None:
    """Bind here (and in every namespace of `NAMESPACES`), as ``_rt.<name>``, each ufunc of
    `UFUNC_SCALARS` (erf, the gamma family) that the generated module ``source`` calls, made on
    its first use (`runtime_elementwise.ufunc`: milliseconds each, and few gradients call any).
    The backend's `load` calls this before it runs and compiles the module, so every name the
    module calls on ``_rt`` is bound by then."""
    for name in sorted(set(_CALLS.findall(source)) & UFUNC_SCALARS.keys()):
        made = ufunc(name)
        for namespace in NAMESPACES:
            namespace[name] = made
