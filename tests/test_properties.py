"""Property tests of the broadcasting, reduction and integer-indexing adjoints against central
finite differences.

Every new combination of argument ranks compiles a new Numba specialisation (about a second), so
the ranks are a small fixed set; hypothesis varies the sizes (1 to 4 along each axis, size-1
axes included) and the values, which reuse the compiled code. Values come from a seeded NumPy
generator, so ties (where max/min/maximum have a kink) have probability zero; the few draws
closer than ``GAP`` are rejected anyway. Examples are derandomized: the same on every run.
"""

from __future__ import annotations

import numpy as np
import pytest
from fd import numeric_grad
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import jitgrad

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
RTOL, ATOL = 1e-6, 1e-8
GAP = 1e-3  # smallest |a - b| (or gap between entries) allowed near a kink

# ----------------------------------------------------------------------------- binary functions


def mul_add(a, b):
    return np.sum(a * b + a)


def maximum_squared(a, b):
    return np.sum(np.maximum(a, b) ** 2)


def minimum_weighted(a, b):
    return np.sum(np.minimum(a, b) * np.sin(a))


def div_sub(a, b):
    return np.sum((a - b) / (1.0 + b * b))


def all_binary(a, b):
    """The four in one function: one compile per rank pair (each adjoint's broadcasting is
    still its own, summed into the one gradient)."""
    return mul_add(a, b) + maximum_squared(a, b) + minimum_weighted(a, b) + div_sub(a, b)


BINARY = [all_binary]
KINKED = {all_binary}

# (rank of a, rank of b); rank 0 is a Python float.
RANK_PAIRS = [(2, 2), (2, 1), (1, 2), (2, 0), (0, 1), (3, 2)]


@st.composite
def broadcast_pair(draw, ranks):
    """Two broadcast-compatible shapes of the given ranks: the trailing axes of a common shape,
    each independently replaced by 1 (size-1 axes broadcast)."""
    ra, rb = ranks
    full = draw(st.lists(st.integers(1, 3), min_size=max(ra, rb), max_size=max(ra, rb)))

    def operand(rank):
        dims = full[len(full) - rank:]
        return tuple(1 if draw(st.booleans()) else d for d in dims)

    return operand(ra), operand(rb)


def draw_value(rng, shape):
    if shape == ():
        return float(rng.normal())
    return rng.normal(size=shape)


def check_against_fd(fn, args, wrt):
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert value == pytest.approx(float(fn(*args)), rel=1e-12, abs=1e-12)
    for k, got in zip(wrt, grads):
        want = numeric_grad(fn, args, k)
        if isinstance(args[k], np.ndarray):
            assert isinstance(got, np.ndarray)
            assert got.shape == args[k].shape
        else:
            assert isinstance(got, float)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{fn.__name__} d/d(argument {k}), shapes "
                                   f"{[np.shape(a) for a in args]}")


# Rank 3 once is enough: each new rank pair compiles anew.
BINARY_CASES = [pytest.param(fn, ranks, id=f"{fn.__name__}-ranks{ranks[0]}{ranks[1]}",
                             marks=pytest.mark.slow if 3 in ranks else ())
                for fn in BINARY for ranks in RANK_PAIRS]


@pytest.mark.parametrize(("fn", "ranks"), BINARY_CASES)
def test_broadcasting_adjoints(fn, ranks):
    @SETTINGS
    @given(shapes=broadcast_pair(ranks), seed=st.integers(0, 2**32 - 1))
    def prop(shapes, seed):
        rng = np.random.default_rng(seed)
        a, b = (draw_value(rng, s) for s in shapes)
        if fn in KINKED:
            assume(np.min(np.abs(np.subtract(a, b))) > GAP)
        check_against_fd(fn, (a, b), (0, 1))

    prop()


# ----------------------------------------------------------------------------- reductions
# One function per (reduction, axis): the axis must be a constant in the source. Each has the
# reduction twice, without and with keepdims (one compile instead of two). The results go
# through nonlinear maps and a weight ``w`` (shaped like the keepdims result), so the gradient
# flowing into each reduction's adjoint differs from entry to entry.


