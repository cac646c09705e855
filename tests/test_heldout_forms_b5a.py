"""Forms met in the fifth held-out batch of real code (issue #43, part hb5a: colour-science,
MetPy, pvlib, SALib, QuantEcon, chemicals), in functions of our own:

* a root whose slope is infinite at 0 on an entry np.where discards (colour's sRGB encoding
  ``np.where(L <= 0.0031308, 12.92 L, 1.055 spow(L, 1/2.4) - 0.055)`` of a clipped value):
  the chosen side's derivative, not ``0 * inf = nan`` (``x**y``'s slope at 0 for 0 < y < 1,
  and cbrt's, taken as 0, as sqrt's is);
* ``np.roots`` of a list holding run-time coefficients (a cubic equation of state);
* colour's ``tsplit``/``tstack``: ``np.array([a[..., k] for k in range(a.shape[-1])])`` and
  ``np.concatenate([x[..., None] for x in np.asarray([X, Y, Z])], axis=-1)``, ``if
  xy.shape[-1] == 2`` of a constant, rows written in place (``H[H < 0] += 360``) then stacked;
* a module dict of arrays read with ``.get``; ``if window:`` of a string; ``type(x) !=
  np.ndarray``; ``np.isclose(n, 1).any()`` of numbers; ``np.array(A, dtype=float, copy=True,
  order='C')``; ``mask = np.array(w <= 0); w[mask] += 360``; ``dict((k, v) for k in keys)``;
  ``name in d.keys()``;
* a lambda inside a nested function; MetPy's ``tuple(indexer if axis == i else slice(None) for
  i in range(ndim))``; ``out=`` on the user's own function; ``np.modf``;
* ``np.gradient(theta, heights, axis=0)`` at uneven coordinates (MetPy's Brunt-Vaisala);
* ``np.sum(x * x / len(x))`` (a size read from a shape, fused into an elementwise loop: it
  failed in the generated code before).

Each form's gradient is checked against central differences and JAX (the same computation
written with jax.numpy) as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own:
``python tests/test_heldout_forms_b5a.py`` runs them); one compiled gradient holds them all.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import jitgrad

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from conformance_fns import tsplit, tstack  # colour's forms, also conformance rows
from fd import check_against
from plain_python import assert_runs_as_plain_python

TRANSFORMS = {"ident": np.eye(3), "scaled": np.diag([0.9, 1.0, 1.1])}
WINDOWS = {"flat": np.ones, "hanning": np.hanning}

X = np.array([-0.2, 0.001, 0.3, 0.8, 0.55, 0.45])
Z = np.array([0.0, 500.0, 1000.0, 2000.0, 3000.0, 4500.0])
M = np.array([[0.3, 0.5, 0.2], [0.6, -0.4, 0.9], [0.1, 0.7, -0.3], [0.8, 0.2, 0.4]])


def encode(x):
    """colour's sRGB encoding of clipped values: the root's branch is discarded at 0."""
    x = np.clip(x, 0.0, 1.0)
    root = np.sign(x) * np.abs(x) ** (1 / 2.4)
    return np.sum(np.where(x <= 0.0031308, 12.92 * x, 1.055 * root - 0.055) ** 2
                  + np.where(x <= 0.0031308, x, np.cbrt(x)))


def encode_jax(jnp, x):
    x = jnp.clip(x, 0.0, 1.0)
    low = x <= 0.0031308
    safe = jnp.where(low, 1.0, x)
    return jnp.sum(jnp.where(low, 12.92 * x, 1.055 * safe ** (1 / 2.4) - 0.055) ** 2
                   + jnp.where(low, x, jnp.cbrt(safe)))


def largest_root(x):
    """np.roots of [1, -b, c] (two real roots), the larger one."""
    b, c = x[2] + 2.0, x[3] * x[4]
    r = np.roots([1.0, -b, c])
    return max([v.real for v in r])


def largest_root_jax(jnp, x):
    b, c = x[2] + 2.0, x[3] * x[4]
    return (b + jnp.sqrt(b * b - 4.0 * c)) / 2.0



def xy_to_xyz(xy, Y=1.0):
    xy = np.asarray(xy, np.float64)
    if xy.shape[-1] == 2:  # a constant's size: decided while building
        x, y = tsplit(xy)
        return tstack([x * Y / y, np.ones(x.shape) * Y, (1 - x - y) * Y / y])
    return xy


def colour_rows(m):
    """Lab-like rows: columns split, combined, a hue written in place, stacked again."""
    X_, Y_, Z_ = tsplit(m)
    white = xy_to_xyz(np.array([0.3127, 0.3290]))
    a, b = tsplit(tstack([X_ * white[0] - Y_, Y_ - Z_ * white[2]]))
    h = 180.0 * np.arctan2(b, a) / np.pi
    h[np.asarray(h < 0)] += 360.0
    return np.sum(tstack([a, np.hypot(a, b), h * 0.01]) ** 2)


def colour_rows_jax(jnp, m):
    X_, Y_, Z_ = m[:, 0], m[:, 1], m[:, 2]
    white = jnp.array([0.3127 / 0.3290, 1.0, (1 - 0.3127 - 0.3290) / 0.3290])
    a, b = X_ * white[0] - Y_, Y_ - Z_ * white[2]
    h = 180.0 * jnp.arctan2(b, a) / jnp.pi
    h = jnp.where(h < 0, h + 360.0, h)
    return jnp.sum(a ** 2 + a ** 2 + b ** 2 + (h * 0.01) ** 2)


def adapt(m, transform="scaled"):
    M_ = TRANSFORMS.get(transform)
    if M_ is None:
        raise KeyError(transform)
    return np.sum(np.einsum("ij,nj->ni", M_, m) ** 2)


def adapt_jax(jnp, m):
    return jnp.sum((m @ jnp.asarray(TRANSFORMS["scaled"]).T) ** 2)


def switches(x, window="hanning"):
    if type(x) != np.ndarray:
        raise TypeError("x must be an array")
    if window in WINDOWS.keys() and window:  # noqa: SIM118 (as QuantEcon writes it)
        w = WINDOWS[window](3)
    else:
        w = np.ones(3)
    if np.isclose(1.5, 1).any():
        w = w * 0.0
    A = np.array(np.outer(x[:3], w + 1.0), dtype=float, copy=True, order="C")
    wdir = x * 100.0
    mask = np.array(wdir <= 35.0)
    wdir[mask] += 360.0
    parts = dict((k, x * (i + 1.0)) for i, k in enumerate(["S1", "ST"]))  # noqa: C402
    frac, whole = np.modf(x * 3.0 + 2.0)
    return (np.sum(A * A) + np.sum(wdir * x) + np.sum(parts["ST"] ** 2)
            + np.sum(frac * frac) + np.sum(whole * x) + np.sum(x * x / len(x)))


def switches_jax(jnp, x):
    w = jnp.asarray(np.hanning(3)) + 1.0
    A = jnp.outer(x[:3], w)
    wdir = x * 100.0
    wdir = jnp.where(wdir <= 35.0, wdir + 360.0, wdir)
    y = x * 3.0 + 2.0
    whole = jnp.trunc(y)
    frac = y - whole
    return (jnp.sum(A * A) + jnp.sum(wdir * x) + jnp.sum((x * 2.0) ** 2)
            + jnp.sum(frac * frac) + jnp.sum(jax_stop(whole) * x) + jnp.sum(x * x / x.shape[0]))


def jax_stop(v):
    import jax
    return jax.lax.stop_gradient(v)


def _make_take(ndims, slice_dim):
    def take(indexer):
        return tuple(indexer if slice_dim % ndims == i else slice(None) for i in range(ndims))
    return take


def row_max(vals, out=None):
    if out is None:
        out = np.empty(vals.shape[0])
    out[:] = vals.max(axis=1)
    return out


def nested_forms(m, beta):
    take = _make_take(m.ndim, -1)
    d = m[take(slice(1, None))] - m[take(slice(None, -1))]
    grid = np.linspace(0.1, 2.0, 5)

    def bellman(v):
        v_func = lambda z: np.interp(z, grid, v)  # (as QuantEcon's lectures write it)
        return v_func(grid * 0.9) * beta

    best = np.empty(m.shape[0])
    row_max(m * beta, out=best)
    return np.sum(d ** 2) + np.sum(bellman(np.log(grid))) + np.sum(best)


def nested_forms_jax(jnp, m, beta):
    d = m[:, 1:] - m[:, :-1]
    grid = jnp.linspace(0.1, 2.0, 5)
    v = jnp.interp(grid * 0.9, grid, jnp.log(grid)) * beta
    return jnp.sum(d ** 2) + jnp.sum(v) + jnp.sum(jnp.max(m * beta, axis=1))


def buoyancy(x, z):
    """MetPy's Brunt-Vaisala frequency: np.gradient at uneven heights, along an axis."""
    theta = 300.0 + 10.0 * x
    n2 = 9.8 / theta * np.gradient(theta, z, axis=0)
    return np.sum(np.sqrt(np.maximum(n2, 0.0) + 1e-4))


