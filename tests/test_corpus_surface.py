"""Surface corpus (issue #11): jitgrad vs plain Python and finite differences, and the tape
as the third oracle; plus the edge cases that used to crash."""

import math

import numpy as np
import pytest
from corpus_check import (
    case_params,
    check_single_grad,
    check_tape_agrees,
    check_value_and_grad,
    point_params,
)
from corpus_surface import SURFACE_CASES, TAPE_REFUSES
from fd import numeric_grad

import jitgrad
from jitgrad import UnsupportedError, tape
from jitgrad.prims.primitives import PRIMITIVES


@pytest.mark.parametrize(("case", "idx"), point_params(SURFACE_CASES))
def test_value_and_grad(case, idx):
    check_value_and_grad(case, idx)


# Every fourth case: the single-argument path is the same for all, and each case compiles
# a gradient of its own (the whole table is checked by test_value_and_grad).
@pytest.mark.parametrize("by", ["position", "name"])
@pytest.mark.parametrize("case", case_params(SURFACE_CASES[::4]))
def test_grad_single_argument(case, by):
    check_single_grad(case, by)


@pytest.mark.parametrize(("case", "idx"), point_params(SURFACE_CASES))
def test_tape_agrees(case, idx):
    check_tape_agrees(case, idx, TAPE_REFUSES)


def arcsin_sum(x):
    return np.sum(np.arcsin(x))


def arcsin_scalar(x):
    return math.asin(x) + np.arcsin(x)


def test_arcsin_at_one_is_inf_not_an_exception():
    """Division by zero in generated code follows NumPy (inf), as in numpy and JAX."""
    g = jitgrad.grad(arcsin_sum)(np.array([1.0, 0.5, -1.0]))
    assert np.isinf(g[0]) and np.isinf(g[2]) and np.isclose(g[1], 1.0 / math.sqrt(0.75))
    assert math.isinf(jitgrad.grad(arcsin_scalar)(1.0))


def power_scalar(x, y):
    return x ** y


def test_power_at_zero_has_zero_exponent_gradient():
    """d(x**y)/dy at x == 0 is 0 (as JAX and autograd), not 0 * log(0) = nan."""
    assert jitgrad.grad(power_scalar, wrt=(0, 1))(0.0, 2.0) == (0.0, 0.0)
    assert tape.grad(power_scalar, wrt=(0, 1))(0.0, 2.0) == (0.0, 0.0)


def sum_axis0_vector(x):
    return np.sum(x, axis=0)


def test_reduction_of_a_vector_over_axis0_is_a_scalar():
    g = jitgrad.grad(sum_axis0_vector)(np.arange(3.0))
    np.testing.assert_array_equal(g, np.ones(3))


def equal_result(x, y):
    return x == y


def test_comparison_result_has_zero_gradient():
    assert jitgrad.value_and_grad(equal_result, wrt=(0, 1))(1.0, 1.0) == (1.0, (0.0, 0.0))


def cumprod_axis(x):
    return np.sum(np.cumprod(x, axis=1))


def einsum_ellipsis(x):
    return np.einsum("...j,...j->", x, x)


def test_einsum_with_an_ellipsis():
    """'...' stands for the leading axes, written out by the build (ranks are known): the sum
    of squares here, 2x its gradient."""
    x = np.array([[0.5, -1.0, 2.0], [0.3, 0.1, -0.7]])
    value, g = jitgrad.value_and_grad(einsum_ellipsis)(x)
    assert value == pytest.approx(np.sum(x * x), rel=1e-14)
    np.testing.assert_allclose(g, 2.0 * x, rtol=1e-14)


@pytest.mark.parametrize(("fn", "arg", "message"), [
    (cumprod_axis, np.ones((2, 3)), "np.cumprod along an axis of a matrix"),
])
def test_refused_forms(fn, arg, message):
    with pytest.raises(UnsupportedError, match=message.replace("(", r"\(").replace(")", r"\)")):
        jitgrad.grad(fn)(arg)


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_scalar_only_primitives_on_the_tape(name):
    """math.erf/erfc cannot run on the tape (math.* calls float()); their primitive can: its
    rule, on the tape, against finite differences and NumPy's value."""
    prim = PRIMITIVES[name]

    def f(x):
        return np.sum(prim(x) * x)

    x = np.array([-1.3, -0.2, 0.4, 2.1])
    np.testing.assert_allclose(prim(x), [getattr(math, name)(v) for v in x], rtol=1e-15)
    np.testing.assert_allclose(tape.grad(f)(x), numeric_grad(f, (x,), 0), rtol=1e-7)
