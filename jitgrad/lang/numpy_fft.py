"""``np.fft``: the transforms of real and complex arrays, written with the ``dft`` primitive
(`jitgrad.prims.fft`) on pairs of real arrays (`complex_pairs`).

A transform along one axis stacks the real and imaginary parts, moves the axis last, flattens
the other axes into rows (shape ``(2, m, n)``), transforms, and puts the result back; several
axes are one axis after another. The normalisations (``norm=None``/"backward", "ortho",
"forward") scale the result. The real transforms are compositions whose derivatives follow:
``rfft`` is the full transform's first ``n // 2 + 1`` entries along the axis; ``irfft`` is the
real part of the inverse transform of the Hermitian spectrum made from them (the entries
``n - k`` the conjugates of the entries ``k``), which, as NumPy's, ignores the imaginary parts
of the zero-frequency entry and, for even ``n``, of the last. ``fftshift`` and ``ifftshift``
are rolls by half of each axis.

Guarantees: NumPy's values (to rounding, ~1e-15 relative), with its default axes; a length
``n`` or shape ``s`` cuts each axis to it or pads it with zeros first, as NumPy's does (the
spectrum of ``irfft``/``irfftn`` to the ``n // 2 + 1`` entries it reads); the real transforms
of a complex array are refused.
"""

from __future__ import annotations

import math

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import complex_pairs
from jitgrad.lang.complex_pairs import Complex
from jitgrad.lang.numpy_api import (
    np_concatenate,
    np_flip,
    np_reshape,
    np_roll,
    np_stack_axis,
    np_transpose,
)
from jitgrad.lang.symbolic import NUMPY, loc_of, record, records


def _loc(z):
    return loc_of(z.re, z.im) if isinstance(z, Complex) else loc_of(z)


def _arrays(z):
    """The two parts of ``z`` as real arrays of one shape (a missing part as zeros)."""
    z = complex_pairs.lift(z)
    re, im = z.re, z.im
    if not records(re):
        re = NUMPY[np.zeros_like](im) if re == 0 else re + NUMPY[np.zeros_like](im)
    if not records(im):
        im = NUMPY[np.zeros_like](re) if im == 0 else im + NUMPY[np.zeros_like](re)
    return re, im


def _axis(axis, ndim, loc):
    if not isinstance(axis, int) or isinstance(axis, bool) or not -ndim <= axis < ndim:
        raise UnsupportedError(f"np.fft: axis {axis!r} of an array of rank {ndim}", loc)
    return axis % ndim


def _scale(z, factor):
    return complex_pairs.pair(z.re * factor, z.im * factor)


def _norm_factor(n, sign, norm, loc):
    """The factor NumPy's ``norm`` gives a transform of length ``n`` (1.0: none)."""
    if norm in (None, "backward"):
        return 1.0 if sign < 0 else 1.0 / n
    if norm == "ortho":
        return 1.0 / NUMPY[np.sqrt](n * 1.0) if records(n) else 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0 / n if sign < 0 else 1.0
    raise UnsupportedError(f"np.fft with norm={norm!r} (None, 'backward', 'ortho', 'forward')",
                           loc)


def _along(z, axes, sign, norm):
    """The transform of ``z`` (real or complex) along each of ``axes`` in turn: a `Complex`.
    The parts are stacked once (shape ``(2, ...)``) and parted once."""
    re, im = _arrays(z)
    loc, nd = _loc(re), re.ndim
    if nd == 0:
        raise UnsupportedError("np.fft of a number (it takes an array)", loc)
    stacked = np_stack_axis([re, im], 0)
    factor = 1.0
    for axis in axes:
        k = _axis(axis, nd, loc)
        perm = None
        if k != nd - 1:  # the axis last
            perm = (0, *(j + 1 for j in range(nd) if j != k), k + 1)
            stacked = np_transpose(stacked, perm)
        shape = tuple(stacked.shape)
        n = shape[-1]
        stacked = np_reshape(record("dft", np_reshape(stacked, (2, -1, n)), sign=sign), shape)
        if perm is not None:
            stacked = np_transpose(stacked, tuple(int(j) for j in np.argsort(perm)))
        f = _norm_factor(n, sign, norm, loc)
        factor = f if isinstance(factor, float) and factor == 1.0 else factor * f
    result = Complex(record("getitem", stacked, 0, index_spec=("i",)),
                     record("getitem", stacked, 1, index_spec=("i",)))
    return result if isinstance(factor, float) and factor == 1.0 else _scale(result, factor)


