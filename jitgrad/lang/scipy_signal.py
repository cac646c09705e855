"""``scipy.signal``'s zero-phase filters and Welch's spectrum, and ``scipy.stats``' robust
spreads, of a signal of the graph, written as the Python SciPy's computations amount to (built
inline by the frontend, a written module: `frontend.build_calls.WRITTEN_MODULES`).

Takes a vector of the graph and, for the filters, coefficients known while building (a design
such as ``scipy.signal.butter(4, 5.0, fs=100.0)`` of numbers: its output is numbers); refuses,
naming the form to write instead, coefficients of the graph, an axis a vector does not have,
and settings other than SciPy's defaults listed below. Guarantees SciPy's values:

* ``filtfilt(b, a, x)``: the odd extension by ``3 * max(len(a), len(b))`` samples
  (``padtype="odd"``; ``padlen=`` given or 0), ``lfilter`` forward from the steady state
  ``lfilter_zi(b, a) * ext[0]``, backward from ``zi * y[-1]``, the extension cut off;
* ``sosfilt(sos, x[, zi])`` (the sections' ``lfilter`` in turn) and ``sosfiltfilt(sos, x)``
  (as ``filtfilt``, ``3 * (2 n_sections + 1 - zeros)`` samples, SciPy's count of trailing
  zero coefficients, from ``sosfilt_zi``);
* ``welch(x, fs, window, nperseg, noverlap)`` with ``nperseg`` an integer known while building
  (``detrend="constant"``, ``scaling="density"`` or ``"spectrum"``, one-sided, averaged by
  the mean): the segments' periodograms by the products with the cosine and sine of the
  one-sided frequencies, returned with ``rfftfreq``'s frequencies;
* ``median_abs_deviation(x, axis=0, scale=1.0 or "normal")`` and ``iqr(x, axis=None,
  rng=(25, 75), scale=1.0 or "normal")``: ``np.median`` and ``np.percentile``'s (linear).

The derivatives follow from the operations written (``lfilter``'s recursion, the products,
``median``'s and ``percentile``'s rules).
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import numpy_written as W
from jitgrad.lang.numpy_args import as_array, known_array
from jitgrad.lang.symbolic import loc_of, ndim_of, records, written

# scipy.stats' scale="normal": the normal distribution's MAD and IQR, in standard deviations
_NORMAL_MAD = 0.6744897501960817
_NORMAL_IQR = 1.3489795003921634


# ---- the written Python -----------------------------------------------------------------------

def odd_extended(x, n):
    """SciPy's ``odd_ext(x, n)`` of a vector: ``2 x[0] - x[n:0:-1]`` before, ``2 x[-1] -
    x[-2:-n - 2:-1]`` after."""
    before = 2.0 * x[0] - x[n:0:-1]
    after = 2.0 * x[-1] - x[-2:-n - 2:-1]
    return np.concatenate((before, x, after))


def filtfilt(b, a, x, zi, padlen):
    ext = odd_extended(x, padlen) if padlen > 0 else x
    y = W.lfilter_zi(b, a, ext, zi * ext[0])[0]
    y = W.lfilter_zi(b, a, y[::-1], zi * y[-1])[0][::-1]
    return y[padlen:y.shape[0] - padlen] if padlen > 0 else y


def sosfilt(sos, x, zi):
    y = x
    for s in range(sos.shape[0]):
        y = W.lfilter_zi(sos[s, :3], sos[s, 3:], y, zi[s])[0]
    return y


def sosfilt_state(sos, x, zi):
    """``sosfilt(sos, x, zi=zi)``: the output and the sections' final states."""
    y = x
    zf = np.zeros((sos.shape[0], 2))
    for s in range(sos.shape[0]):
        y, z = W.lfilter_zi(sos[s, :3], sos[s, 3:], y, zi[s])
        zf[s] = z
    return y, zf


def sosfiltfilt(sos, x, zi, padlen):
    ext = odd_extended(x, padlen) if padlen > 0 else x
    y = sosfilt(sos, ext, zi * ext[0])
    y = sosfilt(sos, y[::-1], zi * y[-1])[::-1]
    return y[padlen:y.shape[0] - padlen] if padlen > 0 else y


def welch_mean(x, freqs, win, cos_m, sin_m, scale, step, nperseg):
    """The frequencies and the mean of the one-sided periodograms of ``x``'s segments, each
    less its mean."""
    nseg = (x.shape[0] - nperseg) // step + 1
    total = np.zeros(cos_m.shape[1])
    for k in range(nseg):
        seg = x[k * step:k * step + nperseg]
        seg = (seg - np.mean(seg)) * win
        re = seg @ cos_m
        im = seg @ sin_m
        total = total + (re * re + im * im)
    return freqs, total * scale / nseg


def median_abs_deviation(x, axis, scale):
    med = np.median(x, axis=axis, keepdims=True)
    return np.median(np.abs(x - med), axis=axis) / scale


def iqr(x, axis, low, high, scale):
    return (np.percentile(x, high, axis=axis) - np.percentile(x, low, axis=axis)) / scale


# ---- the handlers -------------------------------------------------------------------------------

