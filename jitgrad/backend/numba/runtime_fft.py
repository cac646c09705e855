"""The discrete Fourier transform for generated code (``_rt.dft``, re-exported by `runtime`).

Numba does not compile ``np.fft``; the transform is `jitgrad.prims.fft`'s own algorithm
(radix-2, Bluestein's chirp for other lengths), compiled here once per machine. Takes a float
array of shape ``(2, m, n)`` (the real and imaginary parts of ``m`` rows) and the sign of the
exponent; gives the rows' unnormalised transforms in the same layout, as the ``dft``
primitive's NumPy value does to rounding.
"""

from __future__ import annotations

from jitgrad.backend.numba.compile import jit
from jitgrad.prims import fft

dft = jit(fft.transform_rows)
