"""Forms met in the eighth held-out batch, part hb8c (issue #43: autograd's, Numba's and JAX's
own example galleries), in functions of our own:

- a ``functools.partial`` as the differentiated function (JAX's GP example differentiates
  ``partial(gp, compute_marginal_likelihood=True)``): its remaining parameters are the
  gradient's arguments, the bound values constants (`frontend.partial_entry`); bound by
  keyword or by position, a partial of a partial, defaults of the function kept; a keyword
  bound before a positional parameter (which leaves it keyword-only) refused, saying what to
  write, and so is ``vmap`` of a partial (Numba compiles a plain function);
- a function autograd's ``grad(f)`` made, handed to ``jitgrad.grad`` (autograd's
  ``grad(grad(f))`` of its sinusoid example, the inner one autograd's): jitgrad's grad of grad
  of ``f`` (`autograd_names.as_jitgrads`), here of a series summed until a term is small;
- ``jitgrad.vmap(f, in_axes)(*args)`` called inside a differentiated function (JAX's pairwise
  kernel idiom, ``vmap(lambda x: vmap(lambda y: k(x, y))(xs))(xs)``): the loop over rows it
  stands for (`frontend.vmap_calls`), a lambda inside a lambda hoisted in turn; an argument
  not mapped (``in_axes=(0, None)``); ``out_axes=1`` refused, saying what to write;
- autograd's ``egrad(egrad(f))`` of an array inside a differentiated function (its tanh
  example's third derivative): a gradient of a transform with respect to an array, by one
  tangent per entry (`compose.gradient_by_tangents_trace`), the sum where it is egrad's;
- the function autograd's ``flatten_func(obj, params)`` returns (its gmm example minimises
  it): the ``unflatten`` it closes over (autograd's ``make_vjp`` function) is flatten's by
  construction, the tree read by calling it on zeros while building
  (`autograd_flatten.build_flatten_funcs_unflatten`); its result is autograd's one-entry
  vector, taken by ``[0]``;
- ``autograd.misc.fixed_points.fixed_point`` (an autograd primitive no table of jitgrad's
  names): the Python loop it wraps, differentiated (`autograd_names.primitive_body`): the
  derivative of the iterate it returns, which central differences of it measure.

The partial forms run everywhere; the autograd ones where autograd is installed. Every form
runs as plain Python (a process of its own, `plain_python`), its gradient against central
finite differences and, where installed, JAX or autograd; one compiled gradient per mechanism.
"""

from __future__ import annotations

import functools
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad
from plain_python import assert_runs_as_plain_python

import jitgrad
from jitgrad import vmap

try:  # the autograd forms need autograd (CI's venv has none)
    import autograd
    import autograd.numpy as anp
    from autograd.misc.fixed_points import fixed_point
    from autograd.misc.flatten import flatten_func
except ImportError:
    autograd = None


def marginal(params, x, y, scale=2.0, extra=None, negative=False):
    r = y - params[0] * np.tanh(params[1] * x)
    out = scale * np.sum(r * r) + np.sum(params ** 2)
    if extra is not None:
        out = out + extra
    return -out if negative else out


W = np.array([0.7, -0.4])
X = np.linspace(-1.0, 1.0, 5)
Y = np.cos(X)

by_keyword = functools.partial(marginal, negative=True)
by_position = functools.partial(marginal, W)
nested = functools.partial(functools.partial(marginal, scale=0.5), W, X)


def check(fn, args, wrt):
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    wrt, grads = (wrt, grads) if isinstance(wrt, tuple) else ((wrt,), (grads,))
    for k, got in zip(wrt, grads):
        np.testing.assert_allclose(got, numeric_grad(fn, args, k), rtol=1e-6, atol=1e-7)
    return grads


def check_partials():
    grads = check(by_keyword, (W, X, Y), (0, 1, 2))
    check(by_position, (X, Y), (0, 1))
    check(nested, (Y,), 0)
    assert jitgrad.grad(by_keyword, wrt="x") is not None  # the remaining parameters' names
    with pytest.raises(jitgrad.UnsupportedError, match="not a partial"):  # (Numba compiles it)
        vmap(functools.partial(marginal, scale=1.0, extra=None), in_axes=(0, None, None))(
            np.stack([W, W]), X, Y)
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        return

    def marginal_jax(params, x, y):
        r = y - params[0] * jnp.tanh(params[1] * x)
        return -(2.0 * jnp.sum(r * r) + jnp.sum(params ** 2))
    want = jax.grad(marginal_jax, argnums=(0, 1, 2))(W, X, Y)
    for got, ref in zip(grads, want):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-10, atol=1e-12)


def kernel(a, b):
    return np.exp(-np.sum((a - b) ** 2))


def gram_loss(xs, amp):
    cov = vmap(lambda x: vmap(lambda y: kernel(x, y))(xs))(xs)
    return np.sum(np.log1p(amp * cov))


def scaled_rows(xs, c):
    rows = lambda x: vmap(lambda y, s: kernel(x, y) * s, in_axes=(0, None))(xs, c)
    return np.sum(vmap(rows)(xs) ** 2)


