"""``parallel=True`` (`jitgrad.transforms.parallel`): the gradient of every ``prange`` function equals the
serial one (≤ 1e-12 relative), central differences of the function compiled by Numba itself
and JAX (where installed) per entry, is bit-for-bit the same across runs and at 1 and 2
threads, and loops that cannot run in parallel run serially and say why."""

import re

import corpus_surface_fns as S
import numba
import numpy as np
import parallel_fns as F
import pytest
from fd import numeric_grad, numeric_grad5

import jitgrad
from jitgrad.api import GradFunction
from jitgrad.backend.numba import compile as jcompile
from jitgrad.backend.numba import runtime as rt
from jitgrad.core import chunking
from jitgrad.transforms import parallel

rng = np.random.default_rng(13)
PARALLEL = [  # (function, arguments, wrt)
    (F.per_row_loss, (rng.normal(size=(150, 4)), rng.normal(size=4), rng.normal(size=150)),
     (0, 1)),
    (F.pairwise_energy, (rng.normal(size=(90, 2)), 0.7), (0, 1)),
    (F.rows_written_in_inner_loop, (rng.normal(size=(120, 3)), rng.normal(size=3)), (0, 1)),
    (F.rowwise_logsumexp, (rng.normal(size=(130, 5)), rng.normal(size=5)), (0, 1)),
    (F.gmm_data_term, (rng.normal(size=3), rng.normal(size=(3, 4)),
                       0.1 * rng.normal(size=(3, 10)), rng.normal(size=(200, 4))), (0, 1, 2)),
    (S.prange_sum, (rng.normal(size=70),), 0),  # the surface corpus's prange function
    (F.shared_work_array, (rng.normal(size=(100, 3)), 0.4), (0, 1)),
    (F.gmm_work_arrays_before_loop, (rng.normal(size=3), rng.normal(size=(3, 4)),
                                     0.1 * rng.normal(size=(3, 10)), rng.normal(size=(200, 4))),
     (0, 1, 2)),
    (F.rowwise_logsumexp_range, (rng.normal(size=(130, 5)), rng.normal(size=5)), (0, 1)),
]
SERIAL = [  # (function, arguments, why)
    (F.carried_state, (rng.normal(size=100), 0.4), "is carried from one iteration"),
    (F.running_array, (rng.normal(size=(100, 3)), 0.4), "as the previous iteration left it"),
    (F.work_array_read_after, (rng.normal(size=(100, 3)), 0.4),
     "`z` is shared by all iterations"),
]


# Several chunks for every loop, as a large input gets them (`runtime.chunk_count` gives these
# small inputs one chunk, on the calling thread): the partials and their sum in chunk order.
CHUNKS = (None, 5)


def parallel_value_and_grad(fn, wrt, chunks=None):
    """``jitgrad.value_and_grad(fn, wrt=wrt, parallel=True)``, with ``chunks`` chunks per
    parallel loop when given."""
    return GradFunction(fn, wrt, with_value=True, parallel=True,
                        strategies=None if chunks is None else {"chunks": chunks})


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


