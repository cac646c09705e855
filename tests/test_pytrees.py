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


def horner_over_keys(d):
    """A value that depends on the order the dict is iterated in."""
    acc = 0.0
    for k in d:
        acc = acc * 2.0 + np.sum(d[k] ** 2)
    return acc


def test_a_dict_is_iterated_in_the_callers_order():
    """``for k in d`` runs in the dict's own (insertion) order, as Python does, not its sorted
    order (it did: a silently wrong value and gradient); the gradient's dict comes back in
    that order too, and each order is its own build."""
    d = {"b": np.array([1.0, 2.5]), "a": np.array([3.0]), "c": np.array([0.5, 0.25])}
    vg = jitgrad.value_and_grad(horner_over_keys)
    for order in (("b", "a", "c"), ("a", "b", "c"), ("c", "a", "b")):
        dd = {k: d[k] for k in order}
        value, g = vg(dd)
        assert value == pytest.approx(horner_over_keys(dd), rel=1e-14)
        assert tuple(g) == order
        for k in order:
            want = numeric_grad(lambda v, k=k, dd=dd: horner_over_keys({**dd, k: v}), (dd[k],), 0)
            np.testing.assert_allclose(g[k], want, rtol=1e-7)


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


def tree_loss(p, x):
    return np.sum(np.tanh(x @ p["w"] + p["b"]) ** 2) * p["s"] + p["n"]


P_TREE = {"w": np.array([[0.4, -0.3], [0.8, 0.1], [-0.5, 0.2]]), "b": np.array([0.3, -0.1]),
          "s": 1.3, "n": 2}


def test_second_order_of_a_tree_as_jax_gives_it():
    """hvp and hessian of a dict of parameters (with an integer leaf): ``v`` and the product
    are trees of the parameters' structure, the Hessian JAX's nested blocks (``H['w']['b']``
    of shape w.shape + b.shape, None at the integer leaf); each block against central
    differences of the gradient, compiled as users run it."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3))
    v = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2), "s": 0.7, "n": None}
    grad = jitgrad.grad(tree_loss)
    hv = jitgrad.hvp(tree_loss)(P_TREE, x, v)
    H = jitgrad.hessian(tree_loss)(P_TREE, x)
    assert hv["n"] is None and H["n"] is None and H["w"]["n"] is None
    assert np.shape(H["w"]["b"]) == (3, 2, 2) and np.shape(H["s"]["w"]) == (3, 2)
    eps = 1e-6
    for leaf in ("w", "b", "s"):  # column by column: the gradient's central differences
        base = np.asarray(P_TREE[leaf], dtype=float)
        for i in np.ndindex(*base.shape):
            up, down = dict(P_TREE), dict(P_TREE)
            up_v, down_v = base.copy(), base.copy()
            up_v[i] += eps
            down_v[i] -= eps
            up[leaf] = up_v if base.ndim else float(up_v)
            down[leaf] = down_v if base.ndim else float(down_v)
            gu, gd = grad(up, x), grad(down, x)
            for row in ("w", "b", "s"):
                column = (np.asarray(gu[row]) - np.asarray(gd[row])) / (2 * eps)
                got = np.asarray(H[row][leaf])[(...,) + i]
                np.testing.assert_allclose(got, column, rtol=1e-5, atol=1e-7)
    for row in ("w", "b", "s"):  # H v from the blocks
        want = sum(np.tensordot(np.asarray(H[row][c]), np.asarray(v[c]),
                                axes=np.ndim(v[c])) for c in ("w", "b", "s"))
        np.testing.assert_allclose(hv[row], want, rtol=1e-12, atol=1e-12)
    value, g, hv2 = jitgrad.hvp(tree_loss).value_grad_hvp(P_TREE, x, v)
    assert value == pytest.approx(tree_loss(P_TREE, x), rel=1e-12)
    np.testing.assert_allclose(g["w"], grad(P_TREE, x)["w"], rtol=1e-12)
    np.testing.assert_allclose(hv2["b"], hv["b"], rtol=1e-12)
    with pytest.raises(jitgrad.SignatureError, match="not a dict with the keys"):
        jitgrad.hvp(tree_loss)(P_TREE, x, {"w": v["w"]})


def test_second_order_of_a_tree_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss_jax(p, x):
        return jnp.sum(jnp.tanh(x @ p["w"] + p["b"]) ** 2) * p["s"]

    x = np.random.default_rng(6).normal(size=(4, 3))
    floats = {k: P_TREE[k] for k in ("w", "b", "s")}
    want = jax.hessian(loss_jax, argnums=(0, 1))(floats, x)
    got = jitgrad.hessian(tree_loss, wrt=(0, 1))(P_TREE, x)
    for a in ("w", "b", "s"):
        for b in ("w", "b", "s"):
            np.testing.assert_allclose(got[0][a][0][b], want[0][a][0][b], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(got[0][a][1], want[0][a][1], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(got[1][0][a], want[1][0][a], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got[1][1], want[1][1], rtol=1e-12, atol=1e-13)


TREE_GRAD = jitgrad.grad(tree_loss)


def gradient_norm(q, x):
    d = TREE_GRAD(q, x)
    return np.sum(d["w"] ** 2) + np.sum(d["b"] ** 2) + d["s"] ** 2


def gradient_norm_by_hand(q, x):
    """``gradient_norm`` with the inner gradient written out (the oracle's path)."""
    h = np.tanh(x @ q["w"] + q["b"])
    dz = 2.0 * h * (1.0 - h ** 2) * q["s"]
    dw, db, ds = x.T @ dz, dz.sum(axis=0), np.sum(h ** 2)
    return np.sum(dw ** 2) + np.sum(db ** 2) + ds ** 2


def test_grad_of_a_function_that_takes_a_tree_gradient():
    """grad of a function that calls grad on a dict of parameters (grad of grad): forward mode
    over the inner gradient's trace, leaf by leaf, against central differences of the same
    function with its inner gradient written by hand."""
    x = np.random.default_rng(7).normal(size=(4, 3))
    got = jitgrad.grad(gradient_norm)(P_TREE, x)
    assert gradient_norm(P_TREE, x) == pytest.approx(gradient_norm_by_hand(P_TREE, x), rel=1e-12)
    assert got["n"] is None
    for leaf in ("w", "b", "s"):
        def f(v, leaf=leaf):
            return gradient_norm_by_hand({**P_TREE, leaf: v}, x)
        np.testing.assert_allclose(got[leaf], numeric_grad(f, (P_TREE[leaf],), 0), rtol=1e-6,
                                   atol=1e-8)