XS = np.array([[0.1, -0.3], [0.5, 0.2], [-0.4, 0.7], [0.0, 0.9]])


def check_vmap_inside():
    check(gram_loss, (XS, 1.3), (0, 1))
    check(scaled_rows, (XS, 0.8), (0, 1))

    def moved(xs):
        return np.sum(vmap(lambda x: x * x, out_axes=1)(xs))
    with pytest.raises(jitgrad.UnsupportedError, match="out_axes=1"):
        jitgrad.grad(moved)(XS)


def check_keyword_only_refused():
    def three(a, b, c):
        return a * b * c
    with pytest.raises(jitgrad.UnsupportedError, match="keyword-only parameter"):
        jitgrad.grad(functools.partial(three, b=2.0))(1.0, 3.0)


def series(x):
    """sin(x) by its Taylor series, summed until a term is small (autograd's sinusoid)."""
    term = x
    total = term
    for i in range(200):
        term = -term * x ** 2 / ((2 * i + 3) * (2 * i + 2))
        total = total + term
        if anp.abs(term) < 1e-3:
            break
    return total


def grad_descent_sqrt(a):
    return lambda x: x - 0.05 * (x ** 2 - a)


def distance(x, y):
    return anp.abs(x - y)


def root(a):
    return fixed_point(grad_descent_sqrt, a, 3.0, distance, 1e-6)


def check_autograd_grad_entry():
    d_series = autograd.grad(series)
    for x in (0.4, 2.7):
        value, dd = jitgrad.value_and_grad(d_series)(x)
        assert value == pytest.approx(d_series(x), rel=1e-12)
        assert dd == pytest.approx(autograd.grad(d_series)(x), rel=1e-12)
        assert dd == pytest.approx(numeric_grad(d_series, (x,), 0), rel=1e-6, abs=1e-8)


def logistic(x):
    return 1.0 / (1.0 + anp.exp(-x))


def third(x):
    return anp.sum(autograd.elementwise_grad(autograd.elementwise_grad(logistic))(x) * x)


def check_third_derivative():
    x = np.linspace(-1.5, 1.0, 4)
    g = jitgrad.grad(third)(x)
    np.testing.assert_allclose(g, numeric_grad(third, (x,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g, autograd.grad(third)(x), rtol=1e-10, atol=1e-12)


def tree_objective(p):
    return anp.sum(p["w"] ** 2) * p["b"][1] + anp.sum(anp.sin(p["b"][0])) + p["a"] ** 3


def check_flatten_func():
    params = {"w": np.array([[0.3, -0.2], [0.1, 0.5]]), "b": (np.array([0.4, 0.9, -0.3]), 1.5),
              "a": 0.7}
    flat_objective, _unflatten, x0 = flatten_func(tree_objective, params)

    def scalar(v):
        return flat_objective(v)[0]
    g = jitgrad.grad(scalar)(x0)
    np.testing.assert_allclose(g, numeric_grad(scalar, (x0,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g, autograd.grad(scalar)(x0), rtol=1e-12)


def check_fixed_point():
    for a in (2.0, 5.0):
        g = jitgrad.grad(root)(a)
        assert g == pytest.approx(numeric_grad(root, (a,), 0), rel=1e-6)
        assert g == pytest.approx(0.5 / np.sqrt(a), rel=1e-3)  # the limit's, to the tolerance


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def partial_and_vmap(params, x, y, xs):
    return by_keyword(params, x, y) + gram_loss(xs, params[0] ** 2)


def partial_and_loops(params, x, y, xs):  # the same, its Gram matrix by loops (`vmap` from
    cov = np.array([[kernel(a, b) for b in xs] for a in xs])  # Python compiles the lambda,
    return by_keyword(params, x, y) + np.sum(np.log1p(params[0] ** 2 * cov))  # whose closure
    # Numba cannot capture: the reference runs without it)


def test_partial_and_vmap_compiled():
    """A partial as the differentiated function, and a nested vmap in it, compiled."""
    args, wrt = (W, X, Y), (0, 2)
    value, grads = jitgrad.value_and_grad(functools.partial(partial_and_vmap, xs=XS),
                                          wrt=wrt)(*args)
    reference = functools.partial(partial_and_loops, xs=XS)
    np.testing.assert_allclose(value, reference(*args), rtol=1e-12)
    for k, got in zip(wrt, grads):
        np.testing.assert_allclose(got, numeric_grad(reference, args, k), rtol=1e-6, atol=1e-7)


@pytest.mark.skipif(autograd is None, reason="autograd is not installed")
def test_autograd_forms_compiled():
    """autograd's grad of a function handed to jitgrad's, and fixed_point's loop, compiled."""
    def both(a):
        return root(a) + autograd.grad(series)(0.3 * a)
    g = jitgrad.grad(both)(2.0)
    assert g == pytest.approx(numeric_grad(both, (2.0,), 0), rel=1e-6)


if __name__ == "__main__":
    check_partials()
    check_keyword_only_refused()
    check_vmap_inside()
    if autograd is not None:
        check_autograd_grad_entry()
        check_fixed_point()
        check_third_derivative()
        check_flatten_func()
    print("hb8c's forms: gradients agree with central differences (and JAX / autograd)")