def entries_off(got, want, rtol, floor):
    """The entries of ``got`` farther from ``want`` than ``rtol`` relative to each entry, with
    ``floor`` (absolute) for entries near 0."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    bad = np.abs(got - want) > rtol * np.abs(want) + floor
    return list(zip(got[bad].tolist(), want[bad].tolist()))


@pytest.mark.parametrize("chunks", CHUNKS)
@pytest.mark.parametrize(("fn", "args", "wrt"), PARALLEL, ids=[c[0].__name__ for c in PARALLEL])
def test_parallel_gradient_against_central_differences(fn, args, wrt, chunks, threads):
    """Central differences of the function as Numba compiles it (``numba.njit``, where prange
    is range: no jitgrad in the reference). Each entry within 1e-6 relative; entries near 0
    within 1e-9 of the value's size (the differences' rounding: 1e-16 x |f| / 1e-6). The
    gradient is the same bit for bit at 1 and 2 threads, run after run, and its loops run in
    parallel: the forward loop and its adjoint, or one loop when fused."""
    par = parallel_value_and_grad(fn, wrt, chunks)
    runs = []
    for n in (1, 2, 2, 1):
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        runs.append(flat(par(*args)))
    for got in runs:
        for g, first in zip(got, runs[0]):
            assert np.array_equal(g, first)  # bit for bit, at any thread count
    value, *grads = runs[0]
    primal = numba.njit(fn)
    assert primal(*args) == pytest.approx(value, rel=1e-12)
    floor = 1e-9 * max(1.0, abs(value))
    for k, g in zip(wrt if isinstance(wrt, tuple) else (wrt,), grads):
        assert not entries_off(g, numeric_grad(primal, args, k), 1e-6, floor), k
    source = par.source()
    fused = "fused: each iteration's adjoint runs right after it" in source
    assert source.count("in _prange(") == (1 if fused else 2), source
    assert "runs serially" not in source


def _jax_gmm(alphas, means, icf, x, with_icf_sum):
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    d = x.shape[1]
    rows, cols = np.tril_indices(d, -1)  # icf[k, d:] holds L's entries row by row
    lower = jnp.zeros((len(alphas), d, d)).at[:, rows, cols].set(icf[:, d:])
    q = lower + jnp.exp(icf[:, :d])[:, :, None] * jnp.eye(d)
    xc = x[:, None, :] - means[None]  # (n, K, d)
    sq = jnp.sum(jnp.einsum("krc,nkc->nkr", q, xc) ** 2, axis=2)
    beta = alphas + (jnp.sum(icf[:, :d], axis=1) if with_icf_sum else 0.0) - 0.5 * sq
    return jnp.sum(logsumexp(beta, axis=1))


def _jax_versions():
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def pairwise(p, eps):
        r2 = jnp.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=2) + eps
        off = 1.0 - jnp.eye(p.shape[0])
        return jnp.sum(off * jnp.exp(-r2) / r2)

    def rowwise(x, w):
        return jnp.sum(logsumexp(x * w, axis=1))

    return {
        F.per_row_loss: lambda x, w, y: jnp.sum((jnp.tanh(x @ w) - y) ** 2),
        F.pairwise_energy: pairwise,
        F.rows_written_in_inner_loop: lambda x, w: jnp.sum(jnp.log1p(jnp.exp(x * w)) ** 2),
        F.rowwise_logsumexp: rowwise,
        F.gmm_data_term: lambda a, m, i, x: _jax_gmm(a, m, i, x, True),
        S.prange_sum: lambda x: jnp.sum(x * x),
        F.shared_work_array: lambda x, a: jnp.sum((x * a) ** 2),
        F.gmm_work_arrays_before_loop: lambda a, m, i, x: _jax_gmm(a, m, i, x, False),
        F.rowwise_logsumexp_range: rowwise,  # the same function: one JAX compile
    }


def test_parallel_gradients_against_jax(threads):
    """Every parallel case against JAX's gradient of the same function written with jax.numpy
    (float64, jitted: 3x faster to run here than op by op), at 2 threads, in the chunks
    `chunk_count` chooses and in five: each entry within 1e-12 relative (1e-13 of the largest
    for entries near 0)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    versions = _jax_versions()
    assert set(versions) == {fn for fn, _, _ in PARALLEL}
    for (fn, args, wrt), chunks in [(case, c) for case in PARALLEL for c in CHUNKS]:
        value, grads = parallel_value_and_grad(fn, wrt, chunks)(*args)
        ks = wrt if isinstance(wrt, tuple) else (wrt,)
        grads = grads if isinstance(wrt, tuple) else (grads,)
        want_value, want = jax.jit(jax.value_and_grad(versions[fn], argnums=ks))(*args)
        assert value == pytest.approx(float(want_value), rel=1e-12), fn.__name__
        for k, g, w in zip(ks, grads, want):
            w = np.asarray(w)
            off = entries_off(g, w, 1e-12, 1e-13 * float(np.max(np.abs(w))))
            assert not off, (fn.__name__, k, off[:3])


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
    s, p = serial.specialisations.last, par.specialisations.last
    assert s.path != p.path and p.path.split("/")[-2].endswith("-parallel")
    assert "parallel=True" in p.source and "parallel=True" not in s.source


