"""``parallel=True`` (`jitgrad.parallel`): the gradient of every ``prange`` function equals the
serial one (≤ 1e-12 relative), is bit-for-bit the same across runs and at 1 and 2 threads, and
loops that cannot run in parallel run serially and say why."""

import numba
import numpy as np
import parallel_fns as F
import pytest

import jitgrad

rng = np.random.default_rng(13)
PARALLEL = [  # (function, arguments, wrt)
    (F.per_row_loss, (rng.normal(size=(150, 4)), rng.normal(size=4), rng.normal(size=150)),
     (0, 1)),
    (F.pairwise_energy, (rng.normal(size=(90, 2)), 0.7), (0, 1)),
    (F.rows_written_in_inner_loop, (rng.normal(size=(120, 3)), rng.normal(size=3)), (0, 1)),
    (F.rowwise_logsumexp, (rng.normal(size=(130, 5)), rng.normal(size=5)), (0, 1)),
    (F.gmm_data_term, (rng.normal(size=3), rng.normal(size=(3, 4)),
                       0.1 * rng.normal(size=(3, 10)), rng.normal(size=(200, 4))), (0, 1, 2)),
]
SERIAL = [  # (function, arguments, why)
    (F.carried_state, (rng.normal(size=100), 0.4), "is carried from one iteration"),
    (F.shared_work_array, (rng.normal(size=(100, 3)), 0.4), "`z` is shared by all iterations"),
]


def flat(out):
    value, grads = out
    return [value, *(grads if isinstance(grads, tuple) else (grads,))]


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / max(
        float(np.max(np.abs(np.asarray(b)))), 1e-300)


@pytest.fixture
def threads():
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


@pytest.mark.parametrize(("fn", "args", "wrt"), PARALLEL, ids=[c[0].__name__ for c in PARALLEL])
def test_parallel_gradient_equals_serial_and_repeats(fn, args, wrt, threads):
    want = flat(jitgrad.value_and_grad(fn, wrt=wrt)(*args))
    par = jitgrad.value_and_grad(fn, wrt=wrt, parallel=True)
    runs = []
    for n in (1, 2, 2, 1):
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        runs.append(flat(par(*args)))
    for got in runs:
        for g, w in zip(got, want):
            assert rel(g, w) <= 1e-12
        for g, first in zip(got, runs[0]):
            assert np.array_equal(g, first)  # bit for bit, at any thread count
    source = par.source()
    assert source.count("in _prange(") == 2, source  # the forward loop and its adjoint
    assert "runs serially" not in source


@pytest.mark.parametrize(("fn", "args", "why"), SERIAL, ids=[c[0].__name__ for c in SERIAL])
def test_loops_that_cannot_run_in_parallel_run_serially_and_say_why(fn, args, why):
    want = flat(jitgrad.value_and_grad(fn)(*args))
    par = jitgrad.value_and_grad(fn, parallel=True)
    got = flat(par(*args))
    for g, w in zip(got, want):
        assert rel(g, w) <= 1e-12
    source = par.source()
    assert "_prange(" not in source.split("import", 3)[-1]
    assert "runs serially under parallel=True" in source and why in source, source


def test_without_parallel_prange_is_range():
    fn, args, wrt = PARALLEL[0]
    g = jitgrad.value_and_grad(fn, wrt=wrt)
    g(*args)
    assert "prange" not in g.source().replace("numba.prange(", "")


def test_parallel_builds_have_their_own_source_and_cache_folder():
    """Numba's disk cache ignores the parallel option (numba #6845): the parallel build is
    another file, in another folder."""
    fn, args, wrt = PARALLEL[3]
    serial = jitgrad.value_and_grad(fn, wrt=wrt)
    par = jitgrad.value_and_grad(fn, wrt=wrt, parallel=True)
    serial(*args)
    par(*args)
    s, p = serial._last, par._last
    assert s.path != p.path and p.path.split("/")[-2].endswith("-parallel")
    assert "parallel=True" in p.source and "parallel=True" not in s.source


def test_grad_takes_parallel_too():
    fn, args, _ = PARALLEL[1]
    g = jitgrad.grad(fn, wrt=0, parallel=True)(*args)
    assert rel(g, jitgrad.grad(fn, wrt=0)(*args)) <= 1e-12
