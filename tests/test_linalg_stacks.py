"""np.linalg over stacks of matrices (issue #43): NumPy maps its one-matrix functions over the
leading axes of an array of rank 3 or more; jitgrad writes that map as a loop
(`lang.numpy_linalg.over_stacks`, `numpy_written.over_stack`), each matrix differentiated by its
one-matrix rule; solve of stacks (NumPy 2: the right-hand side is a vector only at rank 1).
Beside them, forms of code written for autograd: autograd's grad of a one-entry array,
autograd's convolve of arrays whose sizes the build does not know, isinstance of a list or a
tuple argument.

One compiled gradient by default (inv and solve of stacks, autograd's convolve of vectors; a
larger one, with eigh, convolve along two axes and isinstance, under -m heavy), against
central differences, JAX and autograd; every form of np.linalg on stacks, autograd's grad of a
one-entry array, np.concatenate/hstack/column_stack of one array, the refusals and the
run-time errors as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own: compiled,
the stacks alone take Numba minutes; under -m heavy they are compiled too).
"""

import operator
import os
import sys

import numpy as np
import pytest
from fd import numeric_grad
from plain_python import assert_runs_as_plain_python

import jitgrad
from jitgrad.core.errors import UnsupportedError

RNG = np.random.default_rng(3)
A = RNG.standard_normal((2, 3, 5, 4))  # a stack (2, 3) of tall matrices
_C = RNG.standard_normal((3, 2, 4, 4))
C = _C @ np.swapaxes(_C, -1, -2) + 4.0 * np.eye(4)  # symmetric positive definite ones
B = RNG.standard_normal((3, 2, 4, 3))  # right-hand sides, one matrix per system
V = RNG.standard_normal((4, 2))  # one right-hand side for every system
E = RNG.standard_normal(C.shape)
E = E + np.swapaxes(E, -1, -2)  # a symmetric direction: eigh and cholesky read a triangle


def stacks(a, c, b):
    s = np.linalg.svd(a, full_matrices=False, compute_uv=False)
    u, s2, vh = np.linalg.svd(a, full_matrices=False)
    w, v = np.linalg.eigh(c)
    w2, v2 = np.linalg.eigh(c, "U")
    sign, logdet = np.linalg.slogdet(c)
    total = np.sum(np.sin(s)) + np.sum(np.sin(u[..., :2]) * np.cos(vh[..., :2, 0])[..., None, :]
                                       * s2[..., None, :2])
    total += np.sum(v ** 2 * np.sin(w)[..., None]) + np.sum(w2) + np.sum(v2 ** 4)
    total += np.sum(np.linalg.inv(c) ** 2) + np.sum(np.linalg.cholesky(c)) + np.sum(logdet * sign)
    total += np.sum(np.linalg.pinv(a) ** 2) + np.sum(np.linalg.det(c[0]))
    total += np.sum(np.sqrt(np.linalg.eigvalsh(c))) + np.sum(np.linalg.det(c / 4.0))
    total += np.sum(np.sin(np.linalg.solve(c, b))) + np.sum(np.linalg.solve(c, V) ** 2)
    return total + np.sum(np.cos(np.linalg.solve(c[0, 0], b)))


def stacks_jax(a, c, b):
    import jax.numpy as jnp
    s = jnp.linalg.svd(a, full_matrices=False, compute_uv=False)
    u, s2, vh = jnp.linalg.svd(a, full_matrices=False)
    w, v = jnp.linalg.eigh(c)
    w2, v2 = jnp.linalg.eigh(c, UPLO="U")
    sign, logdet = jnp.linalg.slogdet(c)
    total = jnp.sum(jnp.sin(s)) + jnp.sum(jnp.sin(u[..., :2])
                                          * jnp.cos(vh[..., :2, 0])[..., None, :]
                                          * s2[..., None, :2])
    total += jnp.sum(v ** 2 * jnp.sin(w)[..., None]) + jnp.sum(w2) + jnp.sum(v2 ** 4)
    total += jnp.sum(jnp.linalg.inv(c) ** 2) + jnp.sum(jnp.linalg.cholesky(c))
    total += jnp.sum(logdet * sign)
    total += jnp.sum(jnp.linalg.pinv(a) ** 2) + jnp.sum(jnp.linalg.det(c[0]))
    total += jnp.sum(jnp.sqrt(jnp.linalg.eigvalsh(c))) + jnp.sum(jnp.linalg.det(c / 4.0))
    total += jnp.sum(jnp.sin(jnp.linalg.solve(c, b))) + jnp.sum(jnp.linalg.solve(c, V) ** 2)
    return total + jnp.sum(jnp.cos(jnp.linalg.solve(c[0, 0], b)))


