"""Arrays and indexing real code uses (issue #25, item 2): ``out=``, ``np.size``, ``np.finfo``,
``& | ^ ~`` on masks, ``np.any``/``np.all``, reads and writes through boolean masks, integer
arrays and pairs of them, ``np.take_along_axis``/``np.put_along_axis`` and ``np.einsum``.

Each compiled gradient is checked against central differences of the plain function
(``fd.numeric_grad``) and, where it runs them, the tape; values against NumPy's. NumPy's
semantics are kept exactly: ``x[idx] += v`` with a repeated index applies one update (it does
not accumulate, unlike ``np.add.at``), ``x[idx] = v`` keeps the last value written.
"""

from __future__ import annotations

import numpy as np
import pytest
from fd import numeric_grad

import jitgrad
from jitgrad import tape

RNG = np.random.default_rng(25)


def float_positions(args):
    return tuple(k for k, a in enumerate(args)
                 if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


def check(f, *args, with_tape=True):
    """value_and_grad of every float argument: value as NumPy's, gradients as central
    differences (and the tape's); the arguments left untouched."""
    wrt = float_positions(args)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    value, grads = jitgrad.value_and_grad(f, wrt=wrt)(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(value, f(*[a.copy() if isinstance(a, np.ndarray) else a
                                          for a in before]), rtol=1e-12)
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, numeric_grad(f, before, k), rtol=1e-6, atol=1e-8)
    if with_tape:
        t = tape.grad(f, wrt=wrt)(*before)
        for g, h in zip(grads, t):
            np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-12)
    return grads


# ----------------------------------------------------------------------------- writes


def add_at_repeats(x, idx, v):
    y = x.copy()
    y[idx] += v
    return np.sum(y * y * np.arange(1.0, y.shape[0] + 1))


def set_at_repeats(x, idx, v):
    y = x * 1.0
    y[idx] = v
    return np.sum(np.sin(y) * np.arange(1.0, y.shape[0] + 1))


def test_add_through_repeated_indices_applies_one_update_as_numpy():
    x, v = RNG.normal(size=5), RNG.normal(size=4)
    idx = np.array([1, 3, 1, -1])
    _, gv = check(add_at_repeats, x, idx, v)
    # the first v aimed at 1 is overwritten by the second: no gradient reaches it
    assert gv[0] == 0.0 and gv[2] != 0.0


def test_set_through_repeated_indices_keeps_the_last_value():
    x, v = RNG.normal(size=5), RNG.normal(size=4)
    gx, gv = check(set_at_repeats, x, np.array([2, 0, 2, 4]), v)
    assert gv[0] == 0.0 and gx[2] == 0.0 and gx[0] == 0.0
    check(set_at_repeats, x, np.array([2, 0, 2, 4]), 0.25)  # a scalar broadcast


def mask_writes(x, t):
    y = x * 2.0
    y[y > 0.5] += t
    y[y < -0.5] = np.abs(x[y < -0.5]) * t
    return np.sum(y ** 3)


def test_mask_writes_of_a_scalar_and_of_the_selected_values():
    x = np.array([0.9, -1.3, 0.1, 1.7, -0.2, -0.8])
    check(mask_writes, x, 0.7)


def matrix_writes(a, rows, cols, v, keep):
    b = a.copy()
    b[rows, cols] = v
    b[keep] *= 2.0  # rows of a matrix by a 1-D mask
    b[b > 1.0] = 1.0  # entries of a matrix by a mask of its shape
    return np.sum(b * b * b)


def test_writes_into_a_matrix_by_pairs_and_masks():
    a = RNG.normal(size=(3, 4))
    check(matrix_writes, a, np.array([0, 2, 0, -1]), np.array([1, 3, 1, 0]),
          RNG.normal(size=4), np.array([True, False, True]))


def test_write_with_the_wrong_number_of_values_raises():
    g = jitgrad.grad(set_at_repeats, wrt=(0, 2))
    with pytest.raises(ValueError, match="the values do not match the entries"):
        g(np.ones(5), np.array([0, 1]), np.ones(3))  # as NumPy: a ValueError


# ----------------------------------------------------------------------------- reads


def reads(x, a, idx, rows, cols):
    inside = (x > -1.0) & (x < 1.0)
    outside = ~inside ^ (x > 5.0)
    return (np.sum(x[inside] ** 2) + np.sum(np.exp(x[outside])) + np.sum(a[a > 0.0] ** 3)
            + np.sum(a[a[:, 0] > 0.0] * 2.0) + np.sum(a[rows, cols] ** 2)
            + np.sum(np.sin(x[idx])))


