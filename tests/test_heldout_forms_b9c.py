"""Forms met in the ninth held-out batch, part hb9c (issue #43: Tangent's own test functions and
JAX's Autodiff Cookbook and custom-derivative notebook), in functions of our own:

- a join (``np.vstack``, ``np.hstack``, ``np.concatenate``, ``np.stack``) of a list whose
  entries are tuples or lists holding values of the graph (the Cookbook's
  ``np.vstack([vjp_fun(mi) for mi in M])``, each ``vjp_fun`` result a 1-tuple): each entry the
  array NumPy makes of it (`numpy_api._entries`); the tuples were once added together, a
  silently wrong value;
- ``jitgrad.jvp(f, primals, tangents)`` and ``y, vjp_fn = jitgrad.vjp(f, x)`` called inside a
  differentiated function (the Cookbook's Hessian-vector products forward-over-reverse and
  reverse-over-forward, ``vgrad``, ``loop_mjp``/``loop_jmp``): ``f``'s forward-mode trace and
  the gradient of ``sum(f(x) * ct)`` grafted into the graph (`frontend.transform_calls`,
  `jitgrad.inside`), of a function defined inside too (lifted with what it reads);
- ``jitgrad.vmap`` of a ``vjp`` function (the Cookbook's ``vmap(vjp_fun)(M)``, ``our_jacrev``),
  from Python (one call of its compiled adjoint per row) and inside a differentiated
  function; inside one, ``in_axes`` of an axis other than 0 (``our_jacfwd``'s ``in_axes=1``:
  moved first) and a function returning a tuple (a tuple of stacked entries, as JAX's);
- ``raise E`` in a ``try`` whose handler for ``E`` ends in ``return`` (the Cookbook's
  ``if x < 3: return 2 * x ** 3 else: raise ValueError`` / ``except ValueError: return
  jnp.pi * x``): the handler's body in the raise's place (`caught_raises`); a division or
  power in a try whose handlers catch no ArithmeticError raises through it as outside one
  (the fence took ``x ** 3`` for a raise the handler might catch); a handler binding ``as e``,
  or a raise no handler catches, refused as before;
- a ``jitgrad.custom_vjp`` function handed to an entry point uses its rule (before, its body
  was differentiated and the rule ignored: ``grad(clip_gradient, wrt=2)`` gave 1, not the
  rule's clipped 0.5), its ``fwd`` may call the function itself (JAX's docs write
  ``return f(x, y), (cos(x), ...)``: before, an endless recursion refused), and ``bwd`` gets
  the residuals as ``fwd`` returned them (one array, not a 1-tuple; a namedtuple as itself);
  its arguments and value may be trees (a namedtuple in, a dict of a number and a tuple out,
  as the custom-rules notebook's ``f(pt)``): one equation per leaf of the value, ``bwd`` of
  that leaf's adjoint and zeros for the others, its gradient trees read leaf by leaf;
- a namedtuple argument (the notebook's ``grad(fun)(Point(1., 2.))``): its class kept in the
  argument's tree type, so ``pt.x`` reads its field and the gradient is a ``Point`` (it was
  read as a plain tuple: ``pt.x`` refused);
- a NumPy ufunc handed to an entry point (the Cookbook's ``grad(jnp.tanh)``, then
  ``grad(grad(...))``): the function ``def tanh(x): return np.tanh(x)`` written for it
  (`partial_entry.ufunc_function`); a ufunc of two outputs refused as before.

Every form runs as plain Python (a process of its own, `plain_python`), its gradient against
central finite differences and, where installed, JAX; one compiled gradient per mechanism.
"""

from __future__ import annotations

import collections
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_form, numeric_grad
from plain_python import assert_runs_as_plain_python

import jitgrad
from jitgrad import grad, jvp, vjp

S = np.arange(1.0, 7.0).reshape(2, 3)
X3 = np.array([0.3, -0.8, 1.1])


def vstack_of_tuples(x):
    return np.sum(np.vstack([(x * 1.0,), (np.sin(x),)]) * S)


def hstack_of_tuples(x):
    return np.sum(np.hstack([(x[0], x[1]), [x[2] * 2.0]]) * np.array([1.0, -2.0, 3.0]))


def concatenate_of_lists(x):
    return np.sum(np.concatenate([[x[0] * x[1]], (x[2], 4.0)]) ** 2)


def stack_of_tuples(x):
    return np.sum(np.stack([(x[0], x[1]), (x[2], x[0] ** 2)]) * S[:, :2])


def check_joins():
    check_form(vstack_of_tuples, (X3,), 0,
               lambda jnp, x: jnp.sum(jnp.vstack([jnp.array([x]), jnp.array([jnp.sin(x)])]) * S))
    check_form(hstack_of_tuples, (X3,), 0, None)
    check_form(concatenate_of_lists, (X3,), 0, None)
    check_form(stack_of_tuples, (X3,), 0, None)


def predict(w, xs):
    return np.tanh(xs @ w)


