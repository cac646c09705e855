"""custom_vjp, stop_gradient, gradients from @njit code (issue #14).

Custom rules are checked against the rule itself (not finite differences: they are not the
derivative), in a loop and inside a helper; the generated source must show the rule.
"""

import inspect

import numpy as np
import pytest

import jitgrad
from jitgrad.compile import DISABLE_JIT
from tests import transforms_fns as T


def test_ste_round_in_loop_and_helper():
    xs = np.array([0.3, 1.7, -2.2, 0.49])
    g = jitgrad.grad(T.ste_loop, wrt=0)
    for w in (1.3, -0.7, 2.05):
        assert g(w, xs) == pytest.approx(T.ste_loop_rule(w, xs), rel=1e-12)


def test_ste_round_value_is_rounded():
    xs = np.array([0.3, 1.7, -2.2])
    v, _ = jitgrad.value_and_grad(T.ste_loop)(1.3, xs)
    assert v == pytest.approx(sum(np.floor(1.3 * x + 0.5) ** 2 for x in xs))


def test_clipped_rule_reads_residual():
    w = np.array([-1.6, -0.8, 0.2, 0.9, 1.4])
    got = jitgrad.grad(T.clipped_array)(w)
    np.testing.assert_allclose(got, T.clipped_array_rule(w), rtol=1e-12)


def test_rule_with_loop_and_none_gradient():
    g = jitgrad.grad(T.pair_loop, wrt=(0, 1))
    ga, gb = g(0.7, -1.3, 4)
    assert ga == pytest.approx(T.pair_loop_rule_a(0.7, -1.3, 4))
    assert gb == pytest.approx(T.pair_loop_rule_b(0.7, -1.3, 4))


def test_generated_source_shows_the_rule():
    g = jitgrad.grad(T.clipped_array)
    src = g.source(np.array([0.2, 0.5]))
    fwd_line = inspect.getsource(T.clipped_ste_fwd).splitlines()[1].strip()
    bwd_line = inspect.getsource(T.clipped_ste_bwd).splitlines()[2].strip()
    assert fwd_line in src.split("def clipped_array_adjoint")[0]
    assert bwd_line in src.split("def clipped_array_adjoint")[1]


def test_stop_gradient():
    x = np.array([0.5, -1.2, 2.0])
    np.testing.assert_allclose(jitgrad.grad(T.stopped)(x), x * x, rtol=1e-12)
    assert jitgrad.grad(T.stopped_scalar)(0.8) == pytest.approx(np.sin(0.8) + 1.6)
    assert jitgrad.stop_gradient(2.5) == 2.5
    assert T.ste_round(1.6) == 2.0  # called from Python: the function itself


@pytest.mark.skipif(DISABLE_JIT, reason="the entry is plain Python under JITGRAD_DISABLE_JIT")
def test_gradient_callable_from_njit():
    import numba

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal(8)
    w0 = np.zeros(3)
    g = jitgrad.grad(T.sgd_loss, wrt=0)
    entry = g.njit(w0, x, y)

    @numba.njit
    def sgd(w, x, y, steps):
        w = w.copy()
        for _ in range(steps):
            w -= 0.1 * entry(w, x, y)
        return w

    w = sgd(w0, x, y, 5000)
    np.testing.assert_allclose(w, np.linalg.lstsq(x, y, rcond=None)[0], rtol=1e-6)
    np.testing.assert_allclose(entry(w0, x, y), g(w0, x, y))
