"""Decompositions of a complex matrix for generated code (``_rt.csvdvals``...,
re-exported by `runtime`): the rows of `jitgrad.prims.complex_decompositions`, one helper per
result, each taking the real and imaginary parts ``(x, y)`` as float arrays, forming the
complex128 matrix and calling Numba's own ``np.linalg`` (LAPACK's ``zgesdd``, ``zheevd``,
``zgeev`` through SciPy: `USES_SCIPY`), and giving one real part of one result, NumPy's
values. ``inverse_square_gaps`` is eig's adjoint's helper, raising where two eigenvalues are
equal, as `runtime_linalg.inverse_gaps`.
"""

from __future__ import annotations

import numpy as np

from jitgrad.backend.numba.compile import jit
from jitgrad.backend.numba.runtime_alloc import zeros
from jitgrad.prims import complex_decompositions

# every result's helper calls LAPACK (the rows of `prims.complex_decompositions`)
USES_SCIPY = tuple(complex_decompositions.RESULTS)


@jit
def _square_for_full(x, full):
    if full and x.shape[0] != x.shape[1]:
        raise ValueError("jitgrad: np.linalg.svd with full_matrices=True of a non-square "
                         "matrix (pass full_matrices=False)")


@jit
def _complex(x, y):
    return x + 1j * y


@jit
def csvdvals(x, y):
    return np.linalg.svd(_complex(x, y), False)[1]


@jit
def csvd_u_re(x, y, full):
    _square_for_full(x, full)
    return np.linalg.svd(_complex(x, y), False)[0].real.copy()


@jit
def csvd_u_im(x, y, full):
    _square_for_full(x, full)
    return np.linalg.svd(_complex(x, y), False)[0].imag.copy()


@jit
def csvd_vt_re(x, y, full):
    _square_for_full(x, full)
    return np.linalg.svd(_complex(x, y), False)[2].real.copy()


@jit
def csvd_vt_im(x, y, full):
    _square_for_full(x, full)
    return np.linalg.svd(_complex(x, y), False)[2].imag.copy()


@jit
def ceigvalsh(x, y):
    return np.linalg.eigvalsh(_complex(x, y))


@jit
def ceigh_vectors_re(x, y):
    return np.linalg.eigh(_complex(x, y))[1].real.copy()


@jit
def ceigh_vectors_im(x, y):
    return np.linalg.eigh(_complex(x, y))[1].imag.copy()


@jit
def ceig_values_re(x, y):
    return np.linalg.eig(_complex(x, y))[0].real.copy()


@jit
def ceig_values_im(x, y):
    return np.linalg.eig(_complex(x, y))[0].imag.copy()


@jit
def ceig_vectors_re(x, y):
    return np.linalg.eig(_complex(x, y))[1].real.copy()


@jit
def ceig_vectors_im(x, y):
    return np.linalg.eig(_complex(x, y))[1].imag.copy()


@jit
def inverse_square_gaps(wr, wi):
    """Q[i, j] = 1 / |w[j] - w[i]|^2 off the diagonal, 0 on it (w = wr + i wi)."""
    n = wr.shape[0]
    out = zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                dr = wr[j] - wr[i]
                di = wi[j] - wi[i]
                d2 = dr * dr + di * di
                if d2 == 0.0:
                    raise ValueError("jitgrad: two eigenvalues are equal: the eigenvectors' "
                                     "derivative is undefined there")
                out[i, j] = 1.0 / d2
    return out
