"""Tuple and list arguments (issue #11): the generated code takes their items one by one; a
gradient with respect to a tuple is a tuple of the items' gradients (a list for a list).
Checked against finite differences, plain Python and the tape; and np.cumprod (exact at
zeros), ``.flat`` reads and ``np.ndindex`` loops on their own."""

import numpy as np
import pytest
import tuple_fns as T
from fd import numeric_grad

import jitgrad
from jitgrad import SignatureError, UnsupportedError, tape

rng = np.random.default_rng(11)


def _n(*shape):
    return rng.normal(size=shape) if shape else float(rng.normal())


CASES = [
    pytest.param(T.tuple_params_loss, ((_n(3), _n()), _n(5, 3), _n(5)), (0, 1), id="params"),
    pytest.param(T.normal_nll, ((_n(), _n()), _n(6)), (0, 1), id="floats"),
    pytest.param(T.indexed_items, ((_n(), _n(), _n()), _n(4)), (0, 1), id="index-len-iter"),
    pytest.param(T.list_of_layers, ([_n(3, 4), _n(4, 2)], _n(5, 3)), (0, 1), id="list"),
    pytest.param(T.tuple_to_helper, ((_n(3), _n()), _n(4, 3)), (0,), id="helper"),
    pytest.param(T.bounds_not_in_wrt, (_n(6), (-0.5, 0.7)), (0,), id="read-only"),
    pytest.param(T.mixed_items, ((3, _n(), _n(4)), _n(4)), (1,), id="int-item"),
    pytest.param(T.branch_on_item, ((1.0, 0.5), _n(3)), (0, 1), id="branch-then"),
    pytest.param(T.branch_on_item, ((0.5, 1.0), _n(3)), (0, 1), id="branch-else"),
    pytest.param(T.writes_into_item, ((_n(3), _n(2)), _n()), (0, 1), id="write-item"),
    pytest.param(T.rnn_params, ((_n(3), _n(3, 3) * 0.5, _n(3)), _n(5)), (0, 1), id="rnn"),
]


def _copy(v):
    if isinstance(v, (tuple, list)):
        return type(v)(_copy(x) for x in v)
    return v.copy() if isinstance(v, np.ndarray) else v


def _reference(fn, args, k):
    """Finite differences w.r.t. argument k, item by item for a tuple or list."""
    a = args[k]
    if not isinstance(a, (tuple, list)):
        return numeric_grad(lambda *xs: fn(*_copy(xs)), args, k)
    out = []
    for j in range(len(a)):
        def item_fn(v, j=j):
            items = list(_copy(a))
            items[j] = v
            return fn(*_copy(args[:k] + (type(a)(items),) + args[k + 1:]))
        out.append(numeric_grad(item_fn, (a[j],), 0))
    return type(a)(out)


def _assert_close(got, want, what):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want), f"{what}: {type(got).__name__}, expected " \
                                        f"{type(want).__name__}"
        assert len(got) == len(want)
        for j, (g, w) in enumerate(zip(got, want)):
            _assert_close(g, w, f"{what}[{j}]")
        return
    assert np.shape(got) == np.shape(want), what
    assert isinstance(got, float) == isinstance(want, float), what
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize(("fn", "args", "wrt"), CASES)
def test_value_and_grad(fn, args, wrt):
    given = _copy(args)
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*given)
    np.testing.assert_allclose(value, fn(*_copy(args)), rtol=1e-10)
    for k, g in zip(wrt, grads):
        _assert_close(g, _reference(fn, args, k), f"{fn.__name__} wrt {k}")
    for a, b in zip(given, args):  # the caller's arguments (and their items) are unchanged
        for x, y in zip(a if isinstance(a, (tuple, list)) else [a],
                        b if isinstance(b, (tuple, list)) else [b]):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(("fn", "args", "wrt"), CASES)
def test_single_wrt_and_tape(fn, args, wrt):
    g = jitgrad.grad(fn, wrt=wrt[0])(*_copy(args))
    _assert_close(g, _reference(fn, args, wrt[0]), f"{fn.__name__} wrt {wrt[0]} alone")
    if fn is T.writes_into_item:  # the tape refuses writes into what it differentiates
        with pytest.raises(UnsupportedError, match="writing into a leaf tensor"):
            tape.grad(fn, wrt=wrt[0])(*_copy(args))
        return
    t = tape.grad(fn, wrt=wrt[0])(*_copy(args))
    _assert_close(g, t, f"{fn.__name__}: jitgrad vs the tape")


def test_one_compile_per_item_signature():
    g = jitgrad.grad(T.tuple_params_loss, wrt=0)
    w, x, y = _n(3), _n(5, 3), _n(5)
    g((w, 0.1), x, y)
    g((w * 2.0, -0.2), x, y)
    assert len(g.specialisations.by_types) == 1
    assert isinstance(g([w, 0.1], x, y), list)  # a list: another signature, a list back
    gb = g((w, np.ones(5)), x, y)[1]  # an array item: another signature
    assert gb.shape == (5,) and len(g.specialisations.by_types) == 3


def test_signature_shows_the_tuple():
    g = jitgrad.grad(T.tuple_params_loss, wrt=0)
    src = g.source((_n(3), _n()), _n(5, 3), _n(5))
    assert "params: tuple(f64[:], f64)" in src


