"""Statements real code uses (issue #25, item 1): ``raise`` and ``assert`` on run-time
conditions, ``try`` around code that cannot raise, and string arguments used as switches.

The compiled gradient raises the user's own exception (type and message) where the user's code
does; a raise that runs on every call for a signature is raised when the gradient is built.
Gradients are checked against central differences (``fd.numeric_grad``) and the tape.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from fd import numeric_grad

import jitgrad
from jitgrad import tape


def clipped_log(x, lo):
    if lo <= 0.0:
        raise ValueError("lo must be positive")
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < lo:
            raise FloatingPointError("an entry below lo")
        total += np.log(x[i])
    return total


def checked_norm(x):
    assert x.ndim == 1, "x must be a vector"
    s = np.sum(x * x)
    assert s > 1e-12, "x must not be zero"
    assert s < 1e6
    return np.sqrt(s)


def raises_for_this_signature(x):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got rank {x.ndim}")
    return np.sum(x * x)


def after_a_raising_branch(x, a):
    if a > 0.0:
        y = np.exp(x) * a
    else:
        raise ValueError("a must be positive")
    return np.sum(y)


def try_else_finally(x):
    try:
        y = np.tanh(x) * 2.0
    except FloatingPointError:
        y = x
    else:
        y = y + x
    finally:
        scale = 0.5
    return np.sum(y * y) * scale


def activation(x, kind="relu", alpha=0.1):
    if kind == "relu":
        y = np.maximum(x, 0.0)
    elif kind in ("leaky", "leaky_relu"):
        y = np.where(x > 0.0, x, alpha * x)
    elif kind == "tanh":
        y = np.tanh(x)
    else:
        raise ValueError(f"unknown activation {kind!r}")
    return np.sum(y * y)


def configured(params, x):
    h = x @ params["w"]
    if params["act"] == "tanh":
        h = np.tanh(h)
    return np.sum(h * h) * params["scale"]


X = np.array([0.5, -1.2, 2.0, 0.3])


def test_raise_in_a_loop_and_a_branch():
    x = np.array([1.5, 2.0, 0.7])
    g = jitgrad.grad(clipped_log)
    np.testing.assert_allclose(g(x, 0.1), 1.0 / x)
    with pytest.raises(FloatingPointError, match="^an entry below lo$"):
        g(x, 1.0)
    with pytest.raises(ValueError, match="^lo must be positive$"):
        g(x, -1.0)
    np.testing.assert_allclose(g(x, 0.1), 1.0 / x)  # still compiled and working


def test_raise_is_the_users_exception_not_a_jitgrad_error():
    with pytest.raises(ValueError) as info:
        jitgrad.grad(clipped_log)(X, -1.0)
    assert type(info.value) is ValueError
    assert str(info.value) == "lo must be positive"


def test_assert_on_run_time_values_raises_assertion_error():
    g = jitgrad.value_and_grad(checked_norm)
    v, d = g(X)
    np.testing.assert_allclose(v, np.linalg.norm(X))
    np.testing.assert_allclose(d, X / np.linalg.norm(X))
    with pytest.raises(AssertionError, match="^x must not be zero$"):
        g(np.zeros(3))
    with pytest.raises(AssertionError) as info:
        g(np.full(3, 1e4))
    assert str(info.value) == ""  # an assert without a message


def test_assert_known_while_building_names_its_message():
    with pytest.raises(jitgrad.JitgradError, match="x must be a vector"):
        jitgrad.grad(checked_norm)(np.ones((2, 2)))


def test_raise_on_every_call_of_a_signature_is_raised_when_building():
    g = jitgrad.grad(raises_for_this_signature)
    np.testing.assert_allclose(g(X), 2.0 * X)
    with pytest.raises(ValueError) as info:
        g(np.ones((2, 2)))
    assert str(info.value) == "expected a vector, got rank 2"
    line = raises_for_this_signature.__code__.co_firstlineno + 2  # the raise, as a note
    assert any(f"line {line}:" in n for n in info.value.__notes__)


def test_names_after_a_raising_branch_take_the_other_branch():
    g = jitgrad.grad(after_a_raising_branch, wrt=(0, 1))
    gx, ga = g(X, 1.5)
    np.testing.assert_allclose(gx, 1.5 * np.exp(X))
    np.testing.assert_allclose(ga, np.sum(np.exp(X)))
    with pytest.raises(ValueError, match="a must be positive"):
        g(X, -1.0)


def test_raise_in_forward_mode_and_vjp():
    with pytest.raises(ValueError, match="a must be positive"):
        jitgrad.jvp(after_a_raising_branch, (X, -1.0), (np.ones(4), 0.0))
    _, tangent = jitgrad.jvp(after_a_raising_branch, (X, 2.0), (np.ones(4), 0.0))
    np.testing.assert_allclose(tangent, 2.0 * np.sum(np.exp(X)))


def test_try_takes_the_body_else_and_finally():
    g = jitgrad.grad(try_else_finally)
    ref = numeric_grad(try_else_finally, (X,), 0)
    np.testing.assert_allclose(g(X), ref, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", ["relu", "leaky", "leaky_relu", "tanh"])
def test_string_switch_builds_per_string(kind):
    x = np.array([0.5, -1.2, 2.0, 0.3, -0.4])
    g = jitgrad.grad(activation)(x, kind)
    np.testing.assert_allclose(g, numeric_grad(lambda v: activation(v, kind), (x,), 0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g, tape.grad(activation)(x, kind), rtol=1e-10)


def test_string_switch_by_keyword_default_and_unknown_value():
    g = jitgrad.grad(activation)
    np.testing.assert_allclose(g(X), 2.0 * np.maximum(X, 0.0))  # the default, "relu"
    np.testing.assert_allclose(g(X, kind="tanh"), g(X, "tanh"))
    assert "'tanh'" in g.source(X, "tanh")  # the signature names the string
    with pytest.raises(ValueError) as info:
        g(X, "gelu")
    assert str(info.value) == "unknown activation 'gelu'"
    with pytest.raises(jitgrad.SignatureError, match="it is a str"):
        jitgrad.grad(activation, wrt=1)(X, "relu")


def test_string_leaf_of_a_dict_argument():
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(3, 2)), "act": "tanh", "scale": 0.5}
    x = rng.normal(size=(4, 3))
    g = jitgrad.grad(configured)(params, x)
    assert g["act"] is None
    ref = numeric_grad(lambda w: configured({**params, "w": w}, x), (params["w"],), 0)
    np.testing.assert_allclose(g["w"], ref, rtol=1e-6, atol=1e-8)
    linear = jitgrad.grad(configured)({**params, "act": "linear"}, x)["w"]
    np.testing.assert_allclose(linear, 2.0 * 0.5 * x.T @ (x @ params["w"]), rtol=1e-10)


def test_forward_mode_and_hessians_with_a_string_argument_and_defaults():
    x = np.array([0.5, -1.2, 2.0, 0.3, -0.4])
    h = jitgrad.hessian(activation)(x, "tanh")
    t = np.tanh(x)
    np.testing.assert_allclose(h, np.diag(2.0 * (1.0 - t * t) * (1.0 - 3.0 * t * t)),
                               rtol=1e-10, atol=1e-12)
    hv = jitgrad.hvp(activation)(x, "tanh", np.ones(5))
    np.testing.assert_allclose(hv, np.diag(h), rtol=1e-10)
    j = jitgrad.jacobian(activation, mode="forward")(x, "tanh")
    np.testing.assert_allclose(j, jitgrad.grad(activation)(x, "tanh"), rtol=1e-12)
    np.testing.assert_allclose(jitgrad.hessian(activation)(x), np.diag(2.0 * (x > 0.0)))
    _, tangent = jitgrad.jvp(activation, (x,), (np.ones(5),))  # kind="relu", the default
    assert tangent == pytest.approx(np.sum(2.0 * np.maximum(x, 0.0)))


def moments_or_raise(x, c):
    if c > 0.0:
        m = np.mean(x)
        pair = (m, np.mean((x - m) ** 2))
    else:
        raise ValueError("c must be positive")
    return pair[0] + pair[1] * c


def test_a_tuple_made_beside_a_raising_branch():
    x = np.array([0.3, 1.2, -0.5])
    np.testing.assert_allclose(jitgrad.grad(moments_or_raise)(x, 2.0),
                               numeric_grad(moments_or_raise, (x, 2.0), 0), rtol=1e-6)
    with pytest.raises(ValueError, match="c must be positive"):
        jitgrad.grad(moments_or_raise)(x, -1.0)


def checked_prange(x, w):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        assert x[i] < 100.0, "x too big"
        a = np.tanh(x[i] * w[i])
        b = np.sin(a * x[i])
        c = np.exp(-b * b)
        d = np.cos(c + a)
        total += a * b + c * d
    return total


def test_a_prange_loop_that_may_raise_runs_serially_under_parallel():
    """Numba cannot raise from a parallel loop's threads: the loop runs as range (taped, not
    in chunks), and says so; its gradient is right and it raises the user's error."""
    x = np.linspace(-1.0, 1.0, 50)
    w = np.cos(x)
    g = jitgrad.grad(checked_prange, wrt=(0, 1), parallel=True)
    gx, gw = g(x, w)
    np.testing.assert_allclose(gx, numeric_grad(checked_prange, (x, w), 0), rtol=1e-6,
                               atol=1e-9)
    np.testing.assert_allclose(gw, numeric_grad(checked_prange, (x, w), 1), rtol=1e-6,
                               atol=1e-9)
    assert "taped in reverse (it may raise, so it runs serially" in g.source(x, w)
    with pytest.raises(AssertionError, match="x too big"):
        g(np.full(50, 200.0), w)