def test_reads_through_masks_index_arrays_and_pairs():
    x = np.array([0.3, -1.4, 2.2, 0.7, -0.1])
    a = RNG.normal(size=(4, 3))
    check(reads, x, a, np.array([4, -1, 4, 0]), np.array([3, 0, 3]), np.array([2, -3, 2]))
    check(reads, x, np.asfortranarray(a), np.array([1]), np.array([0]), np.array([0]))


def empty_selection(x):
    return np.sum(x[x > 100.0]) + np.sum(x * x)


def test_a_mask_that_selects_nothing():
    check(empty_selection, RNG.normal(size=4))


@pytest.mark.parametrize(("args", "error"), [
    ((np.ones((3, 3)), np.array([0, 1, 1]), np.array([0, 3, 1])), "index out of bounds"),
    ((np.ones((3, 3)), np.array([0, -4]), np.array([0, 0])), "index out of bounds"),
    ((np.ones((3, 3)), np.array([0, 1]), np.array([0])), "shape mismatch"),
])
def test_index_pairs_out_of_bounds_or_of_different_lengths_raise(args, error):
    with pytest.raises(jitgrad.JitgradError, match=error):
        jitgrad.grad(lambda_free_pairs)(*args)


def lambda_free_pairs(a, rows, cols):
    return np.sum(a[rows, cols])


def masked(x, mask):
    return np.sum(x[mask] ** 2)


def test_a_mask_of_another_shape_raises_index_error():
    with pytest.raises(jitgrad.JitgradError, match="IndexError: boolean index did not match"):
        jitgrad.grad(masked)(np.ones(4), np.array([True, False, True]))


def rows_of(x, idx):
    return np.sum(x[idx])


def test_an_index_array_out_of_bounds_raises_before_reading():
    with pytest.raises(jitgrad.JitgradError, match="IndexError: index out of bounds"):
        jitgrad.grad(rows_of)(np.ones(3), np.array([0, 3]))
    with pytest.raises((IndexError, jitgrad.JitgradError), match="index out of bounds"):
        jitgrad.jvp(rows_of, (np.ones(3), np.array([0, -4])), (np.ones(3), None))


