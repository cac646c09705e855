"""Timing and memory measurement helpers for the benchmarks.

Takes zero-argument callables ("tools"); bind the data with ``functools.partial`` or a
``lambda`` at the call site. Guarantees:

* ``time_first_call(fn)`` -- wall time of exactly one call of ``fn``. Call it on a freshly
  created Numba dispatcher (ideally in a fresh process) to measure compile + first run.
* ``measure(tools, rounds, inner)`` -- warms every tool up, then runs ``rounds`` rounds;
  in each round every tool runs ``inner`` back-to-back calls, timed as one block. The
  order of tools is rotated every round, so slow drifts and bursts of load on a shared
  machine hit all tools alike instead of whichever one happened to run during them.
  Returns a ``Timing`` per tool: median and quartiles of the per-call time across
  rounds, plus the time of the warm-up (first) call. Garbage collection is disabled
  inside timed blocks (as ``timeit`` does) and run between rounds; ``settle`` untimed
  calls before each block restore a steady state after that collection.
* ``peak_memory(fn)`` -- peak extra bytes allocated during one (warmed-up) call, as seen
  by ``tracemalloc``, plus Numba NRT allocation counts. See its docstring for exactly
  what is and is not counted.

All times are ``time.perf_counter`` wall-clock seconds. Thread pools are not managed
here: with NumPy and Numba both calling (separate) multi-threaded OpenBLAS libraries on a
small machine, set ``OPENBLAS_NUM_THREADS=1`` before NumPy is imported, or the spread
explodes (see ``run_baselines``).
"""

import gc
import math
import statistics
import time
import tracemalloc
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Per-call wall time statistics of one tool, in seconds."""

    median: float
    q1: float
    q3: float
    first_call: float  # the warm-up call: includes JIT compilation if not compiled yet
    rounds: int
    inner: int

    @property
    def iqr(self):
        return self.q3 - self.q1

    @property
    def rel_spread(self):
        """Inter-quartile range as a fraction of the median."""
        return self.iqr / self.median if self.median > 0 else math.nan


def time_first_call(fn):
    """Wall time in seconds of one call ``fn()`` (its result is discarded)."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _time_block(fn, inner):
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        return (time.perf_counter() - t0) / inner
    finally:
        if gc_was_enabled:
            gc.enable()


def measure(tools, rounds=15, inner=None, warmup=2, target_block=0.02, settle=0):
    """Interleaved timing of several zero-argument callables.

    ``tools``: ``{name: fn}``. Each tool is called ``warmup`` times first (at least once;
    the first call is reported as ``first_call``). ``inner`` is the number of calls per
    timed block; if ``None`` it is chosen per tool so one block lasts about
    ``target_block`` seconds (from the last warm-up call; at least 1). ``settle`` untimed
    calls precede every timed block: they undo what the collection between rounds and the
    other tools' blocks disturbed (JAX, for one, frees XLA buffers in a ``gc`` callback,
    and its first call after a full collection costs 0.3-7 ms instead of 40 us). Returns
    ``{name: Timing}`` in the order of ``tools``.
    """
    names = list(tools)
    first = {}
    inners = {}
    for name in names:
        fn = tools[name]
        first[name] = time_first_call(fn)
        last = first[name]
        for _ in range(warmup - 1):
            last = time_first_call(fn)
        if inner is None:
            inners[name] = max(1, math.ceil(target_block / max(last, 1e-9)))
        else:
            inners[name] = inner

    samples = {name: [] for name in names}
    for r in range(rounds):
        gc.collect()
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            for _ in range(settle):
                tools[name]()
            samples[name].append(_time_block(tools[name], inners[name]))

    result = {}
    for name in names:
        s = samples[name]
        if len(s) >= 2:
            q1, med, q3 = statistics.quantiles(s, n=4, method="inclusive")
        else:
            q1 = med = q3 = s[0]
        result[name] = Timing(med, q1, q3, first[name], rounds, inners[name])
    return result


@dataclass(frozen=True)
class MemoryUsage:
    """Result of ``peak_memory``; see its docstring."""

    peak_bytes: int  # peak traced bytes above the level at the start of the call
    retained_bytes: int  # traced bytes still held right after the call (incl. the result)
    nrt_allocs: int | None  # NRT allocations during the call; None if Numba is not loaded
    nrt_traced: bool | None  # whether tracemalloc sees NRT allocations (checked live)


def nrt_visible_to_tracemalloc():
    """Does ``tracemalloc`` see Numba NRT allocations in this process?

    Allocates 1 MiB through the NRT's Python-facing API and checks that tracemalloc
    counted it. Returns ``None`` if Numba is not imported or the NRT is not initialised
    yet (it is after the first njit compilation).
    """
    import sys

    if "numba" not in sys.modules:
        return None
    from numba.core.runtime import rtsys

    size = 1 << 20
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        try:
            mi = rtsys.meminfo_alloc(size)
        except RuntimeError:  # "Runtime must be initialized before use."
            return None
        after = tracemalloc.get_traced_memory()[0]
        del mi
        return after - before >= size
    finally:
        if not was_tracing:
            tracemalloc.stop()


def _nrt_alloc_counter():
    """Return a function reading Numba's NRT allocation count (None without Numba)."""
    import sys

    if "numba" not in sys.modules:
        return lambda: None
    from numba.core.runtime import _nrt_python, rtsys

    if not _nrt_python.memsys_stats_enabled():
        _nrt_python.memsys_enable_stats()
    return lambda: rtsys.get_allocation_stats().alloc


def peak_memory(fn, warmup=True):
    """Memory used by one call ``fn()``; returns a ``MemoryUsage``.

    What is counted (``peak_bytes``, ``retained_bytes``): everything that goes through
    Python's allocator domains and is therefore traced by ``tracemalloc`` --

    * Python objects, and NumPy array buffers (NumPy reports its data allocations to
      tracemalloc);
    * Numba NRT allocations (arrays created inside njit code): Numba 0.68 routes the NRT
      through ``PyMem_RawMalloc`` (``_nrt_python.memsys_use_cpython_allocator``), which
      tracemalloc traces. This is checked at run time, reported as ``nrt_traced``; if it
      is ``False`` the peak misses Numba's arrays.

    Not counted: memory obtained with plain ``malloc``/``mmap`` by native libraries
    (BLAS workspaces, LLVM while compiling, PyTorch's and JAX/XLA's own allocators), and
    stack memory. Resident-set size is not used: it is page-granular and the C allocator
    keeps freed memory, so it mostly measures history.

    ``nrt_allocs``: number of NRT allocations made during the call, from Numba's NRT
    statistics (``rtsys.get_allocation_stats()``; counts only, no bytes). Stats are off by
    default (``NUMBA_NRT_STATS=1`` turns them on); if off, they are switched on here and
    left on, so the counters stay consistent for later readers (cost: one atomic increment
    per allocation). ``None`` if Numba is not imported.

    With ``warmup=True`` ``fn`` is called once before measuring, so JIT compilation is
    not counted. The result of the measured call is held until the end, so it is part of
    both numbers.
    """
    if warmup:
        fn()
    gc.collect()
    nrt_traced = nrt_visible_to_tracemalloc()
    nrt_allocs = _nrt_alloc_counter()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        nrt0 = nrt_allocs()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fn()
        current, peak = tracemalloc.get_traced_memory()
        nrt1 = nrt_allocs()
        del result
    finally:
        if not was_tracing:
            tracemalloc.stop()
    nrt_allocs = None if nrt0 is None else nrt1 - nrt0
    return MemoryUsage(peak - base, current - base, nrt_allocs, nrt_traced)
