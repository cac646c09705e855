"""`jitgrad.vmap`: a compiled loop around a compiled function or gradient, with JAX's
in_axes/out_axes. Per-example gradients against central differences row by row
(`tests/fd.py`) and JAX's vmap where installed; compiled, as users run them (its speed
against a Python loop: ``python -m bench.vmap``)."""

import os

import numpy as np
import pytest

import jitgrad
from tests.fd import numeric_grad


def example_loss(w, x, y):
    z = np.dot(x, w)
    return np.log1p(np.exp(-y * z)) + 0.01 * np.sum(w * w)


def tree_loss(params, x, y):
    return (np.dot(x, params["w"]) - y) ** 2 + params["b"] * y


def row_norm(x, scale):
    return np.sqrt(np.sum(x * x)) * scale


rng = np.random.default_rng(11)
W = rng.normal(size=4)
X = rng.normal(size=(7, 4))
Y = rng.choice([-1.0, 1.0], size=7)


def test_per_example_gradients():
    G = jitgrad.vmap(jitgrad.grad(example_loss), in_axes=(None, 0, 0))(W, X, Y)
    assert G.shape == (7, 4)
    for i in range(7):
        np.testing.assert_allclose(G[i], numeric_grad(example_loss, (W, X[i], Y[i]), 0),
                                   rtol=1e-6, atol=1e-9)


def test_a_plain_function_and_a_shared_scalar():
    out = jitgrad.vmap(row_norm, in_axes=(0, None))(X, 2.0)
    np.testing.assert_allclose(out, 2.0 * np.linalg.norm(X, axis=1), rtol=1e-12)


def test_value_and_grad_with_a_tuple_wrt_stacks_every_leaf():
    value, (gw, gy) = jitgrad.vmap(jitgrad.value_and_grad(example_loss, wrt=(0, 2)),
                                   in_axes=(None, 0, 0))(W, X, Y)
    assert value.shape == (7,) and gw.shape == (7, 4) and gy.shape == (7,)
    np.testing.assert_allclose(value, [example_loss(W, X[i], Y[i]) for i in range(7)],
                               rtol=1e-12)
    np.testing.assert_allclose(gy[3], numeric_grad(example_loss, (W, X[3], Y[3]), 2), rtol=1e-6)


def test_a_dict_of_parameters_shared_by_every_row():
    params = {"w": W, "b": 0.3}
    g = jitgrad.vmap(jitgrad.grad(tree_loss), in_axes=(None, 0, 0))(params, X, Y)
    assert set(g) == {"w", "b"} and g["w"].shape == (7, 4) and g["b"].shape == (7,)
    np.testing.assert_allclose(g["b"], Y, rtol=1e-12)
    want = numeric_grad(lambda w: tree_loss({"w": w, "b": 0.3}, X[2], Y[2]), (W,), 0)
    np.testing.assert_allclose(g["w"][2], want, rtol=1e-6)


def test_in_axes_and_out_axes_move_the_batch_axis():
    g = jitgrad.grad(example_loss)
    G = jitgrad.vmap(g, in_axes=(None, 1, 0), out_axes=1)(W, X.T.copy(), Y)
    assert G.shape == (4, 7)
    np.testing.assert_allclose(G.T, jitgrad.vmap(g, in_axes=(None, 0, 0))(W, X, Y), rtol=0)


def test_parallel_rows():
    g = jitgrad.grad(example_loss)
    G = jitgrad.vmap(g, in_axes=(None, 0, 0), parallel=True)(W, X, Y)
    for i in range(7):
        np.testing.assert_allclose(G[i], numeric_grad(example_loss, (W, X[i], Y[i]), 0),
                                   rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("make, args, message", [
    (lambda: jitgrad.vmap(row_norm, in_axes=(0, 0)), (X, np.ones(3)), "differ in size"),
    (lambda: jitgrad.vmap(row_norm, in_axes=(2, None)), (X, 1.0), "out of range"),
    (lambda: jitgrad.vmap(row_norm, in_axes=(None, None)), (X, 1.0), "maps no argument"),
    (lambda: jitgrad.vmap(row_norm, in_axes=(0, 0)), (X, 1.0), "is mapped over axis 0"),
    (lambda: jitgrad.vmap(jitgrad.grad(tree_loss), in_axes=(0, 0, 0)), ({"w": X, "b": Y}, X, Y),
     "a tree"),
    (lambda: jitgrad.vmap(row_norm, in_axes=(0,)), (X, 1.0), "1 entries for 2 arguments"),
])
def test_bad_axes_are_refused(make, args, message):
    with pytest.raises(jitgrad.SignatureError, match=message):
        make()(*args)


def test_a_transform_vmap_cannot_map_is_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="maps plain functions"):
        jitgrad.vmap(jitgrad.hessian(row_norm))


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss_jax(w, x, y):
        return jnp.log1p(jnp.exp(-y * jnp.dot(x, w))) + 0.01 * jnp.sum(w * w)

    want = jax.vmap(jax.grad(loss_jax), in_axes=(None, 0, 0))(W, X, Y)
    got = jitgrad.vmap(jitgrad.grad(example_loss), in_axes=(None, 0, 0))(W, X, Y)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_a_plain_function_numba_cannot_compile_is_refused_naming_it():
    """vmap of a plain function calling vmap of a closure over its row: Numba cannot compile
    it (it was Numba's TypingError, coloured); the refusal names the function and says what
    to write. Inside a differentiated function the same form is a loop (test_heldout_forms_b8c)."""
    x = np.arange(6.0).reshape(3, 2)

    def gram(x):
        return jitgrad.vmap(lambda a: jitgrad.vmap(lambda b: np.sum(a * b))(x))(x)

    if os.environ.get("JITGRAD_DISABLE_JIT"):
        pytest.skip("Numba compiles nothing with the JIT disabled")
    with pytest.raises(jitgrad.UnsupportedError, match="lambda.*Map a function Numba compiles"):
        gram(x)
