"""Two general changes for NPBench's slowest gradients (issue #45: hdiff, go_fast).

* Sizes ``n + c``: a scalar ``n + 3`` of a size ``n`` is a size too (`size_tokens.plus`), and
  a slice ``x[1:n + 3]`` of an axis assumed to have ``n + 3`` entries or more (checked first
  thing, ``size_at_least``) is ``n + 2`` long, so slices of a padded array with bounds computed
  from another's sizes meet as one size: one loop nest per run of operations, no broadcasting
  checks, no sum back to a shape, nothing recomputed for its shape in the adjoint.
* A fused nest's result filled into an operand the kernel made, which nothing reads after it
  (`emit_fused.NestWriter.reused_operands`): no second array of fresh pages.
* The forward pass's last loop nest and the adjoint pass's first written as one where that
  stores fewer arrays (`emit._Writer.across_passes`): the forward's values read in the element.

Each form's gradients are checked against central differences and, where installed, JAX's, as
plain Python in a process of its own (``__main__``), and the generated code for what each change
removes; one compiled test runs both forms as users run them.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import jitgrad

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against, numeric_grad
from plain_python import assert_runs_as_plain_python

try:  # the independent oracle, where installed
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None

RNG = np.random.default_rng(4545)


def padded(u, w):
    """``u`` has two more entries than ``w`` on each side of both axes; the bounds of its
    slices are computed from ``w``'s sizes."""
    n, m = w.shape[0], w.shape[1]
    s = (2.0 * u[1:n + 3, 1:m + 3] - u[0:n + 2, 1:m + 3] - u[2:n + 4, 1:m + 3]
         + np.sin(u[1:n + 3, 2:m + 4]))
    d = s[1:, 1:m + 1] - s[:-1, 1:m + 1]
    e = np.where(d > 0.1, d, 0.5 * d)
    return np.sum(w * (e[1:] + e[:-1]) ** 2)


def padded_jax(u, w):
    n, m = w.shape[0], w.shape[1]
    s = (2.0 * u[1:n + 3, 1:m + 3] - u[0:n + 2, 1:m + 3] - u[2:n + 4, 1:m + 3]
         + jnp.sin(u[1:n + 3, 2:m + 4]))
    d = s[1:, 1:m + 1] - s[:-1, 1:m + 1]
    e = jnp.where(d > 0.1, d, 0.5 * d)
    return jnp.sum(w * (e[1:] + e[:-1]) ** 2)


def diagonal_shift(a):
    """A loop over the diagonal feeding one number added to every entry: its gradient is an
    array of zeros with the diagonal set, read once more in full."""
    t = 0.0
    for i in range(a.shape[0]):
        t += np.cos(a[i, i])
    return np.sum(a * 2.0 + t)


def diagonal_shift_jax(a):
    t = jnp.sum(jnp.cos(jnp.diagonal(a)))
    return jnp.sum(a * 2.0 + t)


def arc(p, q):
    """One run of elementwise operations: the forward pass's nest and the adjoint pass's
    first are one, so nothing of the forward is stored for the adjoint."""
    h = np.sin((q - p) * 0.5) ** 2 + np.cos(p) * np.cos(q) * 0.25
    return np.sum(np.arctan2(np.sqrt(h), np.sqrt(1.0 + h)))


def arc_jax(p, q):
    h = jnp.sin((q - p) * 0.5) ** 2 + jnp.cos(p) * jnp.cos(q) * 0.25
    return jnp.sum(jnp.arctan2(jnp.sqrt(h), jnp.sqrt(1.0 + h)))


FORMS = {
    "arc": (arc, arc_jax, (RNG.normal(size=6), RNG.normal(size=6))),
    "padded": (padded, padded_jax, (RNG.normal(size=(7, 8)), RNG.normal(size=(3, 4)))),
    "padded_wider": (padded, padded_jax, (RNG.normal(size=(9, 8)), RNG.normal(size=(3, 4)))),
    "diagonal_shift": (diagonal_shift, diagonal_shift_jax, (RNG.normal(size=(5, 5)),)),
}


def _check(name):
    fn, fn_jax, args = FORMS[name]
    wrt = tuple(range(len(args)))
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    if jax is None:  # central differences alone (check_against compares with them too)
        want, tolerance = [numeric_grad(fn, args, k) for k in wrt], {"rtol": 1e-6, "atol": 1e-7}
    else:
        want, tolerance = jax.grad(fn_jax, argnums=wrt)(*(jnp.asarray(a) for a in args)), {}
    check_against(fn, args, wrt, value, grads, want, **tolerance)


def test_generated_code():
    """The padded stencil: its sizes checked once, no broadcasting at run time, nothing summed
    back to a shape; the diagonal's gradient filled into in place, not into a new array."""
    src = jitgrad.grad(padded, wrt=(0, 1)).source(*FORMS["padded"][2])
    assert "size_at_least" in src
    assert "broadcast_size" not in src and "sum_to" not in src
    src = jitgrad.grad(diagonal_shift).source(*FORMS["diagonal_shift"][2])
    adjoint = src[src.index("# -- adjoint pass"):]
    assert "_rt.empty((a.shape[0], a.shape[1]))" not in adjoint, adjoint
    for entry in (jitgrad.grad, jitgrad.value_and_grad):
        src = entry(arc, wrt=(0, 1)).source(*FORMS["arc"][2])
        assert "first loop nest with the forward's last" in src
        assert src.count("_rt.empty(") == 2, src  # (the two gradients alone)


def test_compiled():
    """As users run them, compiled."""
    _check("padded")
    _check("diagonal_shift")
    _check("arc")


def test_as_plain_python():
    assert_runs_as_plain_python(__file__)


if __name__ == "__main__":
    for name in sorted(FORMS):
        _check(name)
    print(f"{len(FORMS)} forms agree with central differences" + (" and JAX" if jax else ""))
