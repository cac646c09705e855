"""A call whose arguments are all arrays goes straight to the compiled entry
(`Specialisations.fast`), with Numba's compiling switched off so that its dispatcher rejects
argument types jitgrad did not specialise for. Every other call takes the full path: these
tests hold the fast path to what the full path gives."""

import warnings

import numpy as np
import pytest

import jitgrad
from jitgrad.backend.numba import compile as jcompile
from jitgrad.core.errors import JitgradError, SignatureError

pytestmark = pytest.mark.skipif(jcompile.DISABLE_JIT, reason="plain Python has no dispatcher")


def loss(w, x, y):
    r = x @ w - y
    return 0.5 * np.sum(r * r) + np.sum(np.tanh(w))


def data(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(3).astype(dtype), rng.standard_normal((5, 3)).astype(dtype),
            rng.standard_normal(5).astype(dtype))


def fresh(*args, **kwargs):
    """The same gradient from a GradFunction that never took the fast path."""
    return jitgrad.grad(loss, wrt=(0, 1))(*args, **kwargs)


def same(a, b):
    for x, y in zip(a, b):
        assert type(x) is type(y) and x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


def test_an_all_array_call_makes_the_next_one_fast():
    g = jitgrad.grad(loss, wrt=(0, 1))
    args = data()
    first = g(*args)
    assert g.specialisations.fast is not None
    with pytest.raises(TypeError):  # the fast entry compiles nothing new
        g.specialisations.fast(*data(np.float32))
    same(g(*args), first)


def test_other_types_layouts_and_arguments_take_the_full_path():
    g = jitgrad.grad(loss, wrt=(0, 1))
    w, x, y = data()
    g(w, x, y)
    xf = np.asfortranarray(x)
    same(g(w, xf, y), fresh(w, xf, y))  # another layout: compiled for it, then fast again
    assert g.specialisations.fast is not None
    wide = np.random.default_rng(1).standard_normal((5, 6))[:, ::2]  # not contiguous
    same(g(w, wide, y), fresh(w, wide, y))
    w.flags.writeable = False
    same(g(w, x, y), fresh(w, x, y))
    same(g(w, x, y=y), fresh(w, x, y))
    with pytest.raises(SignatureError):
        g(w, x)


def elementwise(w, x):
    return np.sum(np.sin(w) * x)


def test_another_dtype_takes_the_full_path():
    g = jitgrad.grad(elementwise, wrt=(0, 1))
    w, x, _ = data()
    g(w, x[0])
    w32, x32 = w.astype(np.float32), x[0].astype(np.float32)
    want = jitgrad.grad(elementwise, wrt=(0, 1))(w32, x32)
    assert want[0].dtype == np.float32  # gradients in the arguments' dtypes
    same(g(w32, x32), want)
    same(g(w, x[0]), jitgrad.grad(elementwise, wrt=(0, 1))(w, x[0]))


def test_errors_inside_a_fast_call_are_explained():
    g = jitgrad.grad(loss, wrt=(0, 1))
    w, x, y = data()
    g(w, x, y)
    with pytest.raises(JitgradError, match="test_fast_calls.py"):
        g(w, x, np.ones(4))  # same kinds and ranks, sizes that do not line up


def test_njit_hands_out_an_entry_that_compiles():
    import numba

    g = jitgrad.grad(loss, wrt=(0, 1))
    w, x, y = data()
    g(w, x, y)
    entry = g.njit(w, x, y)
    assert g.specialisations.fast is None

    @numba.njit
    def step(w, x, y):
        gw, _ = entry(w, x, y)
        return w - 0.1 * gw

    xf = np.asfortranarray(x)
    np.testing.assert_allclose(step(w, xf, y), w - 0.1 * fresh(w, x, y)[0], rtol=1e-14)
    same(g(w, xf, y), fresh(w, xf, y))


def guarded(w, x, y):
    if x[0, 0] > 100.0:
        raise ValueError("x[0, 0] is too big")
    r = x @ w - y
    return 0.5 * np.sum(r * r) + np.sum(np.tanh(w))


def test_a_failed_call_leaves_no_fast_entry_that_compiles():
    """A call that switched the fast entry's compiling on again (another layout) and then
    failed leaves no fast path behind: a float32 call after it takes the full path (a build of
    its own), where it once reached Numba, which could not compile it."""
    g = jitgrad.grad(guarded, wrt=(0, 1))
    w, x, y = data()
    g(w, x, y)
    big = np.asfortranarray(x)
    big[0, 0] = 1000.0
    with pytest.raises(ValueError, match="too big"):
        g(w, big, y)
    assert g.specialisations.fast is None
    args32 = data(np.float32)
    same(g(*args32), jitgrad.grad(guarded, wrt=(0, 1))(*args32))


def test_a_closure_made_per_minibatch_warns_once_with_the_fix():
    """A loss defined again for each minibatch closes over that minibatch: each is a new
    gradient (jitgrad reads closed-over values as constants). The third one for the same
    signature warns, once, at the function's line, naming what it closes over and the fix;
    the gradients themselves are right (against the formula 2 X^T (X w - y))."""
    rng = np.random.default_rng(0)
    w = np.array([0.5, -0.25])
    caught = []
    for _ in range(4):
        xb, yb = rng.normal(size=(3, 2)), rng.normal(size=3)

        def batch_loss(w):
            return np.sum((xb @ w - yb) ** 2)  # noqa: B023 - the pattern this test is about

        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            g = jitgrad.grad(batch_loss)(w)
        caught += [x for x in got if issubclass(x.category, jitgrad.RecompileWarning)]
        np.testing.assert_allclose(g, 2.0 * xb.T @ (xb @ w - yb), rtol=1e-12)
    assert len(caught) == 1, [str(x.message) for x in caught]
    message = str(caught[0].message)
    assert "3 times" in message and "xb, yb" in message and "grad(loss)(w, X_batch" in message
    assert caught[0].filename == __file__