XS = np.array([[0.5, -1.0, 0.2], [1.5, 0.3, -0.7], [-0.4, 0.8, 0.9], [0.1, 0.2, 0.3]])
U4 = np.array([0.3, -1.2, 0.7, 0.5])
M = np.array([[0.3, -1.2, 0.7, 0.5], [1.0, 0.1, -0.4, 0.2]])
V = np.array([[0.2, -0.5, 1.0], [0.7, 0.3, -0.1]])


def energy(x):
    return np.sum(np.tanh(x) ** 2 * np.cos(x))


def hvp_forward_over_reverse(x):
    return np.sum(jvp(grad(energy), (x,), (V[0],))[1] * V[1])


def hvp_reverse_over_forward(x):
    return jvp(energy, (x,), (V[0],))[1]


def jvp_value_and_tangent(w):
    y, t = jvp(lambda w: predict(w, XS), (w,), (V[1],))
    return np.sum(y * t)


def vjp_pullback(w):
    y, back = vjp(predict, w, XS)
    gw, gx = back(U4)
    return np.sum(gw * V[0]) + np.sum(gx ** 2) + np.sum(y)


def loop_of_pullbacks(w):
    _y, back = vjp(lambda w: predict(w, XS), w)
    return np.sum(np.vstack([back(m) for m in M]) * V)


def loop_of_tangents(w):
    return np.sum(np.vstack([jvp(lambda v: predict(v, XS), (w,), (d,))[1] for d in V]) * M)


def jvp_of_a_local_gradient(x):
    c = np.sum(x)
    inner = lambda v: np.sum(np.tanh(v * c) ** 2)
    return np.sum(jvp(grad(inner), (x,), (V[0],))[1] * V[1])


