"""Transforms of transforms (`jitgrad.compose`): grad of grad to any order, jacobian, jvp, vjp,
hessian and hvp of a gradient, and a gradient called inside a differentiated function. Each
is checked against central finite differences of a lower order (`tests/fd.py`, no jitgrad)
and against JAX where it is installed; all compiled, as users run them."""

import numpy as np
import pytest

import jitgrad
from tests.fd import numeric_grad


def cube(x):
    return x ** 3


def smooth(x, y):
    return np.sum(np.sin(x) * y) + np.sum(x ** 2) * np.sum(y) + np.exp(x[0] * y[1])


def looped(x, a):  # a loop with a carried value and a branch
    s = 0.0
    for i in range(x.shape[0]):
        s = s * 0.5 + np.sin(x[i] * a)
        if x[i] > 0:
            s = s + x[i] * x[i] * a
    return s


def scalar_pair(a, b):
    return a * a * b + np.sin(a * b) + np.log(1.0 + b * b)


X = np.array([0.3, -0.5, 1.2])
Y = np.array([1.0, 2.0, 0.5])


def assert_close(a, b, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=rtol, atol=atol)


def fd_jacobian(f, args, k, eps=1e-6):
    """Central differences of an array- or float-valued ``f`` with respect to argument ``k``:
    shape ``f.shape + args[k].shape``."""
    x = args[k]
    shape = np.shape(x)
    cols = []
    for i in np.ndindex(*shape):
        def at(v, i=i):
            xi = np.array(x, dtype=float).copy()
            xi[i] = v
            new = list(args)
            new[k] = xi if shape else float(xi)
            return np.asarray(f(*new), dtype=float)
        h = eps * max(1.0, abs(float(np.asarray(x)[i])))
        cols.append((at(float(np.asarray(x)[i]) + h) - at(float(np.asarray(x)[i]) - h)) / (2 * h))
    out = np.stack(cols, axis=-1) if cols else np.zeros(())
    return out.reshape(np.shape(cols[0]) + shape)


def test_grad_of_grad_is_the_second_derivative():
    assert jitgrad.grad(jitgrad.grad(cube))(1.0) == pytest.approx(6.0, rel=1e-12)
    assert jitgrad.grad(jitgrad.grad(cube))(-2.0) == pytest.approx(-12.0, rel=1e-12)


def test_three_and_four_levels_deep():
    ggg = jitgrad.grad(jitgrad.grad(jitgrad.grad(cube)))
    assert ggg(1.0) == pytest.approx(6.0, rel=1e-12)
    assert ggg(5.0) == pytest.approx(6.0, rel=1e-12)
    assert jitgrad.grad(ggg)(1.0) == pytest.approx(0.0, abs=1e-12)
    d3 = jitgrad.grad(jitgrad.grad(jitgrad.grad(scalar_pair)))
    d2 = jitgrad.grad(jitgrad.grad(scalar_pair))
    assert d3(0.7, 1.3) == pytest.approx(numeric_grad(lambda a: d2(a, 1.3), (0.7,), 0),
                                         rel=1e-6)


def test_value_and_grad_of_grad():
    value, g = jitgrad.value_and_grad(jitgrad.grad(cube))(2.0)
    assert value == pytest.approx(12.0) and g == pytest.approx(12.0)


def test_mixed_partials_by_wrt():
    d_ab = jitgrad.grad(jitgrad.grad(scalar_pair, wrt=0), wrt=1)
    d_a = jitgrad.grad(scalar_pair, wrt=0)
    want = numeric_grad(lambda b: d_a(0.7, b), (1.3,), 0)
    assert d_ab(0.7, 1.3) == pytest.approx(want, rel=1e-6)
    both = jitgrad.grad(jitgrad.grad(scalar_pair, wrt=0), wrt=(0, 1))(0.7, 1.3)
    assert isinstance(both, tuple) and both[1] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("fn, args", [(smooth, (X, Y)), (looped, (X, 0.8))],
                         ids=["smooth", "looped"])