def _known(what, *values):
    """The filter's coefficients, known while building (numbers, or a constant of the graph)."""
    out = []
    for v in values:
        known = known_array(as_array(v))
        if known is None:
            raise UnsupportedError(f"scipy.signal.{what} with coefficients known while building "
                                   "(a design of numbers: butter(4, 5.0, fs=100.0)); for "
                                   "coefficients of the graph, write lfilter's passes",
                                   loc_of(v))
        out.append(known)
    return out


def _vector(what, x, axis):
    x = as_array(x)
    if ndim_of(x) != 1 or axis not in (-1, 0):
        raise UnsupportedError(f"scipy.signal.{what} of a vector (along its axis): filter each "
                               "row in a loop", loc_of(x))
    return x


def _padlen(what, padtype, padlen, default, x):
    if padtype not in ("odd", None) or (padtype is None and padlen not in (None, 0)):
        raise UnsupportedError(f"scipy.signal.{what} with padtype='odd' (its default) or None",
                               loc_of(x))
    n = 0 if padtype is None else default if padlen is None else padlen
    if records(n) or int(n) != n or n < 0:
        raise UnsupportedError(f"scipy.signal.{what}'s padlen: an integer known while building",
                               loc_of(x))
    return int(n)


def signal_filtfilt(b, a, x, axis=-1, padtype="odd", padlen=None, method="pad", irlen=None):
    import scipy.signal
    b, a = _known("filtfilt", b, a)
    x = _vector("filtfilt", x, axis)
    if method != "pad":
        raise UnsupportedError("scipy.signal.filtfilt with method='pad' (its default)", loc_of(x))
    n = _padlen("filtfilt", padtype, padlen, 3 * max(len(a), len(b)), x)
    return written(filtfilt, b, a, x, scipy.signal.lfilter_zi(b, a), n)


def _sos_zi(sos):
    import scipy.signal
    return scipy.signal.sosfilt_zi(sos)


def signal_sosfilt(sos, x, axis=-1, zi=None):
    (sos,) = _known("sosfilt", sos)
    x = _vector("sosfilt", x, axis)
    if zi is None:
        return written(sosfilt, sos, x, np.zeros((sos.shape[0], 2)))
    return written(sosfilt_state, sos, x, as_array(zi))


def signal_sosfiltfilt(sos, x, axis=-1, padtype="odd", padlen=None):
    (sos,) = _known("sosfiltfilt", sos)
    x = _vector("sosfiltfilt", x, axis)
    taps = 2 * sos.shape[0] + 1 - min(int((sos[:, 2] == 0).sum()), int((sos[:, 5] == 0).sum()))
    n = _padlen("sosfiltfilt", padtype, padlen, 3 * taps, x)
    return written(sosfiltfilt, sos, x, _sos_zi(sos), n)


def signal_welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
                 detrend="constant", return_onesided=True, scaling="density", axis=-1,
                 average="mean"):
    import scipy.signal
    x = _vector("welch", x, axis)
    settings = (fs, nperseg, noverlap, nfft)
    if any(records(v) for v in settings) or not isinstance(nperseg, (int, np.integer)) or \
            nfft not in (None, nperseg) or detrend != "constant" or return_onesided is not True \
            or scaling not in ("density", "spectrum") or average != "mean":
        raise UnsupportedError("scipy.signal.welch with nperseg= an integer known while "
                               "building (fs, noverlap too), detrend='constant', one-sided, "
                               "scaling 'density' or 'spectrum', average='mean'", loc_of(x))
    win = np.asarray(scipy.signal.get_window(window, nperseg), dtype=float)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    freqs = np.fft.rfftfreq(nperseg, 1.0 / fs)
    angle = 2.0 * np.pi * np.outer(np.arange(nperseg), np.arange(len(freqs))) / nperseg
    scale = np.full(len(freqs), 1.0 / (fs * np.sum(win ** 2)) if scaling == "density"
                    else 1.0 / np.sum(win) ** 2)
    scale[1:len(freqs) - (1 if nperseg % 2 == 0 else 0)] *= 2.0  # one-sided: both halves
    return written(welch_mean, x, freqs, win, np.cos(angle), -np.sin(angle), scale,
                   nperseg - noverlap, nperseg)


def stats_median_abs_deviation(x, axis=0, center=None, scale=1.0, nan_policy="propagate"):
    x = as_array(x)
    if center not in (None, np.median) or nan_policy != "propagate" or records(axis):
        raise UnsupportedError("scipy.stats.median_abs_deviation about the median, "
                               "nan_policy='propagate'", loc_of(x))
    scale = _NORMAL_MAD if scale == "normal" else scale
    return written(median_abs_deviation, x, axis, scale)


def stats_iqr(x, axis=None, rng=(25, 75), scale=1.0, nan_policy="propagate",
              interpolation="linear", keepdims=False):
    x = as_array(x)
    if nan_policy != "propagate" or interpolation != "linear" or keepdims or records(axis):
        raise UnsupportedError("scipy.stats.iqr with nan_policy='propagate', linear "
                               "interpolation, without keepdims", loc_of(x))
    scale = _NORMAL_IQR if scale == "normal" else scale
    return written(iqr, x, axis, float(rng[0]), float(rng[1]), scale)


SIGNAL = {"filtfilt": signal_filtfilt, "sosfilt": signal_sosfilt,
          "sosfiltfilt": signal_sosfiltfilt, "welch": signal_welch}
STATS = {"median_abs_deviation": stats_median_abs_deviation, "iqr": stats_iqr}
