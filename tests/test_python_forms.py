"""The plain Python around numbers (issue #43): every program of `python_forms_fns` is
differentiated as users run it (compiled with Numba) and checked against central differences
at two steps and, where JAX is installed, against JAX written the same way.

What each form is built as:

* ``*args`` a tuple, ``**kwargs`` a dict, keyword-only and positional-only parameters bound by
  Python's rules; ``f(*t, **d)``, ``(*a, b)``, ``{**d, "k": v}`` and ``head, *rest = t`` with
  sequences known while building.
* A lambda or nested function is built where it is called; a function chosen by a run-time
  condition (``f = np.sin if x > 0 else np.cos``) is called in an ``if``; ``map`` and
  ``filter`` are comprehensions.
* ``sorted`` of run-time numbers is NumPy's sort of them, as an array read entry by entry.
* A ``try`` around ``np.linalg`` calls and ``x.shape[k]`` runs its body; a tuple of sizes
  compares entry by entry.
* ``isinstance``, ``in`` and comparisons of strings are decided while building; f-strings
  of run-time values may be printed or raised.
* A number, or an array of the arguments' shapes, assigned only inside a loop and read after
  it (or in a later iteration) is carried out of the loop.
* A list of arrays built in a loop is an array of rows (``np.stack``, ``np.array``,
  ``np.vstack``, ``np.concatenate`` of it).
* The user's objects are values of the build: attributes read, methods built inline, classes
  instantiated; a library function on constants runs while building.
* ``scipy.stats`` densities, ``scipy.special``, ``scipy.linalg`` and ``scipy.signal`` functions
  as autograd differentiates them; rounding, counts and closeness tests with NumPy's values and
  a zero derivative.
"""

from __future__ import annotations

import numpy as np
import pytest
import python_forms_fns as F
from fd import numeric_grad

import jitgrad

try:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - JAX is optional
    jax = None

X5 = np.array([0.4, -0.7, 1.3, 0.2, -1.6])
W5 = np.array([0.5, 1.5, 0.8, 1.2, 0.9])

CASES = [  # (function, args, wrt)
    (F.parameters, (0.7, 1.3), (0, 1)),
    (F.keyword_only_defaults, (np.array([0.5, 1.2, 0.9]),), 0),
    (F.functions_as_values, (0.6,), 0),
    (F.type_tests, (X5, W5), (0, 1)),
    (F.statements, (np.array([0.3, 0.8, -0.4, 1.1, 0.6]),), 0),
    (F.read_after_loop, (1.7, 1e-10), 0),
    (F.branch_set_in_first_iteration, (0.7,), 0),
    (F.loop_index_after, (np.array([0.3, 0.2, 0.7, 0.9]),), 0),
    (F.lists_of_arrays, (np.array([0.3, -0.5, 0.8]), np.array([[0.5, 0.1, 0.0],
                                                             [0.2, -0.3, 0.4],
                                                             [0.1, 0.1, 0.1]])), (0, 1)),
    (F.objects, (np.array([0.3, -0.5, 0.8]),), 0),
    (F.piecewise_constant, (np.array([0.31, 0.22, 0.74, 0.93]),), 0),
    (F.deleted_names, (0.7,), 0),
    (F.named_results, (0.7,), 0),
    (F.trajectory, (np.array([0.3, -0.5, 0.8]), np.array([[0.5, 0.1, 0.0], [0.2, -0.3, 0.4],
                                                          [0.1, 0.1, 0.1]])), (0, 1)),
    (F.more_forms, (np.array([0.3, 0.5, 0.9]),), 0),
    (F.loop_headers, (np.array([0.3, 0.5, 0.7, 0.2]),), 0),
    (F.early_returns, (np.array([0.3, 0.5, 0.9]), 0.4), (0, 1)),
    (F.composed_reductions, (np.array([0.31, 0.22, 0.74, 0.93, 0.45]),), 0),
    (F.composed_statistics, (np.array([0.31, 0.22, 0.74, 0.93, 0.45]),), 0),
    (F.composed_selections, (np.array([0.31, 0.22, 0.74, 0.93, 0.45]),), 0),
    (F.densities, (np.array([0.5, 1.2, 2.0]), np.array([0.3, -0.1])), (0, 1)),
    (F.sorted_values, (np.array([0.9, -0.4, 0.6]),), 0),
    (F.kalman_gain_try, (np.array([[1.0, 0.2], [0.2, 0.5]]), np.array([[1.0, 0.3]]),
                         np.array([[0.4]])), (0, 1, 2)),
    (F.padded_and_spaced, (np.array([0.3, -0.2, 0.5]), np.array([[0.5, 0.1, -0.3],
                                                                 [0.2, -0.4, 0.6]])), (0, 1)),
]


def _check(fn, args, wrt):
    """The gradient against central differences at two steps; the value equals Python's own
    (the forms mean what Python says), and the arguments are left alone."""
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-13), fn.__name__
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    grads = grads if isinstance(wrt, tuple) else (grads,)
    for k, g in zip(positions, grads):
        for eps in (1e-5, 1e-7):
            np.testing.assert_allclose(g, numeric_grad(fn, args, k, eps=eps), rtol=2e-5,
                                       atol=1e-7, err_msg=f"{fn.__name__} d/d{k} eps={eps}")
    return grads