def test_grad_takes_parallel_too():
    fn, args, _ = PARALLEL[1]
    g = jitgrad.grad(fn, wrt=0, parallel=True)(*args)
    assert rel(g, jitgrad.grad(fn, wrt=0)(*args)) <= 1e-12


def _parfor_kernels(compiled) -> dict:
    """For each kernel of a build: how many parallel loops Numba compiled into it, and how many
    ``_prange`` loops its source has."""
    module = compiled.entry.py_func.__globals__
    out = {}
    for name in (compiled.entry_name,):  # both passes are one function
        llvm = "".join(module[name].inspect_llvm().values())
        gufuncs = {re.search(r"__numba_parfor_gufunc_0x[0-9a-f]+", line).group()
                   for line in llvm.splitlines()
                   if line.startswith("define") and "__numba_parfor_gufunc" in line}
        text = compiled.source.split(f"def {name}(")[1].split("\n\n\n")[0]
        out[name] = (len(gufuncs), text.count("in _prange("))
    return out


def test_numba_runs_only_our_prange_loops_in_every_build(tmp_path, monkeypatch):
    """Numba empties the options dict it is given: every build gets its own copy, so the second
    parallel build in a process does not turn array expressions into parallel loops (which
    reduce in an order that depends on the thread count, and ran the GMM adjoint 1.1x
    slower). And each chunk function is compiled once: Numba types a prange counter ``int64``
    in the kernel and ``uint64`` in the parallel loop it lowers, and a chunk function called
    with the bare counter was compiled for both (a second full compile: 0.3-0.8 s of the
    ``prange`` cold start)."""
    monkeypatch.setenv("JITGRAD_CACHE_DIR", str(tmp_path))  # compiled here, not loaded
    before = dict(jcompile.NUMBA_OPTIONS)
    # two builds in one process: a recomputed loop (the forward pass's prange loop, then the
    # adjoint's) and a fused one (one prange loop: each iteration runs its adjoint)
    for (fn, args, wrt), loops in ((PARALLEL[0], 2), (PARALLEL[4], 1)):
        g = jitgrad.value_and_grad(fn, wrt=wrt, parallel=True)
        g(*args)
        for name, (gufuncs, pranges) in _parfor_kernels(g.specialisations.last).items():
            assert gufuncs == pranges == loops, (name, gufuncs, pranges)
        module = g.specialisations.last.entry.py_func.__globals__
        chunks = [name for name in module if re.search(r"_chunk\d+$", name)]
        assert chunks, g.source()
        for name in chunks:
            assert len(module[name].signatures) == 1, (name, module[name].signatures)
    assert jcompile.NUMBA_OPTIONS == before


def test_work_arrays_and_accumulators_are_allocated_once_per_chunk():
    """``z = np.zeros(d)`` in every iteration becomes one array per chunk, refilled per
    iteration, and so does its adjoint ``_b_z``; the private gradients and the stacks of one
    iteration's inner loops are the chunk's own arrays (the loop is fused: one chunk function
    runs each iteration and its adjoint); no stack of arrays (a list) remains."""
    fn, args, wrt = PARALLEL[3]  # rowwise_logsumexp
    g = jitgrad.value_and_grad(fn, wrt=wrt, parallel=True)
    g(*args)
    source = g.source()
    chunk = source.split("def rowwise_logsumexp_value_and_grad_chunk0(")[1].split("\ndef ")[0]
    assert "def rowwise_logsumexp_value_and_grad_chunk1(" not in source
    start, iteration = chunk.split("for i in range(_lo, _hi):")
    assert "z = _chunk_z" in iteration and "z[:] = 0.0" in iteration
    assert "_b_z = _chunk_b_z" in iteration and "_b_z[:] = 0.0" in iteration
    assert not [line for line in iteration.split("\n") if "zeros" in line.split("#")[0]
                or "_rt.empty" in line]
    assert "= []" not in source
    assert "_g_w_c = _rt.zeros(_g_w.shape)" in start and "_tape_t12 = _rt.empty(" in start


