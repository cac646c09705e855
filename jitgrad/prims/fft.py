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
    n)``) transformed."""

    def radix2(x, sign):
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
        roots = np.empty(max(n // 2, 1), np.complex128)
        for k in range(n // 2):
            angle = sign * 2.0 * math.pi * k / n
            roots[k] = complex(math.cos(angle), math.sin(angle))
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

    def direct(x, sign):
        n = x.shape[0]
        out = np.empty(n, np.complex128)
        for j in range(n):
            s = 0.0 + 0.0j
            for k in range(n):
                angle = sign * 2.0 * math.pi * ((j * k) % n) / n
                s += x[k] * complex(math.cos(angle), math.sin(angle))
            out[j] = s
        return out

    def bluestein(x, sign):
        # X_j = w_j sum_k (x_k w_k) conj(w_(j-k)), the chirp w_k = exp(sign i pi k^2 / n):
        # a convolution, by radix-2 transforms of a length m >= 2n - 1
        n = x.shape[0]
        m = 1
        while m < 2 * n - 1:
            m *= 2
        chirp = np.empty(n, np.complex128)
        for k in range(n):
            angle = sign * math.pi * ((k * k) % (2 * n)) / n
            chirp[k] = complex(math.cos(angle), math.sin(angle))
        a = np.zeros(m, np.complex128)
        b = np.zeros(m, np.complex128)
        for k in range(n):
            a[k] = x[k] * chirp[k]
            b[k] = chirp[k].conjugate()
            if k:
                b[m - k] = chirp[k].conjugate()
        radix2(a, -1)
        radix2(b, -1)
        for k in range(m):
            a[k] *= b[k]
        radix2(a, 1)
        out = np.empty(n, np.complex128)
        for j in range(n):
            out[j] = chirp[j] * a[j] / m
        return out

    m, n = a.shape[1], a.shape[2]
    out = np.empty((2, m, n))
    row = np.empty(n, np.complex128)
    power_of_two = n > 0 and (n & (n - 1)) == 0
    for r in range(m):
        for k in range(n):
            row[k] = complex(a[0, r, k], a[1, r, k])
        if power_of_two:
            radix2(row, sign)
            y = row
        elif n < 8:
            y = direct(row, sign)
        else:
            y = bluestein(row, sign)
        for k in range(n):
            out[0, r, k] = y[k].real
            out[1, r, k] = y[k].imag
    return out