def test_items_indexed_by_a_run_time_integer():
    """Numbers indexed at run time (``p[k]`` in a loop) are read from a vector of them;
    arrays of a tuple indexed by the counter of a loop over an argument's axis unroll that
    loop for the call's size (checked on entry, built again for another), so a tuple shorter
    than the axis raises Python's IndexError."""
    def dyn(p, x):
        s = 0.0
        for k in range(x.shape[0]):
            s += p[k] * x[k] * x[k]
        return s
    gp, gx = jitgrad.grad(dyn, wrt=(0, 1))((1.0, 2.0), np.array([0.5, -1.5]))
    np.testing.assert_allclose(gp, (0.25, 2.25))
    np.testing.assert_allclose(gx, [1.0, -6.0])

    def dyn_arrays(p, x):
        s = 0.0
        for k in range(x.shape[0]):
            s += np.sum(p[k]) * x[k]
        return s
    g_arrays = jitgrad.grad(dyn_arrays, wrt=1)
    np.testing.assert_allclose(g_arrays((np.ones(2), np.ones(3)), np.ones(2)), [2.0, 3.0])
    with pytest.raises(IndexError):
        g_arrays((np.ones(2), np.ones(3)), np.ones(3))


def test_an_int_item_in_wrt_is_not_differentiated():
    """As JAX's trees: the gradient has the tuple's structure, None at the integer."""
    x = np.linspace(0.5, 1.5, 4)
    g = jitgrad.grad(T.mixed_items, wrt=0)((3, 1.0, x), np.ones(4))
    assert g[0] is None
    want = numeric_grad(lambda v: T.mixed_items((3, v, x), np.ones(4)), (1.0,), 0)
    assert g[1] == pytest.approx(want, rel=1e-6)
    with pytest.raises(SignatureError, match="holds no float"):
        jitgrad.grad(T.mixed_items, wrt=0)((3, 2), np.ones(4))


# ---- np.cumprod, .flat, np.ndindex --------------------------------------------------------------


def cumprod_weighted(x, w):
    return np.sum(np.cumprod(x) * w) + np.sum(x.cumprod())


def cumprod_matrix(a):
    return np.sum(np.cumprod(a) ** 2)


@pytest.mark.parametrize("x", [
    pytest.param(np.array([0.5, -2.0, 1.5, 0.7, -1.1]), id="no-zero"),
    pytest.param(np.array([0.5, -2.0, 0.0, 0.7, -1.1]), id="one-zero"),
    pytest.param(np.array([0.0, -2.0, 0.0, 0.7, -1.1]), id="two-zeros"),
    pytest.param(np.array([0.5, -2.0, 1.5, 0.7, 0.0]), id="zero-last"),
])
def test_cumprod_exact_at_zeros(x):
    w = np.array([1.0, 2.0, -1.0, 0.5, 3.0])
    v, (gx, gw) = jitgrad.value_and_grad(cumprod_weighted, wrt=(0, 1))(x, w)
    assert v == pytest.approx(cumprod_weighted(x, w))
    np.testing.assert_allclose(gx, numeric_grad(cumprod_weighted, (x, w), 0), atol=1e-8)
    np.testing.assert_allclose(gw, numeric_grad(cumprod_weighted, (x, w), 1), atol=1e-8)
    tx, tw = tape.grad(cumprod_weighted, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(gx, tx, atol=1e-12)
    np.testing.assert_allclose(gw, tw, atol=1e-12)


def test_cumprod_of_a_matrix_runs_over_the_flattened_array():
    a = rng.normal(size=(2, 3))
    g = jitgrad.grad(cumprod_matrix)(a)
    assert g.shape == (2, 3)
    np.testing.assert_allclose(g, numeric_grad(cumprod_matrix, (a,), 0), rtol=1e-6)


def cumprod_axis(a):
    return np.sum(np.cumprod(a, axis=1))


def test_cumprod_along_an_axis_is_refused():
    with pytest.raises(UnsupportedError, match="np.cumprod along an axis of a matrix"):
        jitgrad.grad(cumprod_axis)(np.ones((2, 2)))


def flat_and_ndindex(x, w):
    s = 0.0
    for idx in np.ndindex(x.shape):
        s += x[idx] * w.flat[idx[0] * x.shape[1] + idx[1]]
    for i, j in np.ndindex(2, 3):
        if x[i, j] > 0.0:
            continue
        s += x[i, j] ** 2
    return s + x.flat[4]


def ndindex_break(x):
    s = 0.0
    for i, j, k in np.ndindex(x.shape):
        if x[i, j, k] > 1.0:
            break
        s += x[i, j, k] * (i + 2 * j + 3 * k)
    return s


def flat_write(x):
    x.flat[0] = 1.0
    return np.sum(x)


def test_flat_and_ndindex():
    x, w = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    g = jitgrad.grad(flat_and_ndindex, wrt=(0, 1))(x, w)
    for k in (0, 1):
        np.testing.assert_allclose(g[k], numeric_grad(flat_and_ndindex, (x, w), k), rtol=1e-6,
                                   atol=1e-8)
    t = tape.grad(flat_and_ndindex, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(g[0], t[0], atol=1e-12)


def test_ndindex_break_keeps_row_major_order():
    x = rng.uniform(-1.0, 0.9, size=(2, 3, 2))
    x[1, 1, 0] = 1.5  # the loop stops here
    g = jitgrad.grad(ndindex_break)(x)
    np.testing.assert_allclose(g, numeric_grad(ndindex_break, (x,), 0), atol=1e-8)
    assert g[1, 1, 1] == 0.0 and g[1, 0, 1] != 0.0


def test_write_through_flat():
    """``x.flat[0] = 1.0`` writes into (a copy of) the argument: its first entry no longer
    reaches the sum, as central differences of the same function say."""
    x = rng.normal(size=(2, 2))
    g = jitgrad.grad(flat_write)(x.copy())
    np.testing.assert_allclose(g, numeric_grad(flat_write, (x,), 0), atol=1e-9)
    np.testing.assert_array_equal(g, [[0.0, 1.0], [1.0, 1.0]])