def test_chunk_bodies_are_functions_numba_compiles_serially():
    """Inside Numba's parallel loop the loop-GMM adjoint's body ran 1.3x slower than the same
    code compiled as a function: each chunk loop calls one."""
    fn, args, wrt = PARALLEL[4]  # gmm_data_term
    g = jitgrad.value_and_grad(fn, wrt=wrt, parallel=True)
    g(*args)
    source = g.source()
    loops = source.split("def gmm_data_term_value_and_grad(")[1].split("in _prange(_chunks")[1:]
    assert len(loops) == 1  # fused: each iteration's adjoint runs in the forward pass's loop
    for k, loop in enumerate(loops):
        name = f"gmm_data_term_value_and_grad_chunk{k}"
        assert f"@_jit\ndef {name}(" in source
        assert loop.split("\n")[1].strip().startswith(f"{name}(")


@pytest.mark.parametrize("chunks", CHUNKS)
def test_chunks_are_handed_out_one_by_one_and_the_callers_settings_come_back(chunks, threads):
    """Numba gives each thread one equal slice of a prange loop, fixed when the loop starts:
    a thread that wakes late or shares its core holds up the end. The chunk loop runs with
    Numba's chunk size 1 (each chunk to the next free thread), on no more threads than it has
    chunks (one chunk: on the calling thread, no thread woken), both set and restored in
    compiled code by the C functions' names (`compile.set_chunksize`, `compile.limit_threads`:
    Numba's own functions in compiled code make it uncachable). The calling thread's settings
    are what they were after the call, and the gradient is the same at 1 and 2 threads."""
    fn, args, wrt = PARALLEL[4]  # gmm_data_term
    g = parallel_value_and_grad(fn, wrt, chunks)
    g(*args)
    kernel = g.source().split("def gmm_data_term_value_and_grad(")[1]
    assert ("_chunksize = _rt.set_chunksize(1)\n    _threads = _rt.limit_threads(_chunks)\n"
            "    for _chunk in _prange(_chunks):\n") in kernel
    after = kernel.split("in _prange(_chunks):\n")[1].split("\n")
    assert [a.strip() for a in after[1:3]] == ["_rt.set_threads(_threads)",
                                               "_rt.set_chunksize(_chunksize)"], after[:4]
    before = numba.get_parallel_chunksize()
    results = []
    try:
        numba.set_parallel_chunksize(7)
        for n in (1, 2):
            numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
            results.append(flat(g(*args)))
            assert numba.get_parallel_chunksize() == 7
            assert numba.get_num_threads() == min(n, numba.config.NUMBA_NUM_THREADS)
    finally:
        numba.set_parallel_chunksize(before)
    assert all(np.array_equal(a, b) for a, b in zip(*results))


def test_independent_range_loops_run_in_parallel_and_say_so():
    fn, args, wrt = PARALLEL[-1]  # rowwise_logsumexp_range
    g = jitgrad.value_and_grad(fn, wrt=wrt, parallel=True)
    g(*args)
    assert g.source().count(parallel.INFERRED + parallel.FUSED) == 1  # one loop: fused
    serial = jitgrad.value_and_grad(F.carried_state_range, parallel=True)
    x = rng.normal(size=50)
    got, want = flat(serial(x, 0.3)), flat(jitgrad.value_and_grad(F.carried_state_range)(x, 0.3))
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    assert "_prange(" not in serial.source().split("import", 3)[-1]
    assert "runs serially" not in serial.source()  # range loops stay serial without a word