def test_jacobian_of_grad_is_the_hessian(fn, args):
    H = jitgrad.jacobian(jitgrad.grad(fn))(*args)
    g = jitgrad.grad(fn)
    assert_close(H, fd_jacobian(g, args, 0), rtol=1e-5, atol=1e-7)
    assert_close(H, jitgrad.hessian(fn)(*args), rtol=1e-10, atol=1e-12)


def test_jacobian_of_grad_with_respect_to_another_argument():
    H01 = jitgrad.jacobian(jitgrad.grad(smooth), wrt=1)(X, Y)
    assert H01.shape == (3, 3)
    assert_close(H01, fd_jacobian(jitgrad.grad(smooth), (X, Y), 1), rtol=1e-5, atol=1e-7)


def test_jvp_and_vjp_of_grad():
    g = jitgrad.grad(smooth)
    v = np.array([0.2, -1.0, 0.5])
    value, tangent = jitgrad.jvp(g, (X, Y), (v, None))
    assert_close(value, g(X, Y), rtol=1e-12)
    assert_close(tangent, fd_jacobian(g, (X, Y), 0) @ v, rtol=1e-5, atol=1e-7)
    value, pull = jitgrad.vjp(g, X, Y)
    ct = np.array([1.0, 0.5, -2.0])
    gx, gy = pull(ct)
    assert_close(gx, ct @ fd_jacobian(g, (X, Y), 0), rtol=1e-5, atol=1e-7)
    assert_close(gy, ct @ fd_jacobian(g, (X, Y), 1), rtol=1e-5, atol=1e-7)


def test_hessian_and_hvp_of_grad_are_third_derivatives():
    d2 = jitgrad.grad(jitgrad.grad(scalar_pair))
    h3 = jitgrad.hessian(jitgrad.grad(scalar_pair))(0.7, 1.3)
    assert h3 == pytest.approx(numeric_grad(lambda a: d2(a, 1.3), (0.7,), 0), rel=1e-6)
    assert jitgrad.hvp(jitgrad.grad(scalar_pair))(0.7, 1.3, 2.0) == pytest.approx(2 * h3)


def test_jacobian_of_value_and_grad_is_a_tuple():
    dv, dg = jitgrad.jacobian(jitgrad.value_and_grad(scalar_pair))(0.7, 1.3)
    assert dv == pytest.approx(jitgrad.grad(scalar_pair)(0.7, 1.3))
    assert dg == pytest.approx(jitgrad.grad(jitgrad.grad(scalar_pair))(0.7, 1.3))


def f_inner(x):
    return np.sum(np.sin(x) * x)


df_inner = jitgrad.grad(f_inner)


def penalised(w):  # a gradient penalty: the gradient called inside the function
    g = df_inner(w)
    return f_inner(w) + np.sum(g * g)


def newton_step(x):
    return x - jitgrad.grad(cube)(x) / 6.0


def test_a_gradient_called_inside_a_differentiated_function():
    w = np.array([0.3, -0.7, 1.1])
    want = numeric_grad(penalised, (w,), 0)  # penalised runs the compiled inner gradient
    assert_close(jitgrad.grad(penalised)(w), want, rtol=1e-6, atol=1e-8)
    value, tangent = jitgrad.jvp(penalised, (w,), (np.ones(3),))
    assert value == pytest.approx(penalised(w))
    assert tangent == pytest.approx(want.sum(), rel=1e-6)
    # newton_step(x) = x - x**2 / 2: its derivatives at 2 are -1 and -1
    assert jitgrad.grad(newton_step)(2.0) == pytest.approx(-1.0, rel=1e-12)
    assert jitgrad.grad(jitgrad.grad(newton_step))(2.0) == pytest.approx(-1.0, rel=1e-12)
    # three deep with respect to the array: one tangent per entry (hb8c; refused before)
    hessian = jitgrad.jacobian(jitgrad.grad(penalised))(w)
    g = jitgrad.grad(penalised)
    want = np.array([numeric_grad(lambda v, i=i: g(v)[i], (w,), 0) for i in range(3)])
    assert_close(hessian, want, rtol=1e-6, atol=1e-7)


