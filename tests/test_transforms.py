"""custom_vjp, stop_gradient, gradients from @njit code (issue #14).

Custom rules are checked against the rule itself (not finite differences: they are not the
derivative), in a loop and inside a helper; the generated source must show the rule.
"""

import inspect

import numpy as np
import pytest
from corpus import LOOP_CASES, STRAIGHT_CASES
from fd import numeric_grad

import jitgrad
from jitgrad.backend.numba.compile import DISABLE_JIT
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


def test_rule_of_njit_functions_matches_derivative():
    x = np.array([0.3, -1.2, 0.05])
    np.testing.assert_allclose(jitgrad.grad(T.softclip_loss)(x),
                               2.0 * (1.0 - np.tanh(2.0 * x) ** 2), rtol=1e-12)
    assert T.softclip_fwd(0.5)[0] == np.tanh(0.5)  # still a Numba function


def test_generated_source_shows_the_rule():
    g = jitgrad.grad(T.clipped_array)
    x = np.array([0.2, 0.5])
    fwd_line = inspect.getsource(T.clipped_ste_fwd).splitlines()[1].strip()
    bwd_line = inspect.getsource(T.clipped_ste_bwd).splitlines()[2].strip()
    assert fwd_line in g.source("forward", x) and fwd_line not in g.source("adjoint", x)
    assert bwd_line in g.source("adjoint", x)


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


# ----------------------------------------------------------------------------- vjp, jacobian



def _fd_jacobian(f, args, k):
    """Central differences of an array-valued (or scalar) f: shape value.shape + arg.shape."""
    value = np.asarray(f(*args))
    cols = []
    for idx in np.ndindex(*value.shape):
        cols.append(numeric_grad(lambda *a, idx=idx: np.asarray(f(*a))[idx], args, k))
    return np.array(cols).reshape(value.shape + np.shape(args[k]))


def _floats(args):
    return tuple(k for k, a in enumerate(args) if isinstance(a, float) or (
        isinstance(a, np.ndarray) and a.dtype.kind == "f"))


ARRAY_CASES = [
    (T.arr_straight, (np.array([0.3, -0.5, 0.8]), np.arange(6.0).reshape(2, 3) / 5)),
    (T.arr_running_sum, (np.array([0.3, -0.5, 0.8]), 5)),
    (T.arr_branch, (np.array([0.3, -0.5, 0.8]), 0.7)),
    (T.arr_branch, (np.array([0.3, -0.5, 0.8]), -0.7)),
    (T.arr_inplace, (np.array([0.3, -0.5, 0.8, 1.1]),)),
    (T.euler_trajectory, (2.0, 0.3, 1.0, 0.0, 6)),
    (T.arr_matrix, (np.array([[0.3, -0.5], [0.8, 0.1]]), np.array([1.2, -0.4]))),
]


@pytest.mark.parametrize(("fn", "args"), ARRAY_CASES,
                         ids=[f"{f.__name__}{k}" for k, (f, _) in enumerate(ARRAY_CASES)])
def test_array_valued_jacobian_and_vjp(fn, args):
    wrt = _floats(args)
    jacs = jitgrad.jacobian(fn, wrt=wrt)(*args)
    for k, J in zip(wrt, jacs):
        np.testing.assert_allclose(J, _fd_jacobian(fn, args, k), rtol=1e-5, atol=1e-7)
    value, pullback = jitgrad.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    ct = np.random.default_rng(1).standard_normal(np.shape(value))
    grads = pullback(ct)
    for k, J in zip(wrt, jacs):
        want = np.tensordot(ct, J, axes=np.ndim(ct))
        np.testing.assert_allclose(grads[k], want, rtol=1e-9, atol=1e-12)
    assert all(grads[k] is None for k in range(len(args)) if k not in wrt)


# A sample of the scalar corpus (each case compiles its own adjoint): every sixth function.
SCALAR_CASES = STRAIGHT_CASES[::6] + LOOP_CASES[::6]


@pytest.mark.parametrize("case", SCALAR_CASES, ids=[c.name for c in SCALAR_CASES])
def test_scalar_corpus_vjp_and_jacobian(case):
    args = case.points[0]
    wrt = _floats(args)
    value, pullback = jitgrad.vjp(case.fn, *args)
    assert value == pytest.approx(case.fn(*args), rel=1e-10)
    grads = pullback(0.5)
    jacs = jitgrad.jacobian(case.fn, wrt=wrt)(*args)
    for k, J in zip(wrt, jacs):
        want = numeric_grad(case.fn, args, k)
        np.testing.assert_allclose(J, want, rtol=case.tol, atol=case.tol)
        np.testing.assert_allclose(grads[k], 0.5 * np.asarray(J), rtol=1e-9, atol=1e-12)