def check_jvp_vjp_inside():
    check_form(jvp_of_a_local_gradient, (X3,), 0, None)
    for fn in (hvp_forward_over_reverse, hvp_reverse_over_forward):
        check_form(fn, (X3,), 0, None)
    for fn in (jvp_value_and_tangent, vjp_pullback, loop_of_pullbacks, loop_of_tangents):
        check_form(fn, (X3,), 0, None)
    try:  # JAX's own Hessian-vector product of the same function
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        return

    def energy_jax(x):
        return jnp.sum(jnp.tanh(x) ** 2 * jnp.cos(x))
    fwd_rev = jax.grad(lambda x: jnp.sum(jax.jvp(jax.grad(energy_jax), (x,), (V[0],))[1] * V[1]))
    rev_fwd = jax.grad(lambda x: jax.jvp(energy_jax, (x,), (V[0],))[1])
    np.testing.assert_allclose(jitgrad.grad(hvp_forward_over_reverse)(X3),
                               np.asarray(fwd_rev(X3)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jitgrad.grad(hvp_reverse_over_forward)(X3),
                               np.asarray(rev_fwd(X3)), rtol=1e-10, atol=1e-12)


def pair(r, c):
    return np.sin(r) * c, np.sum(r ** 2)


def vmap_of_tuples(x, c):
    a, b = jitgrad.vmap(pair, in_axes=(0, None))(x, c)
    return np.sum(a) + np.sum(b * b)


def vmap_along_columns(x, c):
    a, b = jitgrad.vmap(lambda r: (np.cos(r), np.sum(r)), in_axes=1)(x)
    return np.sum(a * c) + np.sum(b ** 3)


def jacobian_by_vmapped_pullbacks(w):
    y, back = vjp(lambda w: predict(w, XS), w)
    J, = jitgrad.vmap(back)(np.eye(4))
    return np.sum(J * M[0][:, None]) + np.sum(y)


def check_vmap_forms():
    x = XS[:2]
    check_form(vmap_of_tuples, (x, 1.3), (0, 1), None)
    check_form(vmap_along_columns, (x, 1.3), (0, 1), None)
    check_form(jacobian_by_vmapped_pullbacks, (X3,), 0, None)
    _, back = vjp(predict, X3, XS)  # from Python: the rows' pullbacks, stacked per primal
    jw, jx = jitgrad.vmap(back)(np.eye(4))
    np.testing.assert_allclose(jw, jitgrad.jacobian(predict)(X3, XS), rtol=1e-12)
    assert jx.shape == (4,) + XS.shape


def raise_to_handler(x):
    try:
        if x < 3:
            return 2 * x ** 3
        else:
            raise ValueError
    except ValueError:
        return np.pi * x


def raise_after_work(x):
    total = 0.0
    try:
        total = x / 2.0 + x ** 2
        if total > 2.0:
            y = total * x
            if y > 0.0:
                raise RuntimeError("too big")
        total = total ** 2
    except (KeyError, RuntimeError):
        return -total * x
    return total


def bound_handler(x):
    try:
        if x > 1.0:
            raise ValueError("no")
        return x * 2.0
    except ValueError as e:  # noqa: F841
        return x


def check_caught_raises():
    for x in (2.0, 4.0):
        check_form(raise_to_handler, (x,), 0, None)
    for x in (0.5, 1.5):
        check_form(raise_after_work, (x,), 0, None)
    with pytest.raises(jitgrad.UnsupportedError, match="a raise statement"):
        jitgrad.grad(bound_handler)(0.5)


@jitgrad.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (None, None, np.clip(g, lo, hi))


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@jitgrad.custom_vjp
def sin_times(x, y):
    return np.sin(x) * y


def _sin_times_fwd(x, y):
    return sin_times(x, y), np.cos(x)


def _sin_times_bwd(cos_x, g):
    return (cos_x * g * 2.0, None)  # twice the derivative in x, none in y: the rule's, not f's


sin_times.defvjp(_sin_times_fwd, _sin_times_bwd)


Point = collections.namedtuple("Point", ["x", "y"])


@jitgrad.custom_vjp
def polar_parts(pt):
    return {"a": pt.x ** 2, "b": (np.sin(pt.x), np.cos(pt.y))}


def _polar_fwd(pt):
    return polar_parts(pt), pt


def _polar_bwd(pt, g):
    a_bar, (b0_bar, b1_bar) = g["a"], g["b"]
    return (Point(2 * pt.x * a_bar + np.cos(pt.x) * b0_bar, -np.sin(pt.y) * b1_bar),)


polar_parts.defvjp(_polar_fwd, _polar_bwd)


def tree_rule_scalars(a, b):
    d = polar_parts(Point(a, b * 2.0))
    return d["a"] * 3.0 + d["b"][0] + d["b"][1] ** 2


def tree_rule_arrays(v):
    d = polar_parts(Point(v, v ** 2))
    return np.sum(d["a"] + d["b"][0] * d["b"][1])


def on_a_point(pt, scale):
    d = polar_parts(pt)
    return (d["a"] + d["b"][0] * d["b"][1]) * scale + pt.x * pt.y ** 2


def check_custom_rules():
    check_form(tree_rule_scalars, (1.0, 0.7), (0, 1), None)
    g = jitgrad.grad(on_a_point)(Point(0.4, 1.3), 2.0)
    assert type(g) is Point
    h = 1e-6
    for k in range(2):
        e = np.eye(2)[k] * h
        want = (on_a_point(Point(0.4 + e[0], 1.3 + e[1]), 2.0)
                - on_a_point(Point(0.4 - e[0], 1.3 - e[1]), 2.0)) / (2 * h)
        assert g[k] == pytest.approx(want, rel=1e-6)
    check_form(tree_rule_arrays, (X3,), 0, None)
    assert jitgrad.grad(clip_gradient, wrt=2)(-0.5, 0.5, 3.0) == 0.5  # the rule: clip(1.0)
    gx, gy = jitgrad.grad(sin_times, wrt=(0, 1))(0.3, 1.7)
    assert gx == pytest.approx(2.0 * np.cos(0.3) * 1.0, rel=1e-14) and gy == 0.0
    assert jitgrad.grad(lambda x: sin_times(x, 2.0) * 3.0)(0.3) == pytest.approx(
        6.0 * np.cos(0.3), rel=1e-14)


def check_ufunc_entry():
    t = np.tanh(0.7)
    assert jitgrad.grad(np.tanh)(0.7) == pytest.approx(1 - t ** 2, rel=1e-14)
    assert jitgrad.grad(jitgrad.grad(np.tanh))(0.7) == pytest.approx(-2 * t * (1 - t ** 2),
                                                                      rel=1e-12)
    third = -2 * (1 - t ** 2) * (1 - 3 * t ** 2)
    assert jitgrad.grad(jitgrad.grad(jitgrad.grad(np.tanh)))(0.7) == pytest.approx(third,
                                                                                   rel=1e-12)
    dy, dx = jitgrad.grad(np.arctan2, wrt=(0, 1))(0.3, 0.5)
    assert (dy, dx) == pytest.approx((0.5 / 0.34, -0.3 / 0.34), rel=1e-14)
    np.testing.assert_allclose(jitgrad.jacobian(np.sin)(X3), np.diag(np.cos(X3)), rtol=1e-14)
    with pytest.raises(jitgrad.UnsupportedError, match="not a plain Python function"):
        jitgrad.grad(np.divmod)(1.0, 2.0)


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def test_jvp_vjp_inside_compiled():
    """jvp and vjp inside a differentiated function, and a join of tuples, compiled."""
    def both(w):
        return hvp_forward_over_reverse(w) + loop_of_pullbacks(w)
    value, g = jitgrad.value_and_grad(both)(X3)
    np.testing.assert_allclose(value, both(X3), rtol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(both, (X3,), 0), rtol=1e-6, atol=1e-8)


if __name__ == "__main__":
    check_joins()
    check_jvp_vjp_inside()
    check_ufunc_entry()
    check_vmap_forms()
    check_caught_raises()
    check_custom_rules()
    print("hb9c's forms: gradients agree with central differences (and JAX)")
