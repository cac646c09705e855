"""The symbolic NumPy, `math` and SciPy surface user code calls (L2: imports core and prims).

`symbolic` holds the graph builder, `Sym` and the dispatch tables; importing this package runs
`numpy_api`, `complex_numpy`, `complex_linalg`, `numpy_reductions`, `numpy_shape`, `numpy_sorting`, `numpy_discrete`, `numpy_linalg`, `numpy_positions`, `numpy_arrays`,
`numpy_composed` and `scipy_api`, which fill the tables, so the surface is complete whenever
any of its modules is in use.
"""

from jitgrad.lang import (  # noqa: F401  (they fill the tables)
    complex_linalg,
    complex_numpy,
    complex_pairs,
    numpy_api,
    numpy_arrays,
    numpy_composed,
    numpy_discrete,
    numpy_fft,
    numpy_linalg,
    numpy_positions,
    numpy_reductions,
    numpy_shape,
    numpy_sorting,
    scipy_api,
)