def check_stacks():
    """One gradient: svd (values; U, S, Vh), eigh (lower, upper), eigvalsh, slogdet, inv,
    det and cholesky of rank 4, pinv of rank 4, det of rank 3, solve of stacks (stacked right-hand sides, one
    right-hand side, one matrix); checked against central differences (along a symmetric
    direction for c, whose triangles eigh and cholesky read) and JAX."""
    value, (ga, gc, gb) = jitgrad.value_and_grad(stacks, wrt=(0, 1, 2))(A, C, B)
    assert value == pytest.approx(stacks(A, C, B), rel=1e-12)
    h = 1e-6  # central differences along random directions (E for c: symmetric)
    da, db = RNG.standard_normal(A.shape), RNG.standard_normal(B.shape)
    for g, moved in ((ga, lambda t: stacks(A + t * da, C, B)), (gc, lambda t: stacks(A, C + t * E, B)),
                     (gb, lambda t: stacks(A, C, B + t * db))):
        direction = da if g is ga else E if g is gc else db
        assert np.sum(g * direction) == pytest.approx((moved(h) - moved(-h)) / (2 * h), rel=1e-6)
    import jax
    jax.config.update("jax_enable_x64", True)
    want = jax.jit(jax.grad(stacks_jax, argnums=(0, 1, 2)))(A, C, B)  # one XLA compile
    np.testing.assert_allclose(ga, np.asarray(want[0]), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gb, np.asarray(want[2]), rtol=1e-8, atol=1e-10)
    # JAX's eigh and cholesky rules are for symmetric matrices: compared along E
    assert np.sum(gc * E) == pytest.approx(float(np.sum(np.asarray(want[1]) * E)), rel=1e-9)


@pytest.mark.heavy
def test_stacks_compiled():
    check_stacks()


# ----------------------------------------------------------------------------- autograd's forms

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")
signal = pytest.importorskip("autograd.scipy.signal")
builtins = pytest.importorskip("autograd.builtins")

X = RNG.standard_normal((5, 4))
K = RNG.standard_normal((3, 2))
Y = RNG.standard_normal((1, 3))
W1 = RNG.standard_normal((5 + 3 - 1, 4 + 2 - 1))
W2 = RNG.standard_normal((4, 1, 5 - 2))
C3 = C[0]  # a stack of 2


def compiled_forms(x, k, c, b, parts, pair):
    """autograd's convolve of arguments (sizes known at run time only): full over both axes,
    'valid' along one with another axis kept, 'same' of vectors; eigh of a stack of rank 3 and
    solve of stacks of rank 4; isinstance of a list and a tuple argument."""
    assert builtins.isinstance(parts, builtins.list) and not builtins.isinstance(parts, tuple)
    assert builtins.isinstance(pair, tuple) and builtins.isinstance(pair, builtins.tuple)
    total = anp.sum(signal.convolve(x, k) * W1)
    total += anp.sum(signal.convolve(x, k, axes=([0], [0]), mode="valid") ** 2 * W2)
    total += anp.sum(signal.convolve(k[:, 0], x[:, 1], mode="same") ** 2)
    w, v = anp.linalg.eigh(c[0])
    total += anp.sum(v ** 2 * anp.sin(w)[..., None]) + anp.sum(anp.sin(anp.linalg.solve(c, b)))
    return total + parts[0] * pair[1]


def forms_jax(x, k, c, b):
    import jax
    jnp = jax.numpy
    full = jax.scipy.signal.convolve(x, k)  # SciPy's: autograd's default axes and mode
    valid = jnp.stack([jnp.stack([jnp.convolve(x[:, i], k[:, j], mode="valid")
                                  for j in range(k.shape[1])]) for i in range(x.shape[1])])
    same = jnp.convolve(k[:, 0], x[:, 1], mode="full")[2:5]  # SciPy's 'same': k's size, centred
    total = jnp.sum(full * W1) + jnp.sum(valid ** 2 * W2) + jnp.sum(same ** 2)
    w, v = jnp.linalg.eigh(c[0])
    return total + jnp.sum(v ** 2 * jnp.sin(w)[..., None]) + jnp.sum(jnp.sin(jnp.linalg.solve(c, b)))


def small_forms(c, b, x, k):
    """A few of the new forms, compiled by default: inv of a stack of rank 4, solve of stacks,
    autograd's convolve of vectors of run-time sizes."""
    total = anp.sum(anp.linalg.inv(c) ** 2) + anp.sum(anp.sin(anp.linalg.solve(c, b)))
    return total + anp.sum(signal.convolve(x, k) ** 2)