def _axes_of(z, axes, default, s=None):
    """The axes a transform runs along: ``axes``; else the last ``len(s)`` with a shape
    ``s`` (NumPy's), else ``default`` (every axis when None)."""
    nd = complex_pairs.lift(z).ndim
    if axes is None:
        if s is not None:
            return tuple(range(nd - len(s), nd))
        return tuple(range(nd)) if default is None else default
    return tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)


def _lengths(name, s, axes, z):
    """A shape ``s`` (NumPy's ``s=``): one length per axis transformed."""
    s = tuple(s) if isinstance(s, (tuple, list)) else (s,)
    if len(s) != len(axes):
        raise UnsupportedError(f"np.fft.{name}: the shape s= has {len(s)} lengths for "
                               f"{len(axes)} axes", _loc(z))
    return s


def _resized(z, n, axis):
    """``z`` along ``axis`` to the length ``n``, as NumPy's ``n=`` makes it: its first ``n``
    entries, then zeros up to ``n`` (one of the two parts is empty: which, is known at run
    time only when a length is)."""
    re, im = _arrays(z)
    loc = _loc(re)
    if not (records(n) and n.ndim == 0 and n.type.kind == "i" or isinstance(n, int)
            and not isinstance(n, bool)):
        raise UnsupportedError(
            "np.fft with a length n= that is not an integer (a power `2**k` of an integer "
            "known only at run time is a float in jitgrad, as Python's is for k < 0): give "
            "an integer, `1 << k` or `int(2**k)`", loc)
    if isinstance(n, int) and n < 1:
        raise UnsupportedError(f"np.fft: invalid number of data points ({n}) specified", loc)
    k = _axis(axis, re.ndim, loc)
    m = re.shape[k]
    both_known = not records(n) and not records(m)
    keep = min(n, m) if both_known else NUMPY[np.minimum](n, m)
    extra = max(n - m, 0) if both_known else NUMPY[np.maximum](n - m, 0)
    spec = (":",) * k + (("s", False, True, False),)
    zeros = tuple(extra if j == k else re.shape[j] for j in range(re.ndim))
    return Complex(*(np_concatenate([record("getitem", p, keep, index_spec=spec),
                                     NUMPY[np.zeros](zeros)], axis=k) for p in (re, im)))


def _transform(name, sign):
    """``fft``, ``ifft``: along one axis (NumPy's parameters: a, n, axis, norm), ``n``
    cutting or padding it first (`_resized`)."""
    def f(a, n=None, axis=-1, norm=None):
        if n is not None:
            a = _resized(a, n, axis)
        return _along(a, (axis,), sign, norm)
    return f


def _transform_n(name, sign, default_axes=None):
    """``fft2``, ``fftn`` and their inverses: along each axis (a, s, axes, norm), a shape
    ``s`` cutting or padding each axis first."""
    def f(a, s=None, axes=None, norm=None):
        axes = _axes_of(a, axes, default_axes, s)
        if s is not None:
            for axis, n in zip(axes, _lengths(name, s, axes, a)):
                a = _resized(a, n, axis)
        return _along(a, axes, sign, norm)
    return f


def _real_input(name, a):
    if isinstance(a, Complex):
        raise UnsupportedError(f"np.fft.{name} of a complex array (NumPy drops its imaginary "
                               "part): take .real first, or use np.fft.fft", _loc(a))


def _first(z, axis, count):
    """The first ``count`` entries of ``z``'s parts along ``axis``."""
    spec = (":",) * axis + (("s", False, True, False),)
    return Complex(record("getitem", z.re, count, index_spec=spec),
                   record("getitem", z.im, count, index_spec=spec))


