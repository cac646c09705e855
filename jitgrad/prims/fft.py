"""The discrete Fourier transform, on complex values held as pairs of real arrays.

``dft(a, sign)`` takes a float array of shape ``(2, m, n)``, the real parts ``a[0]`` and the
imaginary parts ``a[1]`` of ``m`` complex rows of length ``n``, and gives each row's
unnormalised transform ``X_j = sum_k x_k exp(sign 2 pi i j k / n)`` in the same layout
(``sign = -1``: ``np.fft.fft``; ``+1``: ``n * np.fft.ifft``). `jitgrad.lang.numpy_fft` writes
``np.fft`` (any axis, several axes, the real transforms, the normalisations) with it.

It is linear, and the adjoint of the unnormalised transform is the transform of the other
sign (the conjugate transpose of the DFT matrix is the DFT matrix of the conjugate root): on
the pairs, ``vjp(g) = dft(g, -sign)``; the tangent is ``dft(t, sign)``.

Its value in NumPy is NumPy's (`np.fft`); the backend compiles `transform_rows` (own code, not
NumPy's: Numba does not compile ``np.fft``): an iterative radix-2 transform for lengths that
are powers of two, Bluestein's chirp for any other length (a convolution of a power-of-two
length, by the radix-2 transform), a direct sum for lengths below 8. Roots of unity are
computed from reduced integer angles (``k * j mod n``, ``k^2 mod 2n``), so the error stays near
the rounding of NumPy's pocketfft (~1e-15 relative to the norm of the row).
"""

from __future__ import annotations

import math

import numpy as np

from jitgrad.core.types import Type
from jitgrad.prims.primitive import defjvp, defvjp, primitive


def _dft_numpy(a, sign):
    z = a[0] + 1j * a[1]
    y = np.fft.fft(z, axis=-1) if sign < 0 else np.fft.ifft(z, axis=-1) * z.shape[-1]
    return np.stack([y.real, y.imag])


dft = primitive("dft", _dft_numpy, lambda ts, p: Type("f", 3), same_shape_as=0, costly=True)

defvjp("dft", lambda g, ans, a, sign: dft(g, sign=-sign))
defjvp("dft", lambda t, ans, a, sign: dft(t, sign=sign))


# ----------------------------------------------------------------------------- the algorithm
# Plain Python on NumPy arrays, in the subset Numba compiles (`backend.numba.runtime_fft`
# compiles `transform_rows`; its helpers are inner functions, which Numba compiles with it).


def transform_rows(a, sign):
    """``dft``'s value: each of the ``m`` rows of the pair of arrays ``a`` (shape ``(2, m,
    n)``) transformed. The roots of unity, and for Bluestein's path the chirp and the
    transform of its conjugate, are made once for all the rows."""

    def roots_of(n, sign):  # exp(sign 2 pi i k / n), k < n / 2
        roots = np.empty(max(n // 2, 1), np.complex128)
        for k in range(n // 2):
            angle = sign * 2.0 * math.pi * k / n
            roots[k] = complex(math.cos(angle), math.sin(angle))
        return roots

    def radix2(x, roots):
        # ``x`` (complex, length a power of two) in place: bit reversal, then butterflies
        n = x.shape[0]
        j = 0
        for i in range(1, n):
            bit = n >> 1
            while j & bit:
                j ^= bit
                bit >>= 1
            j |= bit
            if i < j:
                t = x[i]
                x[i] = x[j]
                x[j] = t
        size = 2
        while size <= n:
            half = size // 2
            step = n // size
            for start in range(0, n, size):
                for k in range(half):
                    v = x[start + k + half] * roots[k * step]
                    u = x[start + k]
                    x[start + k] = u + v
                    x[start + k + half] = u - v
            size *= 2

    m, n = a.shape[1], a.shape[2]
    out = np.empty((2, m, n))
    row = np.empty(n, np.complex128)
    power_of_two = n > 0 and (n & (n - 1)) == 0
    direct = not power_of_two and n < 8
    # Bluestein: X_j = w_j sum_k (x_k w_k) conj(w_(j-k)), the chirp w_k = exp(sign i pi k^2
    # / n), a convolution made by radix-2 transforms of a length size >= 2n - 1
    size = 1
    if not (power_of_two or direct):
        while size < 2 * n - 1:
            size *= 2
    chirp = np.empty(n, np.complex128)
    kernel = np.zeros(size, np.complex128)
    if not (power_of_two or direct):
        for k in range(n):
            angle = sign * math.pi * ((k * k) % (2 * n)) / n
            chirp[k] = complex(math.cos(angle), math.sin(angle))
            kernel[k] = chirp[k].conjugate()
            if k:
                kernel[size - k] = chirp[k].conjugate()
    forward = roots_of(size if not power_of_two else n, -1 if not power_of_two else sign)
    backward = roots_of(size, 1)
    if not (power_of_two or direct):
        radix2(kernel, forward)
    work = np.empty(size, np.complex128)
    for r in range(m):
        for k in range(n):
            row[k] = complex(a[0, r, k], a[1, r, k])
        if power_of_two:
            radix2(row, forward)
        elif direct:
            for j in range(n):
                s = 0.0 + 0.0j
                for k in range(n):
                    angle = sign * 2.0 * math.pi * ((j * k) % n) / n
                    s += a[0, r, k] * complex(math.cos(angle), math.sin(angle)) + \
                        a[1, r, k] * complex(-math.sin(angle), math.cos(angle))
                row[j] = s
        else:
            for k in range(size):
                work[k] = row[k] * chirp[k] if k < n else 0.0
            radix2(work, forward)
            for k in range(size):
                work[k] *= kernel[k]
            radix2(work, backward)
            for j in range(n):
                row[j] = chirp[j] * work[j] / size
        for k in range(n):
            out[0, r, k] = row[k].real
            out[1, r, k] = row[k].imag
    return out