def test_small_forms_compiled():
    x, k = X[:, 0], K[:, 0]
    args = (C, B, x, k)
    value, grads = jitgrad.value_and_grad(small_forms, wrt=(0, 1, 2, 3))(*args)
    assert value == pytest.approx(small_forms(*args), rel=1e-12)
    want = autograd.grad(small_forms, (0, 1, 2, 3))(*args)
    for j in range(4):
        np.testing.assert_allclose(grads[j], want[j], rtol=1e-9, atol=1e-11)
    for j in (1, 2, 3):
        np.testing.assert_allclose(grads[j], numeric_grad(small_forms, args, j), rtol=1e-5,
                                   atol=1e-6)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def oracle(c, b, x, k):
        total = jnp.sum(jnp.linalg.inv(c) ** 2) + jnp.sum(jnp.sin(jnp.linalg.solve(c, b)))
        return total + jnp.sum(jnp.convolve(x, k) ** 2)
    for ours, theirs in zip(grads, jax.grad(oracle, argnums=(0, 1, 2, 3))(*args)):
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-9, atol=1e-11)


@pytest.mark.heavy
def test_forms_compiled():
    parts, pair = [0.7, -0.2], (0.4, 1.3)
    args = (X, K, C, B, parts, pair)
    value, grads = jitgrad.value_and_grad(compiled_forms, wrt=(0, 1, 2, 3, 4, 5))(*args)
    assert value == pytest.approx(compiled_forms(*args), rel=1e-12)
    want = autograd.grad(compiled_forms, (0, 1, 3))(*args)
    for k, ours in zip((0, 1, 3), (grads[0], grads[1], grads[3])):
        np.testing.assert_allclose(ours, numeric_grad(compiled_forms, args, k), rtol=1e-5,
                                   atol=1e-6)
    for ours, theirs in zip((grads[0], grads[1], grads[3]), want):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)
    h = 1e-6
    moved = [compiled_forms(X, K, C + s * h * E, B, parts, pair) for s in (1, -1)]
    assert np.sum(grads[2] * E) == pytest.approx((moved[0] - moved[1]) / (2 * h), rel=1e-6)
    assert list(grads[4]) == pytest.approx([pair[1], 0.0]) and isinstance(grads[4], list)
    assert tuple(grads[5]) == pytest.approx((0.0, parts[0])) and isinstance(grads[5], tuple)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jx, jk, jc, jb = jax.grad(forms_jax, argnums=(0, 1, 2, 3))(X, K, C, B)
    for ours, theirs in ((grads[0], jx), (grads[1], jk), (grads[3], jb)):
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-9, atol=1e-11)
    assert np.sum(grads[2] * E) == pytest.approx(float(np.sum(np.asarray(jc) * E)), rel=1e-9)


# ----------------------------------------------------------------------------- plain Python


def one_entry(y):
    return anp.sum(anp.sin(y), axis=1, keepdims=True)  # (1, 1) for y of one row


def grad_of_one_entry(y):
    return anp.sum(autograd.grad(one_entry)(y) * y)


def joined(x, y, z):
    a = np.column_stack(x)  # a vector: its entries, each a column: (1, n)
    b = np.hstack(y) + np.column_stack(y)  # rank 3: the rows joined along their axis 1
    d = np.concatenate(z, axis=2)
    return np.sum(np.sin(a)) + np.sum(b * np.cos(b)) + np.sum(d ** 3)


def joined_jax(x, y, z):
    import jax.numpy as jnp
    a = jnp.reshape(x, (1, -1))
    b = jnp.hstack(list(y)) + jnp.column_stack(list(y))
    d = jnp.concatenate(list(z), axis=2)
    return jnp.sum(jnp.sin(a)) + jnp.sum(b * jnp.cos(b)) + jnp.sum(d ** 3)


def more_forms(x, v, p):
    """matmul of a vector and a stack, einsum's sublist ellipsis, the nuclear and 2-norms of
    a stack's matrices along two axes, np.std of a list, a dict's items sorted by key."""
    total = np.sum(np.sin(v[:3] @ x)) + np.sum((x @ v) ** 2)
    y = np.swapaxes(x, 1, 2)
    total += np.sum(np.einsum(x, [Ellipsis, 0, 1], y, [Ellipsis, 1, 2], [Ellipsis, 0, 2]) ** 2)
    total += np.sum(np.linalg.norm(x, "nuc", axis=(0, 2)) ** 2)
    total += np.sum(np.linalg.norm(x, 2, axis=(2, 1), keepdims=True) * v[:2, None, None])
    total += np.std([v[0], v[1] * 3.0, p["b"]])
    for i, (k, w) in enumerate(sorted(p.items(), key=operator.itemgetter(0))):
        total += np.sum(np.sin(w)) * (i + 1.0)
    return total


