"""Functions, objects and control forms (issue #43), checked against central differences and,
where installed, JAX written the same way. The three groups run as plain Python in a process of
their own (``__main__``); the functions-as-values group also runs compiled, as users run it:

* a generator is run to its end where it is called (the array or tuple of its items): a for
  loop runs over it, next() takes its items, sum() adds them;
* ``nonlocal`` names of a nested function travel in and out of its calls;
* a function (a ufunc, a lambda, a partial) passed to the differentiated function is a
  constant of the build, keyed by the function: another function compiles again, the same
  one does not; a dataclass or plain object argument is a tree of its attributes, its
  gradient an object of its class; ``*args`` is one tuple argument;
* recursion whose depth is known while building is built call by call, one whose depth is
  a run-time argument as its loops; sorted(key=) of
  items known while building; ``x[(slice(None), 1)]``; numba's literal_unroll;
* a try around math's domain errors takes its handler where Python does.
"""

from __future__ import annotations

import math

import function_forms_fns as F
import numpy as np
from fd import numeric_grad
from plain_python import assert_runs_as_plain_python

import jitgrad

try:  # the independent oracle, where installed
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None


def _close(got, want, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol)


def _jax_generators(x, n):
    total = 0.0
    for i in range(x.shape[0]):
        s = sum(x[i] ** k for k in range(n))
        total = total + s * s
    damped = x[3]
    for _ in range(n):
        damped = 0.5 * jnp.sin(damped) + x[3]
    return total + (x[0] * x[1]) * (x[0] + x[1]) + (x[2] * 0.5 + x[2] + 0.5) + damped


def check_generators_and_nonlocal():
    x = np.array([0.4, -0.7, 1.3, 0.2])
    g = jitgrad.grad(F.generators_and_nonlocal)
    for n in (3, 5):  # the generator's count is a run-time argument: one compile
        got = g(x, n)
        _close(got, numeric_grad(F.generators_and_nonlocal, (x, n), 0), rtol=1e-5)
        if jax:
            _close(got, jax.grad(_jax_generators)(jnp.asarray(x), n))
    assert len(g.specialisations.by_types) == 1


def _jax_arguments(x, w, b, scales, act):
    h = w * x + b
    return sum(k * jnp.sum(act(h) * 2.0) for k in scales)


def check_functions_objects_and_star_args_as_arguments():
    x = np.array([0.3, -0.5, 0.8])
    layer = F.Affine(np.array([0.7, 1.1, -0.4]), 0.2)
    g = jitgrad.grad(F.arguments_as_values, wrt=(0, 2, 3))
    for act, name in ((np.tanh, "tanh"), (np.sin, "sin")):
        gx, glayer, gscales = g(x, act, layer, 1.5, -0.5)
        assert isinstance(glayer, F.Affine)  # the gradient comes back as the dataclass
        if jax:
            want = jax.grad(_jax_arguments, argnums=(0, 1, 2, 3))(
                jnp.asarray(x), jnp.asarray(layer.w), layer.b, (1.5, -0.5), getattr(jnp, name))
            _close(gx, want[0])
            _close(glayer.w, want[1])
            _close(glayer.b, want[2])
            _close(gscales, want[3])
        _close(glayer.w, numeric_grad(lambda w, act=act: F.arguments_as_values(
            x, act, F.Affine(w, layer.b), 1.5, -0.5), (layer.w,), 0), rtol=1e-5)
        for k, got in ((2, gscales[0]), (3, gscales[1])):  # the *args, by central differences
            _close(got, numeric_grad(lambda s, k=k, act=act: F.arguments_as_values(
                x, act, layer, *((s, -0.5) if k == 2 else (1.5, s))),
                (1.5 if k == 2 else -0.5,), 0), rtol=1e-5)
        _close(gx, numeric_grad(lambda t, act=act: F.arguments_as_values(
            t, act, layer, 1.5, -0.5), (x,), 0), rtol=1e-5)
    # a different function compiled again; the same function (and the same partial) did not
    assert len(g.specialisations.by_types) == 2
    g(x, np.tanh, F.Affine(layer.w * 2.0, 0.3), 0.5, 2.0)
    assert len(g.specialisations.by_types) == 2
    # another number of *args is another tuple structure: another compile
    g(x, np.tanh, layer, 1.0)
    assert len(g.specialisations.by_types) == 3


def _jax_recursion_and_try(x):
    t = x[0, 0]
    y = 1.5 + t * (-0.7 + t * 0.5) - 2.0 + jnp.sum(x[:, 1] ** 2) + 0.1 * x[0, 2] + 0.2
    safe = jnp.where(y >= 0.0, y, 1.0)
    r = jnp.where(y >= 0.0, jnp.sqrt(safe), -y * y)
    q = jnp.where(y >= 0.0, 1.0 / (1.0 + y), 0.5)
    return r + q + x[1, 2] * r


def check_recursion_sorted_key_index_tuple_and_try():
    g = jitgrad.value_and_grad(F.recursion_and_try)
    for x in (np.array([[0.4, 0.9, 0.3], [-0.2, 0.8, 0.6]]),  # y > 0: the try's body
              np.array([[0.4, 0.1, 0.3], [-0.2, 0.2, 0.6]])):  # y < 0: the handler
        value, got = g(x)
        assert math.isclose(value, F.recursion_and_try(x), rel_tol=1e-12)
        _close(got, numeric_grad(F.recursion_and_try, (x,), 0), rtol=1e-5)
        if jax:
            _close(got, jax.grad(_jax_recursion_and_try)(jnp.asarray(x)))


def test_functions_as_values_compiled():
    check_functions_objects_and_star_args_as_arguments()


def test_as_plain_python():
    assert_runs_as_plain_python(__file__)


if __name__ == "__main__":
    check_generators_and_nonlocal()
    check_functions_objects_and_star_args_as_arguments()
    check_recursion_sorted_key_index_tuple_and_try()
    print("three groups agree with central differences" + (" and JAX" if jax else ""))