SCHEME = "central"  # a global string: a constant, as Numba freezes it


def scheme_switch(x):
    if SCHEME == "central":
        return np.sum(np.sin(x))
    return np.sum(np.cos(x))


def make_penalty(kind):
    def penalty(w):
        if kind == "l1":
            return np.sum(np.abs(w))
        return np.sum(w * w)
    return penalty


def test_global_and_closure_strings_are_constants():
    x = np.array([0.2, -0.7, 1.3])
    np.testing.assert_allclose(jitgrad.grad(scheme_switch)(x), np.cos(x))
    np.testing.assert_allclose(jitgrad.grad(make_penalty("l1"))(x), np.sign(x))
    np.testing.assert_allclose(jitgrad.grad(make_penalty("l2"))(x), 2.0 * x)


def weighted_mse(pred, target, weights=None):
    r = pred - target
    if weights is None:
        return np.mean(r * r)
    assert weights is not None
    return np.sum(weights * r * r) / np.sum(weights)


def test_none_arguments_and_is_none_switches():
    p, t = np.array([0.3, 1.2, -0.5]), np.array([0.1, 1.0, 0.0])
    w = np.array([1.0, 2.0, 0.5])
    g = jitgrad.grad(weighted_mse)
    np.testing.assert_allclose(g(p, t), 2.0 * (p - t) / 3.0)  # the default, None
    np.testing.assert_allclose(g(p, t, None), g(p, t))
    np.testing.assert_allclose(g(p, t, w), 2.0 * w * (p - t) / np.sum(w))
    np.testing.assert_allclose(jitgrad.hessian(weighted_mse)(p, t), np.eye(3) * 2.0 / 3.0)
    _, tangent = jitgrad.jvp(weighted_mse, (p, t, None), (np.ones(3), None, None))
    assert tangent == pytest.approx(np.sum(2.0 * (p - t) / 3.0))
    with pytest.raises(jitgrad.SignatureError, match="'weights': it is None"):
        jitgrad.grad(weighted_mse, wrt=2)(p, t)
