"""Lists, generators and objects across calls (issue #43, the forms of real model code: a
recurrent net's states, a mixture's components, a network's layers read through a parser).

* A list a called function builds by appending (started with a first item whose shape is
  known only when it is made) and returns: its caller reads it as the callee would, and the
  reads a list and an array of its items do not share are refused in the caller too.
* ``for a, b, c in zip(*parts(p))`` appending to a list; a row that broadcasts against a
  constant array a called function is given.
* A generator that yields tuples of arrays in a loop over a module-level list of sizes, read
  by ``for W, b in ...`` and by ``list(...)``.
* A nested function decorated with ``functools.wraps``; ``tuple(genexpr)`` over the tuple of
  its ``*values``.
* A dict attribute of the user's object keyed by the user's objects, holding slices.
* autograd's ``flatten`` and the ``unflatten`` it returns; autograd's ``convolve`` with
  ``axes`` and ``dot_axes`` (its convnet example's layer).
* A draw in a loop whose size is the length of a slice of a row of an argument.

Each function is compiled with Numba, as users run it (one compile per function), and checked
against central differences and JAX.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import numeric_grad

import jitgrad

try:
    from autograd.misc.flatten import flatten
    from autograd.scipy.signal import convolve
except ImportError:  # (autograd is not a dependency of jitgrad)
    flatten = convolve = None

DATA = np.random.RandomState(3).randn(5, 2)
SIZES = [(2, 3), (3, 2)]


# ---- a list returned by a callee; zip(*...); a generator of tuples ----------------------------


def _states(p, xs):
    def step(x, h):
        return np.tanh(x @ p["A"] + h)

    def head(h):
        hs = h * 2.0  # (its own `hs`, not the list below)
        return hs - np.max(hs)

    h = np.repeat(p["h0"], xs.shape[1], axis=0)  # (its rows: known only when it is made)
    hs = [head(h)]
    for x in xs:
        h = step(x, h)
        hs.append(head(h))
    return hs


def _sqdist(data, m):
    return np.sum((data - m) ** 2, axis=1)


def _parts(p):
    return p["w"] - np.log(np.sum(np.exp(p["w"]))), p["m"], p["s"]


def _components(p, data):
    lls = []
    for w, m, s in zip(*_parts(p)):
        lls.append(w - _sqdist(data, m) * s ** 2 + 0.0 * data[:, 0])
    return np.vstack(lls)


def _layers(v):
    for m, n in SIZES:
        yield v[: m * n].reshape((m, n)), v[m * n: m * n + n]
        v = v[(m + 1) * n:]


def sequence_model(p, xs):
    hs = _states(p, xs)
    total = 0.0
    for t in range(len(hs) - 1):
        total += np.sum(hs[t] * xs[t])
    h = xs[0]
    for W, b in _layers(p["v"]):
        h = np.tanh(h @ W + b)
    pairs = list(_layers(p["v"]))
    return total + np.sum(_components(p, DATA)) + np.sum(h) + np.sum(pairs[1][1])


def sequence_model_jax(p, xs):
    import jax.numpy as jnp
    h = jnp.repeat(p["h0"], xs.shape[1], axis=0)

    def head(h):
        return h * 2.0 - jnp.max(h * 2.0)
    hs = [head(h)]
    for x in xs:
        h = jnp.tanh(x @ p["A"] + h)
        hs.append(head(h))
    total = sum(jnp.sum(hs[t] * xs[t]) for t in range(len(hs) - 1))
    w = p["w"] - jnp.log(jnp.sum(jnp.exp(p["w"])))
    lls = jnp.vstack([w[k] - jnp.sum((DATA - p["m"][k]) ** 2, axis=1) * p["s"][k] ** 2
                      for k in range(w.shape[0])])
    h, v, pairs = xs[0], p["v"], []
    for m, n in SIZES:
        W, b = v[: m * n].reshape((m, n)), v[m * n: m * n + n]
        pairs.append((W, b))
        h = jnp.tanh(h @ W + b)
        v = v[(m + 1) * n:]
    return total + jnp.sum(lls) + jnp.sum(h) + jnp.sum(pairs[1][1])


def _sequence_args():
    rs = np.random.RandomState(0)
    p = {"A": 0.5 * rs.randn(2, 2), "h0": 0.3 * rs.randn(1, 2), "w": rs.randn(3),
         "m": rs.randn(3, 2), "s": 0.5 + rs.rand(3), "v": 0.4 * rs.randn(17)}
    return p, rs.randn(3, 4, 2)


# ---- objects, decorators, flatten, draws sized in a loop -------------------------------------


class _Parser:
    def __init__(self):
        self.table = {}
        self.n = 0

    def add(self, key, shape):
        start = self.n
        self.n += np.prod(shape)  # (a NumPy integer, as the slices' bounds)
        self.table[key] = (slice(start, self.n), shape)

    def get(self, vect, key):
        idxs, shape = self.table[key]
        return np.reshape(vect[idxs], shape)


class _Dense:
    def __init__(self, n):
        self.n = n


LAYERS = [_Dense(3), _Dense(2)]
IMAGES = np.random.RandomState(4).randn(2, 1, 4, 3)  # (images, colours, rows, columns)
PARSER = _Parser()
PARSER.add(LAYERS[0], (2, 3))
PARSER.add(LAYERS[1], (3, 2))


def parser_model(vect, X):
    def trim(*values, tol=1e-3):
        return tuple(0.0 if abs(v) < tol else float(v) for v in values)

    @functools.wraps(trim)
    def trimmed(*values):
        return trim(*values)

    h = X
    for layer in LAYERS:
        h = np.tanh(h @ PARSER.get(vect, layer))
    a, b, c = trimmed(h[0, 0], h[1, 1], vect[0])
    flat, unflatten = flatten([(h, vect[:2]), {"k": vect[3]}])
    back = unflatten(flat * 2.0)
    rng = np.random.default_rng(0)
    total = 0.0
    for row in np.reshape(vect, (3, -1)):
        d = np.shape(row)[0] // 2
        total += np.sum(rng.standard_normal((2, d)) * row[:d])
    filters = np.reshape(vect[:8], (1, 2, 2, 2))  # (colours, filters, rows, columns)
    maps = convolve(IMAGES, filters, axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode="valid")
    return (a * b + c + np.sum(flat ** 2) + np.sum(back[0][0]) + back[1]["k"] + total
            + np.sum(np.tanh(maps) * np.arange(1.0, 13.0).reshape(2, 2, 3, 1)))


def parser_model_jax(vect, X):
    import jax.numpy as jnp
    h = jnp.tanh(jnp.tanh(X @ vect[:6].reshape(2, 3)) @ vect[6:].reshape(3, 2))
    flat = jnp.concatenate([h.ravel(), vect[:2], vect[3:4]])
    rng = np.random.default_rng(0)
    total = sum(jnp.sum(rng.standard_normal((2, 2)) * row[:2]) for row in vect.reshape(3, 4))
    filters = vect[:8].reshape(1, 2, 2, 2)
    maps = jnp.stack([jnp.stack([sum(  # a true convolution: the filter flipped
        filters[0, o, 1 - i, 1 - j] * IMAGES[n, 0, i:i + 3, j:j + 2]
        for i in range(2) for j in range(2)) for o in range(2)]) for n in range(2)])
    return (h[0, 0] * h[1, 1] + vect[0] + jnp.sum(flat ** 2) + 2.0 * jnp.sum(h)
            + 2.0 * vect[3] + total + jnp.sum(jnp.tanh(maps) * jnp.arange(1.0, 13.0).reshape(
                2, 2, 3, 1)))


def _parser_args():
    rs = np.random.RandomState(1)
    return 0.5 * rs.randn(12), rs.randn(4, 2)


# ---- the checks ------------------------------------------------------------------------------


def _check(fn, fn_jax, args, leaves):
    """jitgrad's gradient (compiled) of ``fn`` w.r.t. its first argument against central
    differences and JAX; ``leaves(g)``: the gradient's arrays, in one order."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    value, grad = jitgrad.value_and_grad(fn)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    want = jax.grad(fn_jax)(*args)
    for got, ref in zip(leaves(grad), leaves(want)):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-9, atol=1e-11)
    return grad