def more_forms_jax(x, v, p):
    import jax.numpy as jnp
    total = jnp.sum(jnp.sin(v[:3] @ x)) + jnp.sum((x @ v) ** 2)
    total += jnp.sum(jnp.einsum("...ij,...jk->...ik", x, jnp.swapaxes(x, 1, 2)) ** 2)
    total += jnp.sum(jnp.linalg.norm(x, "nuc", axis=(0, 2)) ** 2)
    total += jnp.sum(jnp.linalg.norm(x, 2, axis=(2, 1), keepdims=True) * v[:2, None, None])
    total += jnp.std(jnp.stack([v[0], v[1] * 3.0, p["b"]]))
    return total + jnp.sum(jnp.sin(p["a"])) + jnp.sum(jnp.sin(p["b"])) * 2.0


def _solve_ranks(a, b):
    return np.sum(np.linalg.solve(a, b))


def _three_axes(x, k):
    return anp.sum(signal.convolve(x, k))


def _sines(z):
    return anp.sin(z)


def _many(y):
    return anp.sum(autograd.grad(_sines)(y))


def _inv(a):
    return np.sum(np.linalg.inv(a))


def check_plain():
    check_stacks()
    import jax
    jax.config.update("jax_enable_x64", True)
    g = jitgrad.grad(grad_of_one_entry)(Y)  # autograd's grad takes a one-entry array
    np.testing.assert_allclose(g, autograd.grad(grad_of_one_entry)(Y), rtol=1e-12)
    inner = jax.grad(lambda y: jax.numpy.sum(jax.numpy.sin(y)))
    np.testing.assert_allclose(g, jax.grad(lambda y: jax.numpy.sum(inner(y) * y))(Y), rtol=1e-12)
    x, y, z = RNG.standard_normal(3), RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 3, 2, 2))
    got = jitgrad.grad(joined, wrt=(0, 1, 2))(x, y, z)
    want = jax.jit(jax.grad(joined_jax, argnums=(0, 1, 2)))(x, y, z)
    for k in range(3):
        np.testing.assert_allclose(got[k], numeric_grad(joined, (x, y, z), k), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(got[k], np.asarray(want[k]), rtol=1e-12, atol=1e-12)
    x, v, p = RNG.standard_normal((2, 3, 4)), RNG.standard_normal(4), {"b": 0.3, "a": V}
    got = jitgrad.grad(more_forms, wrt=(0, 1, 2))(x, v, p)
    want = jax.jit(jax.grad(more_forms_jax, argnums=(0, 1, 2)))(x, v, p)
    np.testing.assert_allclose(got[0], numeric_grad(more_forms, (x, v, p), 0), rtol=1e-6,
                               atol=1e-8)
    for ours, theirs in ((got[0], want[0]), (got[1], want[1]), (got[2]["a"], want[2]["a"]),
                         (got[2]["b"], want[2]["b"])):
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-10, atol=1e-12)
    a3 = np.eye(3) + np.zeros((2, 2, 3, 3))
    with pytest.raises(UnsupportedError, match="stacks of ranks 4 and 3"):
        jitgrad.grad(_solve_ranks)(a3, np.ones((2, 3, 1)))
    with pytest.raises(Exception, match="leading axes differ"):
        jitgrad.grad(_solve_ranks)(np.eye(3) + np.zeros((2, 3, 3)), np.ones((4, 3, 1)))
    with pytest.raises(UnsupportedError, match="more than two axes"):
        jitgrad.grad(_three_axes)(np.ones((3, 3, 3)), np.ones((2, 2, 2)))
    with pytest.raises(Exception, match="more than one entry"):  # autograd raises too
        jitgrad.grad(_many)(np.ones(3))
    with pytest.raises(Exception, match="empty stack"):
        jitgrad.grad(_inv)(np.zeros((0, 2, 3, 3)))
    np.testing.assert_allclose(jitgrad.grad(_inv)(a3), jax.grad(
        lambda a: jax.numpy.sum(jax.numpy.linalg.inv(a)))(a3), rtol=1e-12)


def test_as_plain_python():
    """`check_plain` in a process of its own with JITGRAD_DISABLE_JIT=1."""
    pytest.importorskip("jax")
    assert_runs_as_plain_python(__file__, timeout=900)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    check_plain()
    print("ok")
