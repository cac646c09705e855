"""``has_aux=True`` on grad, value_and_grad, vjp and jacobian, with JAX's return conventions:
``grad`` gives ``(g, aux)``, ``value_and_grad`` ``((value, aux), g)``, ``vjp`` ``(value,
vjp_fn, aux)``, ``jacobian`` ``(J, aux)``. aux is any tree of numbers and arrays, computed in
the same compiled forward pass, never differentiated. Gradients against central finite
differences (`tests/fd.py`) and JAX where installed; aux against the plain function."""

import numpy as np
import pytest

import jitgrad
from tests.fd import numeric_grad


def fit(w, x, y):
    pred = x @ w
    r = pred - y
    return np.mean(r ** 2), {"pred": pred, "n": x.shape[0], "worst": np.max(np.abs(r)),
                             "w": w, "pair": (np.sum(r), 2)}


def looped(x, c):  # aux from a loop with a carried value and a branch
    s = 0.0
    peak = -1e300
    for i in range(x.shape[0]):
        s = s + np.sin(x[i] * c)
        peak = max(peak, x[i])
    return s, [peak, s * 2.0]


def vector(w, x):
    y = np.tanh(x @ w)
    return y, {"energy": np.sum(y * y)}


def not_a_pair(x):
    return np.sum(x)


rng = np.random.default_rng(3)
W = rng.normal(size=3)
X = rng.normal(size=(6, 3))
Y = rng.normal(size=6)


def value_of(f):
    return lambda *a: f(*a)[0]


def assert_aux_equal(got, want):
    """Equal trees; a list the function builds comes back a tuple (the builder reads list
    literals as tuples), as docs/guides/transforms.md says."""
    if isinstance(want, list):
        want = tuple(want)
    assert type(got) is type(want) or (isinstance(want, (int, float)) and np.isscalar(got))
    if isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            assert_aux_equal(got[k], want[k])
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert_aux_equal(a, b)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_grad_with_aux():
    g, aux = jitgrad.grad(fit, has_aux=True)(W, X, Y)
    np.testing.assert_allclose(g, numeric_grad(value_of(fit), (W, X, Y), 0), rtol=1e-6)
    assert_aux_equal(aux, fit(W, X, Y)[1])
    assert not np.shares_memory(aux["w"], W)  # aux arrays are the caller's own


def test_value_and_grad_with_aux_and_several_wrt():
    (value, aux), (gw, gx) = jitgrad.value_and_grad(fit, wrt=(0, 1), has_aux=True)(W, X, Y)
    assert value == pytest.approx(fit(W, X, Y)[0], rel=1e-12)
    np.testing.assert_allclose(gw, numeric_grad(value_of(fit), (W, X, Y), 0), rtol=1e-6)
    np.testing.assert_allclose(gx, numeric_grad(value_of(fit), (W, X, Y), 1), rtol=1e-6,
                               atol=1e-9)
    assert aux["n"] == 6 and aux["pair"][1] == 2


@pytest.mark.parametrize("options", [{}, {"memory_cap": 64}, {"parallel": True}],
                         ids=["plain", "memory-cap", "parallel"])
def test_aux_from_a_loop(options):
    x = np.array([0.3, -0.2, 0.9, 0.1])
    g, aux = jitgrad.grad(looped, has_aux=True, **options)(x, 1.7)
    np.testing.assert_allclose(g, numeric_grad(value_of(looped), (x, 1.7), 0), rtol=1e-6)
    assert_aux_equal(aux, looped(x, 1.7)[1])


def test_vjp_and_jacobian_with_aux():
    value, pull, aux = jitgrad.vjp(vector, W, X, has_aux=True)
    ct = rng.normal(size=6)
    gw, gx = pull(ct)
    np.testing.assert_allclose(value, vector(W, X)[0], rtol=1e-12)
    np.testing.assert_allclose(gw, numeric_grad(lambda w: float(vector(w, X)[0] @ ct), (W,), 0),
                               rtol=1e-6)
    np.testing.assert_allclose(gx, numeric_grad(lambda x: float(vector(W, x)[0] @ ct), (X,), 0),
                               rtol=1e-6, atol=1e-9)
    assert aux["energy"] == pytest.approx(vector(W, X)[1]["energy"], rel=1e-12)
    J, aux = jitgrad.jacobian(vector, has_aux=True)(W, X)
    np.testing.assert_allclose(ct @ J, gw, rtol=1e-12)
    assert aux["energy"] == pytest.approx(vector(W, X)[1]["energy"], rel=1e-12)


def test_a_function_that_returns_no_pair_is_refused():
    with pytest.raises(jitgrad.ShapeError, match="must return a pair"):
        jitgrad.grad(not_a_pair, has_aux=True)(np.ones(3))


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def fit_jax(w, x, y):
        r = x @ w - y
        return jnp.mean(r ** 2), {"worst": jnp.max(jnp.abs(r))}

    (v, aux), g = jitgrad.value_and_grad(fit, has_aux=True)(W, X, Y)
    (vj, auxj), gj = jax.value_and_grad(fit_jax, has_aux=True)(W, X, Y)
    assert v == pytest.approx(float(vj), rel=1e-12)
    np.testing.assert_allclose(g, gj, rtol=1e-12)
    assert aux["worst"] == pytest.approx(float(auxj["worst"]), rel=1e-12)