def test_a_recomputed_loop_turned_down_by_the_parallel_rewrite_keeps_its_gradient():
    """A prange loop that recompute.py replays in reverse, which the parallel rewrite then
    leaves serial (every iteration writes the scratch array ``tmp``): the replay's pushes and
    pops must still pair up (a session saw them disagree on another path). Checked against
    central differences (the tape cannot run it: a tensor written into ``np.zeros(d)``)."""
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(37, 5)), rng.normal(size=5)
    g = jitgrad.grad(F.shared_scratch, wrt=(0, 1), parallel=True)
    gx, gw = g(x, w)
    notes = g.source()
    assert "recomputed in reverse" in notes and "runs serially under parallel=True" in notes
    for k, got in enumerate((gx, gw)):
        np.testing.assert_allclose(got, numeric_grad(F.shared_scratch, (x, w), k),
                                   rtol=1e-6, atol=1e-8)


def test_a_loop_gets_as_many_chunks_as_pay_for_themselves():
    """`runtime.chunk_count` (`core.chunking`'s, compiled): one chunk (on the calling thread)
    for a loop too short to pay for waking a thread, more as the loop's work grows against what
    each chunk accumulates, a multiple of 8 (or 1, 2, 4), at most 64 and one per iteration; the
    same for the same arguments, whatever the thread count (it is given none)."""
    small = rt.chunk_count(100, 50, 10)
    assert small == 1
    counts = [rt.chunk_count(trips, 45_000, 1926) for trips in (300, 500, 1000, 4000, 40_000)]
    assert counts == sorted(counts) and counts[0] == 1 and counts[-1] == chunking.MOST_CHUNKS
    assert all(c in (1, 2, 4) or c % 8 == 0 for c in counts), counts
    assert 1 < counts[1] < chunking.MOST_CHUNKS, counts  # the bench GMM at n = 500: a few chunks
    # a larger partial gradient: fewer chunks for the same loop; a scatter into 10^6 entries
    # from 10^4 cheap iterations (`s += w[idx[i]] ** 2`), one (64 copies of it took 716 MB)
    assert rt.chunk_count(4000, 45_000, 100_000) < rt.chunk_count(4000, 45_000, 1926)
    assert rt.chunk_count(10**4, 11, 10**6 + 1) == 1
    assert rt.chunk_count(3, 10**9, 1) == 2  # never more chunks than iterations (3 -> 2)
    assert rt.chunk_count(0, 10**9, 1) == 1 and rt.chunk_count(10**6, 0, 1) == 1


def test_a_large_input_runs_in_several_chunks_and_matches_finite_differences(threads):
    """The GMM data term on 8000 points: `chunk_count` gives it several chunks (its sums are
    associated differently from one chunk's: not the same bits), and the gradient, at 2
    threads, matches 5-point differences of the function as Numba compiles it (each entry
    within 1e-6 relative, or 1e-9 of the value near 0: their rounding, 1e-16 x |f| / 1e-3)
    and the serial build (1e-12)."""
    fn, args, wrt = PARALLEL[4]  # gmm_data_term
    x = np.random.default_rng(5).normal(size=(8000, args[3].shape[1]))
    args = args[:3] + (x,)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    got = flat(parallel_value_and_grad(fn, wrt)(*args))
    one_chunk = flat(parallel_value_and_grad(fn, wrt, chunks=1)(*args))
    assert not all(np.array_equal(a, b) for a, b in zip(got, one_chunk))
    for g, w in zip(got, flat(jitgrad.value_and_grad(fn, wrt=wrt)(*args))):
        assert rel(g, w) <= 1e-12
    primal = numba.njit(fn)
    floor = 1e-9 * max(1.0, abs(got[0]))
    for k, g in zip(wrt, got[1:]):
        assert not entries_off(g, numeric_grad5(primal, args, k), 1e-6, floor), k
