"""The shape-and-axes corpus (issue #11, corpus_shape_fns): jitgrad vs plain Python and finite
differences for every float argument, and the tape as the third oracle."""

import numpy as np
import pytest
from corpus_check import (
    case_params,
    check_single_grad,
    check_tape_agrees,
    check_value_and_grad,
    point_params,
)
from corpus_shape import SHAPE_CASES, TAPE_REFUSES
from fd import numeric_grad

import jitgrad


@pytest.mark.parametrize(("case", "idx"), point_params(SHAPE_CASES))
def test_value_and_grad(case, idx):
    check_value_and_grad(case, idx)


# every eighth case: the single-argument path is the same for all (each compiles anew)
@pytest.mark.parametrize("case", case_params(SHAPE_CASES[::8]))
def test_grad_single_argument(case):
    check_single_grad(case, "position")


@pytest.mark.parametrize(("case", "idx"), point_params(SHAPE_CASES))
def test_tape_agrees(case, idx):
    check_tape_agrees(case, idx, TAPE_REFUSES)


def lorenz_rate(x, sigma=10.0, beta=8.0 / 3.0, rho=28.0):
    return np.array([sigma * (x[1] - x[0]), rho * x[0] - x[1] - x[0] * x[2],
                     x[0] * x[1] - beta * x[2]])


def test_vjp_fills_in_default_arguments():
    """jitgrad.vjp(f, x) of ``f(x, sigma=10.0, ...)``: the defaults, as a call would take."""
    x = np.array([0.3, -1.2, 2.0])
    ct = np.array([0.5, -1.0, 2.0])
    value, pullback = jitgrad.vjp(lorenz_rate, x)
    np.testing.assert_allclose(value, lorenz_rate(x))
    (g, *rest) = pullback(ct)
    assert all(r is not None for r in rest)  # the float defaults are primals too
    ref = numeric_grad(lambda v: float(np.dot(lorenz_rate(v), ct)), (x,), 0)
    np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-8)


def checked_rows(x):
    assert x.ndim == 2, "rows of a matrix"
    assert len(x) > 1  # a run-time condition: checked by the compiled gradient
    return np.sum(x[1] * x[0])


def test_assert_is_checked_when_known_while_building():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(jitgrad.grad(checked_rows)(x), [x[1], x[0]])
    with pytest.raises(jitgrad.JitgradError, match="AssertionError") as info:
        jitgrad.grad(checked_rows)(np.ones(3))
    assert info.value.loc is not None and "x.ndim == 2" in info.value.loc.line
    with pytest.raises(AssertionError):  # the run-time one, raised by the compiled code
        jitgrad.grad(checked_rows)(np.ones((1, 3)))


def unpacked_rows(x, pos):
    a, b, c = x
    dx, dy = pos[1] - pos[0]
    return a * b - c * c + dx * dy


def test_unpacking_an_array_checks_its_length():
    """``a, b, c = x``: rows of x, after the run time check Python and Numba make."""
    x, pos = np.array([0.5, -1.5, 2.0]), np.array([[0.1, 0.2], [1.0, -0.5]])
    g = jitgrad.grad(unpacked_rows, wrt=(0, 1))(x, pos)
    np.testing.assert_allclose(g[0], numeric_grad(unpacked_rows, (x, pos), 0), rtol=1e-6)
    np.testing.assert_allclose(g[1], numeric_grad(unpacked_rows, (x, pos), 1), rtol=1e-6)
    with pytest.raises(ValueError, match="unpack"):
        jitgrad.grad(unpacked_rows)(np.ones(4), pos)
