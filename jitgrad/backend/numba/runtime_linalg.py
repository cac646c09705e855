"""Products and linear algebra for generated code (``_rt.<name>``, re-exported by `runtime`):
NumPy's functions as Numba compiles them.

Takes float arrays (`lowering` converts integer operands to float first); guarantees NumPy's
results. Why they are here and not inline in the generated code: Numba's BLAS and LAPACK
wrappers take 0.5-2 s to compile in each process; here they compile once per machine and
signature (`compile.jit`, cache=True), not in every generated module.
"""

from __future__ import annotations

import numpy as np

from jitgrad.backend.numba.compile import jit

# The helpers that call BLAS or LAPACK, which Numba finds through SciPy when they first run: a
# helper loaded from the disk cache never asks for SciPy while compiling, and without SciPy
# the process would abort at the call (`compile.require_scipy` refuses the module first).
USES_SCIPY = ("matmul", "dot", "inv", "solve", "det", "cholesky", "logabsdet", "signdet")


@jit
def matmul(a, b):
    """``a @ b`` (a matrix among them): Numba's BLAS wrappers take 0.5-2 s to compile in each
    process; here once per machine and layout."""
    return a @ b


@jit
def dot(a, b):
    """``np.dot(a, b)`` of two vectors, or of a number and an array; see `matmul`."""
    return np.dot(a, b)


@jit
def inv(a):
    return np.linalg.inv(a)


@jit
def solve(a, b):
    return np.linalg.solve(a, b)


@jit
def det(a):
    return np.linalg.det(a)


@jit
def cholesky(a):
    return np.linalg.cholesky(a)


@jit
def logabsdet(a):
    return np.linalg.slogdet(a)[1]


@jit
def signdet(a):
    return np.linalg.slogdet(a)[0]