def test_forward_mode_through_masks_gathers_and_scatters():
    x, v = RNG.normal(size=5), RNG.normal(size=4)
    idx = np.array([1, 3, 1, -1])
    for f, args in ((add_at_repeats, (x, idx, v)), (set_at_repeats, (x, idx, v)),
                    (mask_writes, (np.array([0.9, -1.3, 0.1, 1.7]), 0.7))):
        tangents = tuple(np.ones_like(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                         else 1.0 if isinstance(a, float) else None for a in args)
        _, t = jitgrad.jvp(f, args, tangents)
        ref = sum(np.sum(numeric_grad(f, args, k) * (tk if np.ndim(tk) else 1.0))
                  for k, tk in enumerate(tangents) if tk is not None)
        np.testing.assert_allclose(t, ref, rtol=1e-6)


# ----------------------------------------------------------------------------- along an axis


def along(logits, y, z):
    picked = np.take_along_axis(logits, y, axis=1)
    t = np.zeros_like(logits)
    np.put_along_axis(t, y, z, axis=1)
    return np.sum(picked ** 2) + np.sum(t * logits)


def test_take_and_put_along_axis():
    logits = RNG.normal(size=(3, 4))
    y = np.array([[0, 3], [2, 2], [-1, 1]])
    check(along, logits, y, RNG.normal(size=(3, 2)), with_tape=False)


def along_axis0(a, idx):
    return np.sum(np.take_along_axis(a, idx, axis=0) ** 2) + np.sum(
        np.take_along_axis(a.ravel(), idx.ravel(), axis=None))


def test_take_along_the_first_axis_and_flattened():
    check(along_axis0, RNG.normal(size=(3, 2)), np.array([[0, 2], [2, 2], [1, -1], [0, 0]]))


# ----------------------------------------------------------------------------- einsum


def einsum_one(a, spec):
    return np.sum(np.sin(np.einsum(spec, a)))


def einsum_two(a, b, spec):
    return np.sum(np.sin(np.einsum(spec, a, b)))


@pytest.mark.parametrize("spec", ["ij,jk->ik", "ij,kj", "ij->ji", "ij->", "ii->i", "ii",
                                  "ij,ij->i", "i,j->ij", "ij,j->i", "bij,bjk->bik", "ij,kl"])
def test_einsum_matches_numpy_and_differences(spec):
    """The subscript string is an argument: each string is its own build."""
    letters = dict(zip("ijklb", (3, 3, 2, 2, 2)))
    shapes = [tuple(letters[c] for c in t) for t in spec.split("->")[0].split(",")]
    args = tuple(RNG.normal(size=s) for s in shapes)
    f = einsum_one if len(args) == 1 else einsum_two
    wrt = tuple(range(len(args)))
    v, gs = jitgrad.value_and_grad(f, wrt=wrt)(*args, spec)
    np.testing.assert_allclose(v, f(*args, spec), rtol=1e-12)
    for k, g in zip(wrt, gs):
        np.testing.assert_allclose(g, numeric_grad(f, (*args, spec), k), rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- out=, constants


def inplace_into_argument(x, w):
    h = x * w
    alias = h
    np.tanh(h, out=h)  # the alias sees the write, as in NumPy
    np.exp(x, out=x)  # into the argument: jitgrad works on a copy
    return np.sum(alias * x)


def test_out_writes_in_place_and_leaves_the_callers_array_alone():
    check(inplace_into_argument, RNG.normal(size=4), RNG.normal(size=4), with_tape=False)


def constants(x):
    eps = np.finfo(np.float64).eps
    big = np.finfo(float).max
    assert np.all(np.isfinite(x)) and np.any(x), "bad input"
    n = np.size(x) + np.size(x, 0) + np.size(x, axis=-1)
    return np.sum(np.log(np.maximum(x * x, eps))) / n + np.minimum(np.max(x), big)


def any_all_methods(x):
    assert x.any() and (x > -10.0).all() and not (x > 10.0).any(axis=0)
    return np.sum(x * x)


def test_finfo_size_any_all():
    x = np.array([0.5, -1.5, 2.0])
    check(constants, x)
    check(any_all_methods, x, with_tape=False)  # the tape's tensors have no .any()
    with pytest.raises(AssertionError, match="bad input"):
        jitgrad.grad(constants)(np.array([0.5, np.inf, 1.0]))


# ----------------------------------------------------------------------------- in loops, branches


def loop_scatter(x, idx, v):
    y = x.copy()
    for t in range(3):
        y[idx] += v * y[idx]
        if t == 1:
            y[y > 2.0] = 2.0
    return np.sum(y * y)


def branch_scatter(x, idx, a):
    y = x * 1.0
    if a > 0.0:
        y[idx] = a * x[idx]
    else:
        y[x < 0.0] *= a
    return np.sum(y ** 3)


def rnn_gather(W, tokens):
    h = np.zeros(W.shape[1])
    total = 0.0
    for t in range(tokens.shape[0]):
        h = np.tanh(W[tokens[t]] + 0.5 * h)
        total += np.sum(h[h > 0.0])
    return total


CASES_IN_LOOPS = [
    (loop_scatter, (np.array([0.3, 1.9, -0.4, 1.2, 0.8]), np.array([0, 2, 0]),
                    np.array([0.2, -0.1, 0.3]))),
    (branch_scatter, (np.array([0.3, -1.2, 0.5, 1.1, -0.7]), np.array([4, 1, 4]), 0.7)),
    (branch_scatter, (np.array([0.3, -1.2, 0.5, 1.1, -0.7]), np.array([4, 1, 4]), -0.7)),
    (rnn_gather, (RNG.normal(size=(4, 3)), np.array([1, 3, 1, 0, 2]))),
]


@pytest.mark.parametrize(("f", "args"), [pytest.param(f, a, id=f"{f.__name__}-{k}")
                                         for k, (f, a) in enumerate(CASES_IN_LOOPS)])
@pytest.mark.parametrize("memory_cap", [None, 256])
def test_scatters_and_masks_in_loops_and_branches(f, args, memory_cap):
    """Inside loops (taped, or checkpointed under a memory cap) and branches; the Hessian
    (forward over reverse) against differences of the tape's gradient."""
    wrt = float_positions(args)
    grads = jitgrad.grad(f, wrt=wrt, memory_cap=memory_cap)(*args)
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, numeric_grad(f, args, k), rtol=1e-6, atol=1e-8)
    if memory_cap is None:
        h = jitgrad.hessian(f, wrt=0)(*args)
        ref = np.array([numeric_grad(lambda x, j=j: tape.grad(f)(x, *args[1:])[j],
                                     (args[0],), 0) for j in np.ndindex(args[0].shape)])
        np.testing.assert_allclose(h.reshape(ref.shape), ref, rtol=1e-5, atol=1e-6)