@pytest.mark.parametrize("fn,args,wrt", [pytest.param(*c, id=c[0].__name__) for c in CASES])
def test_python_forms_compiled_against_finite_differences(fn, args, wrt):
    _check(fn, args, wrt)


def test_runtime_message_names_the_value():
    """A raise whose f-string formats a run-time value raises at run time, its message
    naming the value it could not format."""
    g = jitgrad.grad(F.statements)
    with pytest.raises(ValueError, match=r"x\[0\] = \{x\[0\]\} is too large for 3 steps"):
        g(np.array([11.0, 0.8, -0.4, 1.1, 0.6]))


def test_top_level_lambda():
    """``jitgrad.grad(lambda p: loss(p, x, y))``, as JAX users write it; two lambdas on one
    line are told apart by where their code starts."""
    x, y = np.linspace(0.0, 1.0, 6), np.linspace(1.0, 3.0, 6)
    g = jitgrad.grad(lambda p: np.sum((x * p - y) ** 2))(1.5)
    assert g == pytest.approx(np.sum(2 * (x * 1.5 - y) * x), rel=1e-12)
    a, b = jitgrad.grad(lambda t: t * t)(3.0), jitgrad.grad(lambda t: t ** 3)(2.0)
    assert (a, b) == (6.0, 12.0)


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_against_jax():
    """The same programs in JAX's terms (its own control flow where the condition is a
    run-time value)."""
    x = 0.6

    def functions_as_values(x):
        decay = lambda t: jnp.exp(-1.5 * t) * x
        h = 1.0 / 8
        s = 0.5 * (decay(0.0) + decay(1.0)) + sum(decay(k * h) for k in range(1, 8))
        h2 = 2.0 / 4
        s2 = 0.5 * (0.0 + 4.0 * x) + sum((k * h2) ** 2 * x for k in range(1, 4))
        f = jnp.where(x > 0.3, jnp.sin(x), jnp.cos(x))
        return x ** 4 + s * h + f * jnp.tanh(x) + 6.0 * x + 5.0 * x + s2 * h2

    ours = jitgrad.grad(F.functions_as_values)(x)
    np.testing.assert_allclose(ours, jax.grad(functions_as_values)(x), rtol=1e-12)

    def type_tests(x, w):
        r = jnp.where(jnp.abs(x) < 1.0, 0.5 * x * x, jnp.abs(x) - 0.5) * w
        return jnp.sum(r) + jnp.sum(jnp.abs(w)) + jnp.sqrt(jnp.sum(w * w)) + 1.5 * jnp.sum(x)

    ours = jitgrad.grad(F.type_tests, wrt=(0, 1))(X5, W5)
    theirs = jax.grad(type_tests, argnums=(0, 1))(X5, W5)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_argmax_along_an_axis_as_aux():
    rng = np.random.default_rng(0)
    W, x = rng.normal(size=(4, 3)), rng.normal(size=(6, 4))
    y = np.array([0, 1, 2, 1, 0, 2])
    g, acc = jitgrad.grad(F.accuracy_as_aux, has_aux=True)(W, x, y)
    assert acc == F.accuracy_as_aux(W, x, y)[1]
    np.testing.assert_allclose(g, numeric_grad(lambda *a: F.accuracy_as_aux(*a)[0], (W, x, y), 0),
                               rtol=1e-6, atol=1e-9)


def _times_a_python_draw(x):
    import random

    return x * random.random()


def _times_a_scipy_draw(x):
    from scipy import stats

    return x * stats.norm.rvs(size=1)[0]


def test_a_linalg_call_in_a_try_raises_where_python_would_take_the_handler():
    """The compiled code never runs an ``except`` branch: where NumPy's inv raises (a singular
    S), the gradient's call raises that error at the user's line instead of returning what the
    handler computes."""
    P, H = np.zeros((2, 2)), np.array([[1.0, 0.3]])
    with pytest.raises(Exception, match="(?i)singular") as e:
        jitgrad.grad(F.kalman_gain_try)(P, H, np.array([[0.0]]))
    assert "python_forms_fns.py" in str(e.value) and "catches it at line" in str(e.value)


def test_random_values_are_never_frozen_while_building():
    """A library call on constants runs while building, except a random draw: run once, its
    value would be the same at every call, where Python's differs (a wrong gradient). Python's
    `random` is replayed at each call (each call's gradient is that call's draw); SciPy's
    ``rvs`` is refused."""
    import random

    g = jitgrad.grad(_times_a_python_draw)
    random.seed(5)
    first, second = g(1.0), g(1.0)
    random.seed(5)
    assert (first, second) == (random.random(), random.random()) and first != second
    with pytest.raises(jitgrad.JitgradError, match="random|rvs"):
        jitgrad.grad(_times_a_scipy_draw)(1.0)