def test_a_gradient_of_an_array_function_is_refused():
    with pytest.raises(jitgrad.SignatureError, match="returns one float"):
        jitgrad.grad(jitgrad.grad(smooth))(X, Y)
    with pytest.raises(jitgrad.SignatureError, match="returns one float.*2 values"):
        jitgrad.grad(jitgrad.value_and_grad(scalar_pair))(0.7, 1.3)


def test_three_deep_with_respect_to_an_array():
    """One array argument, three deep: one tangent per entry (d/da of 4 a y is 4 y); an
    array among several arguments is still refused by name."""
    mixed = jitgrad.grad(jitgrad.grad(lambda_free_first, wrt=0), wrt=1)
    assert_close(jitgrad.jacobian(mixed)(0.5, np.ones(3)), 4.0 * np.ones(3))
    both = jitgrad.grad(jitgrad.grad(lambda_free_first, wrt=0), wrt=(0, 1))
    with pytest.raises(jitgrad.UnsupportedError, match="array argument 'y'"):
        jitgrad.jacobian(both)(0.5, np.ones(3))


def lambda_free_first(a, y):
    return a * a * np.sum(y * y)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def smooth_jax(x, y):
        return jnp.sum(jnp.sin(x) * y) + jnp.sum(x ** 2) * jnp.sum(y) + jnp.exp(x[0] * y[1])

    assert_close(jitgrad.jacobian(jitgrad.grad(smooth))(X, Y), jax.hessian(smooth_jax)(X, Y),
                 rtol=1e-12, atol=1e-12)
    assert_close(jitgrad.jacobian(jitgrad.grad(smooth), wrt=1)(X, Y),
                 jax.jacfwd(jax.grad(smooth_jax), 1)(X, Y), rtol=1e-12, atol=1e-12)

    def pair_jax(a, b):
        return a * a * b + jnp.sin(a * b) + jnp.log(1.0 + b * b)

    want = jax.grad(jax.grad(jax.grad(pair_jax)))(0.7, 1.3)
    assert jitgrad.grad(jitgrad.grad(jitgrad.grad(scalar_pair)))(0.7, 1.3) == pytest.approx(
        float(want), rel=1e-12)


def scaled_cube(x, a=2.0):
    return a * x ** 3


def test_keywords_and_defaults_reach_the_function_underneath():
    d2 = jitgrad.grad(jitgrad.grad(scaled_cube))
    assert d2(1.0) == pytest.approx(12.0) and d2(x=1.0) == pytest.approx(12.0)
    assert d2(1.0, a=1.0) == pytest.approx(6.0)
    with pytest.raises(jitgrad.SignatureError, match="unexpected keyword argument 'b'"):
        d2(1.0, b=2.0)


def penalised_tree(p, x):  # a tree beside a gradient called inside
    g = df_inner(x)
    return np.sum(g * p["w"]) + p["b"]


def test_a_tree_beside_a_gradient_inside_differentiates_the_right_leaf():
    """Forward mode seeds leaves: with a tree before the argument differentiated, the seed is
    that argument's leaf, not the tree's (d/dx of sum((sin x + x cos x) w) + b, against
    central differences with the inner gradient written out)."""
    p, x = {"w": np.array([1.0, -2.0, 0.5]), "b": 1.0}, np.arange(3.0)
    got = jitgrad.grad(penalised_tree, wrt=1)(p, x)

    def by_hand(v):
        return np.sum((np.sin(v) + v * np.cos(v)) * p["w"]) + p["b"]

    np.testing.assert_allclose(got, numeric_grad(by_hand, (x,), 0), rtol=1e-6, atol=1e-9)
    gp = jitgrad.grad(penalised_tree)(p, x)
    np.testing.assert_allclose(gp["w"], np.sin(x) + x * np.cos(x), rtol=1e-12)
    assert gp["b"] == pytest.approx(1.0)