def _rfft_along(a, axis, norm):
    z = _along(a, (axis,), -1, norm)
    k = axis % z.re.ndim
    return _first(z, k, z.re.shape[k] // 2 + 1)


def np_rfft(a, n=None, axis=-1, norm=None):
    _real_input("rfft", a)
    if n is not None:  # (of the real array)
        a = _resized(a, n, axis).re
    return _rfft_along(a, axis, norm)


def _rfftn(name, default_axes):
    def f(a, s=None, axes=None, norm=None):
        _real_input(name, a)
        axes = _axes_of(a, axes, default_axes, s)
        if s is not None:
            for axis, n in zip(axes, _lengths(name, s, axes, a)):
                a = _resized(a, n, axis).re
        z = _rfft_along(a, axes[-1], norm)
        return _along(z, axes[:-1], -1, norm) if len(axes) > 1 else z
    return f


def _irfft_along(a, n, axis, norm):
    """The real inverse along ``axis``: the Hermitian spectrum of length ``n`` (default
    ``2 (m - 1)``) from the first entries, inverse transformed, its real part."""
    re, im = _arrays(a)
    loc = _loc(re)
    k = _axis(axis, re.ndim, loc)
    if n is None:
        n = 2 * (re.shape[k] - 1)
    else:  # the spectrum cut, or padded with zeros, to the n // 2 + 1 entries n reads
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise UnsupportedError(f"np.fft.irfft with a length n={n!r} (a positive integer "
                                   "known while building)", loc)
        re, im = _arrays(_resized(Complex(re, im), n // 2 + 1, k))
    half = n // 2 + 1
    spec = (":",) * k + (("s", True, True, False),)
    head = (re, im)
    tail = tuple(np_flip(record("getitem", p, 1, n - half + 1, index_spec=spec), k)
                 for p in (re, im))
    full = Complex(np_concatenate([head[0], tail[0]], axis=k),
                   np_concatenate([head[1], -tail[1]], axis=k))
    return _along(full, (k,), 1, norm).real


def np_irfft(a, n=None, axis=-1, norm=None):
    return _irfft_along(a, n, axis, norm)


def _irfftn(name, default_axes):
    def f(a, s=None, axes=None, norm=None):
        axes = _axes_of(a, axes, default_axes, s)
        s = _lengths(name, s, axes, a) if s is not None else (None,) * len(axes)
        for axis, n in zip(axes[:-1], s[:-1]):
            if n is not None:
                a = _resized(a, n, axis)
        z = _along(a, axes[:-1], 1, norm) if len(axes) > 1 else a
        return _irfft_along(z, s[-1], axes[-1], norm)
    return f


def _shift(sign):
    def f(x, axes=None):
        z = complex_pairs.lift(x) if isinstance(x, Complex) else None
        parts = (z.re, z.im) if z is not None else (x,)
        nd = max(p.ndim if records(p) else np.ndim(p) for p in parts)
        axes = _axes_of(x, axes, None) if nd else ()
        out = []
        for p in parts:
            if records(p) and p.ndim:
                for k in axes:
                    half = p.shape[k] // 2
                    p = np_roll(p, half if sign > 0 else -half, k)
            out.append(p)
        return complex_pairs.pair(*out) if z is not None else out[0]
    return f


def np_fftfreq(n, d=1.0):
    """``np.fft.fftfreq(n, d)`` of a run-time ``n`` (an argument's size): ``0 .. (n - 1) // 2``
    then ``-(n // 2) .. -1``, over ``n * d``."""
    k = NUMPY[np.arange](n)
    return NUMPY[np.where](k < (n + 1) // 2, k, k - n) / (n * d)


def np_rfftfreq(n, d=1.0):
    """``np.fft.rfftfreq(n, d)`` of a run-time ``n``: ``0 .. n // 2`` over ``n * d``."""
    return NUMPY[np.arange](n // 2 + 1) / (n * d)


_FFT = {
    np.fft.fftfreq: np_fftfreq, np.fft.rfftfreq: np_rfftfreq,
    np.fft.fft: _transform("fft", -1), np.fft.ifft: _transform("ifft", 1),
    np.fft.fft2: _transform_n("fft2", -1, (-2, -1)),
    np.fft.ifft2: _transform_n("ifft2", 1, (-2, -1)),
    np.fft.fftn: _transform_n("fftn", -1), np.fft.ifftn: _transform_n("ifftn", 1),
    np.fft.rfft: np_rfft, np.fft.irfft: np_irfft,
    np.fft.rfft2: _rfftn("rfft2", (-2, -1)), np.fft.irfft2: _irfftn("irfft2", (-2, -1)),
    np.fft.rfftn: _rfftn("rfftn", None), np.fft.irfftn: _irfftn("irfftn", None),
    np.fft.fftshift: _shift(1), np.fft.ifftshift: _shift(-1),
}


def _known_or(fn, handler):
    def f(*args, **kwargs):
        if not any(records(v) or isinstance(v, Complex) for v in (*args, *kwargs.values())):
            return fn(*args, **kwargs)
        return handler(*args, **kwargs)
    return f


for _fn, _handler in _FFT.items():
    NUMPY[_fn] = complex_pairs.FUNCTIONS[_fn] = _known_or(_fn, _handler)