def sum_all(x, w):
    plain = np.sum(x)
    kept = np.sum(x, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def sum_0(x, w):
    plain = np.sum(x, axis=0)
    kept = np.sum(x, axis=0, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def sum_1(x, w):
    plain = np.sum(x, axis=1)
    kept = np.sum(x, axis=1, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def sum_last(x, w):
    plain = np.sum(x, axis=-1)
    kept = np.sum(x, axis=-1, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def mean_all(x, w):
    plain = 3.0 * np.mean(x)
    kept = 3.0 * np.mean(x, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def mean_0(x, w):
    plain = 3.0 * np.mean(x, axis=0)
    kept = 3.0 * np.mean(x, axis=0, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def mean_1(x, w):
    plain = 3.0 * np.mean(x, axis=1)
    kept = 3.0 * np.mean(x, axis=1, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def mean_last(x, w):
    plain = 3.0 * np.mean(x, axis=-1)
    kept = 3.0 * np.mean(x, axis=-1, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def max_all(x, w):
    plain = np.max(x)
    kept = np.max(x, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def max_0(x, w):
    plain = np.max(x, axis=0)
    kept = np.max(x, axis=0, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def max_1(x, w):
    plain = np.max(x, axis=1)
    kept = np.max(x, axis=1, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def max_last(x, w):
    plain = np.max(x, axis=-1)
    kept = np.max(x, axis=-1, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def min_all(x, w):
    plain = np.min(x)
    kept = np.min(x, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def min_0(x, w):
    plain = np.min(x, axis=0)
    kept = np.min(x, axis=0, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def min_1(x, w):
    plain = np.min(x, axis=1)
    kept = np.min(x, axis=1, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


def min_last(x, w):
    plain = np.min(x, axis=-1)
    kept = np.min(x, axis=-1, keepdims=True)
    return np.sum(np.sin(plain)) + np.sum(np.cos(kept) * w)


REDUCTIONS = [
    sum_all, sum_0, sum_1, sum_last, mean_all, mean_0, mean_1, mean_last, max_all, max_0, max_1,
    max_last, min_all, min_0, min_1, min_last,
]
CHOOSERS = {f for f in REDUCTIONS if f.__name__.startswith(("max", "min"))}


def test_reduction_table_is_complete():
    names = {f.__name__ for f in REDUCTIONS}
    assert names == {f"{op}_{axis}" for op in ("sum", "mean", "max", "min")
                     for axis in ("all", "0", "1", "last")}


def keepdims_shape(shape, fn) -> tuple:
    axis = fn.__name__.split("_")[1]
    if axis == "all":
        return (1,) * len(shape)
    k = len(shape) - 1 if axis == "last" else int(axis)
    return tuple(1 if j == k else n for j, n in enumerate(shape))


def min_gap(x) -> float:
    v = np.sort(np.ravel(x))
    return float(np.min(np.diff(v))) if v.size > 1 else np.inf


@pytest.mark.parametrize("fn", REDUCTIONS, ids=[f.__name__ for f in REDUCTIONS])
def test_reduction_adjoints(fn):
    @SETTINGS
    @given(shape=st.tuples(st.integers(1, 4), st.integers(1, 4)),
           seed=st.integers(0, 2**32 - 1))
    def prop(shape, seed):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=shape)
        w = rng.normal(size=keepdims_shape(shape, fn))
        if fn in CHOOSERS:
            assume(min_gap(x) > GAP)  # no ties anywhere, so none within a row or column
        check_against_fd(fn, (x, w), (0, 1))

    prop()


@pytest.mark.slow
@pytest.mark.parametrize("fn", [sum_1, max_last], ids=lambda f: f.__name__)
def test_reduction_adjoints_rank3(fn):
    """The same sources specialised to rank 3 (axis 1 is now a middle axis)."""
    @SETTINGS
    @given(shape=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
           seed=st.integers(0, 2**32 - 1))
    def prop(shape, seed):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=shape)
        w = rng.normal(size=keepdims_shape(shape, fn))
        if fn in CHOOSERS:
            assume(min_gap(x) > GAP)
        check_against_fd(fn, (x, w), (0, 1))

    prop()


# ----------------------------------------------------------------------------- integer indices
# Reads and writes through integers of every sign: an integer-array index ``x[idx]`` with
# entries from ``-n`` to ``n - 1`` (negative entries count from the end; entries repeat), scalar
# indices of either sign, indices computed at run time (``i % n - n``, ``-1 - i``), and writes
# through them in loops (a scatter: repeated entries add up, or the last write wins). The index
# arrays are arguments, so hypothesis varies their length and entries without a new compile;
# each rank is one compile. NumPy, run on the same arguments, is what the gradient must match.


def gather_rows(x, idx, w):
    """Rows of ``x`` (of any rank) at the integers ``idx``; repeated rows add their gradients."""
    return np.sum(np.sin(x[idx]) * w)


def rows_from_data(x, w):
    """An index array computed from data (``floor`` of a bounded value, entries of both signs),
    then a read through it: the gradient reaches ``x`` through the rows it selects."""
    idx = np.int64(np.floor(np.tanh(w) * (x.shape[0] - 0.5)))
    return np.sum(x[idx] * x[idx] * w) + x[np.argmax(w) - x.shape[0]]


def scalar_indices(A, i, j):
    """Element, row and column reads and writes at ``i``, ``j`` of either sign, and at indices
    computed from them (``i % r - r``, ``-1 - j``), a run-time negative index in a loop."""
    r, c = A.shape
    out = A * 1.0
    out[i, j] = np.sin(A[j % r, i % c]) * A[i % r - r, -1 - j % c]
    out[i % r - r, :] += A[-1 - i % r]
    out[:, j] *= A[:, -1]
    total = np.sum((A @ A[i]) * A[:, j])
    for k in range(r):
        total += out[k - r, j] * A[-1 - k, k % c - c]
    return total + np.sum(out * out)


def scatter(x, idx, v):
    """Writes through ``idx[k]`` in a loop: ``+=`` (repeated entries add), then a
    read-modify-write where the last write to an entry wins, then one under a branch."""
    acc = np.zeros_like(x)
    out = x * 1.0
    for k in range(idx.shape[0]):
        acc[idx[k]] += v[k] * x[idx[k]]
        out[idx[k]] = np.sin(out[idx[k]]) * v[k] + x[-1 - k % x.shape[0]]
        if v[k] > 0.0:
            out[idx[k] - x.shape[0] * (idx[k] >= 0)] *= v[k]
    return np.sum(acc * acc) + np.sum(out * np.cos(out))


def array_write(x, idx, v):
    """``out[idx] = v`` and ``out[idx] += v`` through an integer array (NumPy: with repeated
    entries the last ``=`` wins and ``+=`` adds once per distinct entry)."""
    out = x * 1.0
    out[idx] = v * 2.0
    out[idx] += v * out[idx]
    return np.sum(out * out)


@st.composite
def rows_and_index(draw, rank):
    """A shape (``n`` rows, 1 to 4 along each axis) and 1 to 5 row indices in ``[-n, n - 1]``."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    n = shape[0]
    idx = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=5))
    return shape, np.array(idx, dtype=np.int64)


def test_index_strategy_draws_every_sign():
    """The strategy reaches negative, zero, positive and repeated entries (else the properties
    below would not test them)."""
    seen = set()

    @settings(max_examples=60, derandomize=True)
    @given(drawn=rows_and_index(1))
    def collect(drawn):
        idx = drawn[1]
        seen.update(np.sign(idx).tolist())
        if len(set(idx.tolist())) < len(idx):
            seen.add("repeated")

    collect()
    assert seen >= {-1, 0, 1, "repeated"}


@pytest.mark.parametrize("rank", [1, 2, pytest.param(3, marks=pytest.mark.slow)])
def test_integer_array_reads(rank):
    @SETTINGS
    @given(drawn=rows_and_index(rank), seed=st.integers(0, 2**32 - 1))
    def prop(drawn, seed):
        shape, idx = drawn
        rng = np.random.default_rng(seed)
        x = rng.normal(size=shape)
        w = rng.normal(size=(idx.shape[0],) + shape[1:])
        check_against_fd(gather_rows, (x, idx, w), (0, 2))

    prop()


def test_integer_arrays_built_from_data():
    @SETTINGS
    @given(n=st.integers(1, 4), m=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
    def prop(n, m, seed):
        rng = np.random.default_rng(seed)
        x, w = rng.normal(size=n), rng.normal(size=m)
        scaled = np.tanh(w) * (n - 0.5)
        assume(np.min(np.abs(scaled - np.round(scaled))) > GAP)  # no floor at a jump
        assume(m == 1 or min_gap(w) > GAP)  # argmax not at a tie
        check_against_fd(rows_from_data, (x, w), (0, 1))

    prop()


def test_scalar_indices_of_every_sign():
    @SETTINGS
    @given(shape=st.tuples(st.integers(1, 4), st.integers(1, 4)), data=st.data(),
           seed=st.integers(0, 2**32 - 1))
    def prop(shape, data, seed):
        r, c = shape
        n = min(r, c)  # A @ A[i] and A[:, j] need a square A
        i = data.draw(st.integers(-n, n - 1), label="i")
        j = data.draw(st.integers(-n, n - 1), label="j")
        A = np.random.default_rng(seed).normal(size=(n, n))
        check_against_fd(scalar_indices, (A, i, j), (0,))

    prop()


@pytest.mark.parametrize("rank", [1, 2])
def test_writes_through_integer_indices_in_a_loop(rank):
    @SETTINGS
    @given(drawn=rows_and_index(rank), seed=st.integers(0, 2**32 - 1))
    def prop(drawn, seed):
        shape, idx = drawn
        rng = np.random.default_rng(seed)
        x, v = rng.normal(size=shape), rng.normal(size=idx.shape[0])
        assume(np.min(np.abs(v)) > GAP)  # the branch on v[k] > 0 not at its switch
        check_against_fd(scatter, (x, idx, v), (0, 2))

    prop()


def test_writes_through_an_integer_array_are_right_or_refused():
    """``out[idx] = v`` / ``out[idx] += v``: refused, pointing to the loop form, or (once
    supported) NumPy's answer, repeated entries included."""
    from jitgrad.core.errors import UnsupportedError

    x, v = np.array([0.3, -1.2, 0.7, 2.0]), np.array([0.5, -0.4, 1.1])
    for idx in ([-1, 0, -1], [2, -3, 1], [0, 0, 0]):
        args = (x, np.array(idx, dtype=np.int64), v)
        try:
            check_against_fd(array_write, args, (0, 2))
        except UnsupportedError as e:
            assert "integer-array index" in str(e) and "loop" in str(e), str(e)
