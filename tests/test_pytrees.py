"""Tree arguments (`jitgrad.core.pytree`): dicts, lists and tuples, nested, of floats, ints and
arrays. The gradient has the argument's structure (JAX's convention), ``None`` at integer
leaves and at ``None``. Checked against central finite differences per leaf (`tests/fd.py`)
and against JAX where it is installed; compiled, as users run them."""

import functools

import numpy as np
import pytest

import jitgrad
from tests.fd import numeric_grad


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["head"][0] + params["head"][1]["bias"]
    return np.mean((out - y) ** 2) + params["decay"] * np.sum(params["W1"] ** 2)


def with_counts(params, x):  # an integer leaf and a None leaf: not differentiated
    s = 0.0
    for k in range(params["steps"]):
        s = s + np.sum(np.sin(x * params["w"])) * 0.5
    return s


def writes_a_leaf(params):
    w = params["w"]
    w[0] = w[0] * 3.0
    return np.sum(w * w)


rng = np.random.default_rng(7)
PARAMS = {"W1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4),
          "head": [rng.normal(size=4), {"bias": 0.25}], "decay": 0.01}
X = rng.normal(size=(6, 3))
Y = rng.normal(size=6)


def replace(tree, path, value):
    """``tree`` with the leaf at ``path`` (a tuple of keys and indices) replaced."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {**tree, head: replace(tree[head], rest, value)}
    items = list(tree)
    items[head] = replace(items[head], rest, value)
    return type(tree)(items)


def get(tree, path):
    for p in path:
        tree = tree[p]
    return tree


LEAVES = [("W1",), ("b1",), ("head", 0), ("head", 1, "bias"), ("decay",)]


def test_a_dict_of_parameters_gets_a_dict_of_gradients():
    g = jitgrad.grad(mlp_loss)(PARAMS, X, Y)
    assert set(g) == set(PARAMS) and isinstance(g["head"], list)
    assert isinstance(g["head"][1], dict) and isinstance(g["decay"], float)
    for path in LEAVES:
        want = numeric_grad(lambda v, path=path: mlp_loss(replace(PARAMS, path, v), X, Y),
                            (get(PARAMS, path),), 0)
        got = get(g, path)
        assert np.shape(got) == np.shape(want), path
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=str(path))


def test_dict_order_does_not_matter():
    shuffled = {k: PARAMS[k] for k in reversed(list(PARAMS))}
    f = jitgrad.grad(mlp_loss)
    a, b = f(PARAMS, X, Y), f(shuffled, X, Y)
    np.testing.assert_array_equal(a["W1"], b["W1"])
    assert a["head"][1]["bias"] == b["head"][1]["bias"]


def test_value_and_grad_with_several_wrt_and_a_tree():
    value, (gp, gx) = jitgrad.value_and_grad(mlp_loss, wrt=(0, 1))(PARAMS, X, Y)
    assert value == pytest.approx(mlp_loss(PARAMS, X, Y), rel=1e-12)
    np.testing.assert_allclose(gx, numeric_grad(mlp_loss, (PARAMS, X, Y), 1), rtol=1e-6,
                               atol=1e-8)
    assert set(gp) == set(PARAMS)


def test_integer_and_none_leaves_are_not_differentiated():
    params = {"w": np.array([0.3, -0.2]), "steps": 3, "unused": None}
    x = np.array([1.0, 2.0])
    g = jitgrad.grad(with_counts)(params, x)
    assert g["steps"] is None and g["unused"] is None
    want = numeric_grad(lambda w: with_counts({**params, "w": w}, x), (params["w"],), 0)
    np.testing.assert_allclose(g["w"], want, rtol=1e-6, atol=1e-8)


def test_a_leaf_the_function_writes_into_is_copied():
    params = {"w": np.array([1.0, 2.0])}
    g = jitgrad.grad(writes_a_leaf)(params)
    np.testing.assert_array_equal(params["w"], [1.0, 2.0])  # the caller's array untouched
    want = numeric_grad(lambda w: writes_a_leaf({"w": w.copy()}), (np.array([1.0, 2.0]),), 0)
    np.testing.assert_allclose(g["w"], want, rtol=1e-6)


def test_float32_leaves_come_back_float32():
    params = {"w": np.array([0.5, 1.5], dtype=np.float32), "b": 0.1}
    g = jitgrad.grad(lambda_free_sum)(params)
    assert g["w"].dtype == np.float32
    np.testing.assert_allclose(g["w"], 2 * params["w"], rtol=1e-6)


def lambda_free_sum(p):
    return np.sum(p["w"] ** 2) + p["b"]


def missing_key(params):
    return params["nope"] * 2.0


def test_a_missing_key_is_refused_at_the_line():
    with pytest.raises(jitgrad.UnsupportedError, match="no key 'nope'.*'w'") as e:
        jitgrad.grad(missing_key)({"w": 1.0})
    assert "test_pytrees.py" in str(e.value)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def mlp_jax(params, x, y):
        h = jnp.tanh(x @ params["W1"] + params["b1"])
        out = h @ params["head"][0] + params["head"][1]["bias"]
        return jnp.mean((out - y) ** 2) + params["decay"] * jnp.sum(params["W1"] ** 2)

    want = jax.grad(mlp_jax)(PARAMS, X, Y)
    got = jitgrad.grad(mlp_loss)(PARAMS, X, Y)
    for path in LEAVES:
        np.testing.assert_allclose(get(got, path), get(want, path), rtol=1e-12, atol=1e-14)


def vector_of_tree(p, x):
    return np.tanh(x @ p["w"] + p["b"] * p["n"])


P_VEC = {"w": np.array([0.4, -0.3, 0.8]), "b": 0.3, "n": 2}
X_VEC = np.random.default_rng(2).normal(size=(4, 3))


def fd_columns(f, p, path, eps=1e-6):
    """Central differences of the array-valued ``f(p)`` along each entry of the leaf at
    ``path``: shape value.shape + leaf.shape."""
    leaf = np.asarray(get(p, path), dtype=float)
    cols = []
    for i in np.ndindex(*leaf.shape):
        up, down = leaf.copy(), leaf.copy()
        up[i] += eps
        down[i] -= eps
        as_leaf = (lambda a: a) if leaf.shape else float
        cols.append((f(replace(p, path, as_leaf(up))) - f(replace(p, path, as_leaf(down))))
                    / (2 * eps))
    return np.stack(cols, axis=-1).reshape(np.shape(cols[0]) + leaf.shape)


def test_vjp_jacobian_and_jvp_take_trees():
    f = functools.partial(vector_of_tree, x=X_VEC)
    J = jitgrad.jacobian(vector_of_tree)(P_VEC, X_VEC)
    assert set(J) == {"w", "b", "n"} and J["n"] is None
    for path in (("w",), ("b",)):
        np.testing.assert_allclose(J[path[0]], fd_columns(f, P_VEC, path), rtol=1e-6, atol=1e-9)
    ct = np.array([1.0, -0.5, 2.0, 0.25])
    value, pull = jitgrad.vjp(vector_of_tree, P_VEC, X_VEC)
    np.testing.assert_allclose(value, vector_of_tree(P_VEC, X_VEC), rtol=1e-12)
    gp, _ = pull(ct)
    np.testing.assert_allclose(gp["w"], ct @ J["w"], rtol=1e-12)
    assert gp["b"] == pytest.approx(float(ct @ J["b"]), rel=1e-12) and gp["n"] is None
    tangent = {"w": np.array([1.0, 0.0, -1.0]), "b": 0.5, "n": None}
    _, t = jitgrad.jvp(vector_of_tree, (P_VEC, X_VEC), (tangent, None))
    np.testing.assert_allclose(t, J["w"] @ tangent["w"] + J["b"] * 0.5, rtol=1e-10)


def test_forward_mode_second_order_of_a_tree_is_refused_with_the_way_out():
    with pytest.raises(jitgrad.SignatureError, match="jacobian\\(jitgrad.grad"):
        jitgrad.hessian(lambda_free_sum)({"w": np.ones(2), "b": 0.1})