def test_lists_returned_zipped_and_generated():
    p, xs = _sequence_args()
    grad = _check(sequence_model, sequence_model_jax, (p, xs),
                  lambda g: [g[k] for k in sorted(g)])
    for key in sorted(p):  # central differences, entry by entry of each array of the dict
        def of(a, key=key):
            return sequence_model({**p, key: a}, xs)
        np.testing.assert_allclose(grad[key], numeric_grad(of, (p[key],), 0), rtol=1e-6,
                                   atol=1e-7, err_msg=key)


@pytest.mark.skipif(flatten is None, reason="autograd is not installed")
def test_objects_decorators_flatten_convolve_and_draws_sized_in_a_loop():
    args = _parser_args()
    grad = _check(parser_model, parser_model_jax, args, lambda g: [g])
    np.testing.assert_allclose(grad, numeric_grad(parser_model, args, 0), rtol=1e-6, atol=1e-7)


def test_the_callers_reads_of_a_returned_list_are_checked():
    """The reads a list and an array of its items do not share are refused where the caller
    makes them, and a list returned by the function differentiated is refused."""
    p, xs = _sequence_args()

    def joined(p, xs):
        hs = _states(p, xs)
        return np.sum(hs + hs)  # (Python joins the lists)

    def returned(p, xs):
        return _states(p, xs)

    def passed_on(p, xs):  # returned again by the callee's caller, read by its own caller
        return _states(p, xs)

    def through(p, xs):
        hs = passed_on(p, xs)
        return np.sum(hs[0]) + np.sum(hs * 2.0)  # (Python repeats the list)

    for fn, what in [(joined, "in arithmetic"), (returned, "returned"),
                     (through, "in arithmetic")]:
        with pytest.raises(jitgrad.UnsupportedError, match=what):
            jitgrad.grad(fn)(p, xs)