def buoyancy_jax(jnp, x, z):
    theta = 300.0 + 10.0 * x
    n2 = 9.8 / theta * jnp.gradient(theta, z, axis=0)
    return jnp.sum(jnp.sqrt(jnp.maximum(n2, 0.0) + 1e-4))


FORMS = [
    (encode, encode_jax, (X,)),
    (largest_root, largest_root_jax, (X,)),
    (colour_rows, colour_rows_jax, (M,)),
    (adapt, adapt_jax, (M,)),
    (switches, switches_jax, (X,)),
    (nested_forms, nested_forms_jax, (M, 0.9)),
    (buoyancy, buoyancy_jax, (X, Z)),
]


def everything(x, m, beta, z):
    return (encode(x) + largest_root(x) + colour_rows(m) + adapt(m) + switches(x)
            + nested_forms(m, beta) + buoyancy(x, z))


def everything_jax(jnp, x, m, beta, z):
    return (encode_jax(jnp, x) + largest_root_jax(jnp, x) + colour_rows_jax(jnp, m)
            + adapt_jax(jnp, m) + switches_jax(jnp, x) + nested_forms_jax(jnp, m, beta)
            + buoyancy_jax(jnp, x, z))


def check(fn, fn_jax, args):
    """``fn``'s gradient against central differences and JAX's."""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    wrt = tuple(range(len(args)))
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    want = jax.grad(lambda *a: fn_jax(jnp, *a), argnums=wrt)(*(jnp.array(a) for a in args))
    check_against(fn, args, wrt, value, grads, want)


def test_every_form_as_plain_python():
    pytest.importorskip("jax")
    assert_runs_as_plain_python(__file__)


def test_compiled_gradient_matches_finite_differences_and_jax():
    pytest.importorskip("jax")
    check(everything, everything_jax, (X, M, 0.9, Z))


def test_a_bool_flag_choosing_none_keys_the_code():
    """``BA = np.zeros(n) if flag else None`` on a bool argument (it was refused: two kinds of
    value): decided by the call's value, each value its own code (tests/test_list_args.py)."""
    def split(y, flag):
        ba = np.zeros(3) if flag else None
        return np.sum(y) if ba is None else np.sum(y * (ba + 2.0))

    grad = jitgrad.grad(split)
    y = X[:3].copy()
    np.testing.assert_allclose(grad(y, True), np.full(3, 2.0))
    np.testing.assert_allclose(grad(y, False), np.ones(3))


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    for fn, fn_jax, args in FORMS:
        check(fn, fn_jax, args)
        print("ok", fn.__name__)
