"""The tanh generated code calls (`runtime.tanh_scalar` and `runtime.tanh`, not libm's): within 2 ulp of the exact value,
odd, and right at the special values. Issue #26 allows a faster tanh only if its error is
measured and stays within 2 ulp; `bench/tanh_ulp.py` measures it on 3.7e7 points (1.34 ulp at
most, glibc's tanh 2.19)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from jitgrad.backend.numba import runtime, runtime_elementwise

# x87 80-bit long double (64-bit significand) on x86-64 Linux; where long double is double the
# reference is no better than what it checks
EXTENDED = np.finfo(np.longdouble).nmant >= 63


def _sample():
    rng = np.random.default_rng(26)
    return np.concatenate([
        np.linspace(-20.0, 20.0, 40_001),
        rng.uniform(-3.0, 3.0, 100_000),
        0.625 + rng.uniform(-1e-6, 1e-6, 20_000),  # where the rational part meets the exp part
        np.geomspace(1e-300, 1.0, 2_000), -np.geomspace(1e-300, 1.0, 2_000),
    ])


def ulp_error(y, x):
    ref = np.tanh(x.astype(np.longdouble))
    ulp = np.spacing(np.abs(ref.astype(np.float64))).astype(np.longdouble)
    return np.abs((y.astype(np.longdouble) - ref) / ulp).astype(np.float64)


@pytest.mark.skipif(not EXTENDED, reason="needs an extended-precision long double reference")
def test_tanh_within_two_ulp():
    x = _sample()
    err = ulp_error(runtime.tanh(x), x)
    assert err.max() <= 2.0, (err.max(), x[np.argmax(err)])


def test_tanh_special_values_and_symmetry():
    x = np.array([0.0, -0.0, np.inf, -np.inf, 22.5, -30.0, 1e-310, -1e-310])
    y = runtime.tanh(x)
    assert list(y[:6]) == [0.0, 0.0, 1.0, -1.0, 1.0, -1.0]
    assert math.copysign(1.0, y[1]) == -1.0 and math.copysign(1.0, y[0]) == 1.0
    assert y[6] == 1e-310 and y[7] == -1e-310
    assert np.isnan(runtime.tanh(np.array([np.nan]))[0]) and np.isnan(_scalar(np.nan))
    x = _sample()
    assert np.array_equal(runtime.tanh(-x), -runtime.tanh(x))
    assert _scalar(-0.3) == runtime.tanh(np.array([[-0.3]]))[0, 0]
    assert runtime.tanh(x[::-3].reshape(-1, 1)).shape == (x[::-3].size, 1)  # any layout


# `runtime.tanh_scalar` is an intrinsic (its instructions written into the caller), called
# from compiled code only; `_plain_tanh_scalar` is the same function in Python, which Numba
# compiles here as it did before the intrinsic
_scalar = numba.njit(error_model="numpy")(lambda x: runtime.tanh_scalar(x))
_plain = numba.njit(error_model="numpy")(runtime_elementwise._plain_tanh_scalar)


@numba.njit(error_model="numpy")
def _both(x):
    a = np.empty(x.size)
    b = np.empty(x.size)
    for i in range(x.size):
        a[i] = runtime.tanh_scalar(x[i])
        b[i] = _plain(x[i])
    return a, b


def test_the_intrinsic_is_the_plain_function_to_the_bit():
    x = np.concatenate([_sample(), [0.0, -0.0, np.inf, -np.inf, np.nan, 0.625, -0.625, 22.0,
                                    -22.0, 5e-324, -5e-324]])
    a, b = _both(x)
    assert np.array_equal(a.view(np.int64), b.view(np.int64))
    assert _scalar(1) == _plain(1.0)  # an integer argument, as a float
