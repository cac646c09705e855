"""Measuring one case: verify every tool, then time, memory and first-call (compile) cost.

``run_case(case, tools, opts)`` takes a ``suites.Case``, its ``suites.Tool`` list and an
``Options``, and returns a ``CaseResult`` (plain data, JSON-ready with ``asdict``). In order:

1. Probe: a tool that is not ``cheap`` (interpreted Python loops: jitgrad.tape, autograd,
   torch eager, plain Python) is first run on scaled-down data, growing 4x at a time until
   one call takes 0.1 s; the time per call at full size is extrapolated with the growth
   exponent seen between the last two sizes (clamped to [1, 2]: quadratic behaviour such as
   autograd's per-element ``x[t]`` is caught). A tool whose estimated calls (verification,
   warm-up, 3 rounds, memory) exceed ``opts.budget`` seconds is skipped, with a note.
   Estimates can be off (a 2-point fit on a loaded machine), so interpreted tools also run
   under a ``deadline``: the probe gets ``budget`` seconds and the verification call half
   of it, after which ``OverBudget`` interrupts them (skipped); a tool whose verification
   call shows it cannot fit its remaining calls in the budget is verified but not timed.
2. Verify: one call of every tool at full size (timed: the "in-process first call"). The
   reference is jitgrad's gradient, once it passes `bench.oracle.check` (central differences
   of the Numba primal on sampled entries; for the ADBench GMM also its vectorised JAX and
   autograd versions): a jitgrad gradient that is wrong there is marked ``mismatch``, said
   loudly, and the hand-written gradient (checked the same way) becomes the reference, as it
   does when jitgrad failed.
   A gradient is compared per differentiable argument as max |a - ref| / max |ref|; a
   primal value against the Numba primal's as |a - ref| / |ref|. Above ``opts.tol``
   (1e-8) the tool is marked ``mismatch``, reported on stderr and not timed. A tool that
   raises is marked ``failed`` with its error.
3. Time: with ``timing.measure`` (warm-up, ``opts.rounds`` interleaved rounds, one
   untimed settling call before each block), except that each interpreted tool whose
   verification call took >= 0.1 s is timed alone with ``inner=1`` and as many rounds (3
   to ``min(opts.rounds, 9)``) as its remaining budget allows. Ratios are medians divided by the
   reference tool's median from this run.
4. Memory: ``timing.peak_memory`` of one warm call, for tools whose allocations
   tracemalloc sees (not torch or JAX, whose allocators it cannot see).
5. First call in a fresh process (unless ``opts.fresh_process`` is false): for jitgrad with
   an empty ``JITGRAD_CACHE_DIR`` and then again with the cache it left ("warm-cache first
   call"), and for the hand-written gradient and the Numba primal. The child is
   ``python -m bench --first-call-child SPEC``: it imports NumPy, Numba, jitgrad and makes
   the data before starting the clock, then times ``jitgrad.grad(...)`` construction + the
   first call (or the first call of the Numba dispatcher). It also reports whether
   jitgrad's runtime helpers had to be compiled (their Numba cache lives in the installed
   package's ``__pycache__``, not in ``JITGRAD_CACHE_DIR``).
"""

import contextlib
import dataclasses
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

from bench import oracle, suites
from bench.timing import measure, peak_memory, time_first_call

SLOW_CALL = 0.1  # seconds per call from which a tool is timed alone, with inner=1
SLOW_MAX_ROUNDS = 9  # rounds for such a tool: at most this many (and within the budget)
PROBE_TARGET = 0.1  # grow the probe until one call takes this long
PROBE_MIN_FIT = 0.005  # fit the growth exponent only from calls at least this long


@dataclasses.dataclass
class Options:
    rounds: int = 31
    target_block: float = 0.02
    budget: float = 60.0  # seconds per slow tool per case
    tol: float = 1e-8
    fresh_process: bool = True
    compile_reps: int = 1


@dataclasses.dataclass
class ToolResult:
    tool: str
    kind: str
    style: str = ""
    threads: str = "1"  # what it may use (`suites.Threads.column`)
    status: str = "ok"  # ok | skipped | failed | mismatch
    note: str = ""
    error: str = ""
    rel_err: float | None = None
    first_call_inproc: float | None = None
    probe_estimate: float | None = None
    probe_exponent: float | None = None
    median: float | None = None
    q1: float | None = None
    q3: float | None = None
    rounds: int | None = None
    inner: int | None = None
    ratio: float | None = None
    interleaved: bool | None = None
    peak_bytes: int | None = None
    retained_bytes: int | None = None
    nrt_allocs: int | None = None
    mem_ratio: float | None = None
    first_call_fresh: float | None = None
    first_call_warm_cache: float | None = None
    fresh_runs: dict | None = None


@dataclasses.dataclass
class CaseResult:
    case: str
    suite: str
    size: str
    sizes: tuple
    wrt: list
    input_bytes: int
    reference: str | None
    tools: list
    notes: list
    # tool -> its gradient's checks against references that are not jitgrad (`bench.oracle`)
    independent: dict = dataclasses.field(default_factory=dict)


_START = time.perf_counter()


def _say(msg):
    print(f"[{time.perf_counter() - _START:6.1f} s] {msg}", file=sys.stderr, flush=True)


def _loud(msg):
    bar = "!" * 78
    _say(f"{bar}\n!!! {msg}\n{bar}")


def _error_text(e):
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:300]


def _nbytes(data):
    return int(sum(a.nbytes if isinstance(a, np.ndarray) else 8 for a in data))


def rel_error(got, ref):
    """max over arguments of max|got - ref| / max|ref| (absolute difference if ref is 0)."""
    if not isinstance(ref, tuple):
        got, ref = (got,), (ref,)
    if len(got) != len(ref):
        return math.inf
    worst = 0.0
    for a, b in zip(got, ref):
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        if a.shape != b.shape or not np.all(np.isfinite(a)):
            return math.inf
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst


class OverBudget(Exception):
    """Raised (by a timer signal) inside a tool call that outlived its deadline."""


@contextlib.contextmanager
def deadline(seconds):
    """Interrupt the Python code in the block with ``OverBudget`` after ``seconds``.

    Uses ``SIGALRM``, so it works on the main thread on POSIX, and only between Python
    bytecodes: it stops interpreted loops (the tools it is used for) but lets a long
    native call finish first. Without ``SIGALRM``, or with ``seconds=math.inf``, the block
    runs unbounded.
    """
    if not hasattr(signal, "setitimer") or not math.isfinite(seconds):
        yield
        return

    def expire(signum, frame):
        raise OverBudget(f"stopped after {seconds:.3g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _extrapolate(points):
    """Full-size seconds per call and growth exponent from ``[(work fraction, seconds)]``."""
    frac2, t2 = points[-1]
    exponent = 1.0
    if len(points) >= 2 and points[-2][1] >= PROBE_MIN_FIT:
        frac1, t1 = points[-2]
        exponent = min(2.0, max(1.0, math.log(t2 / t1) / math.log(frac2 / frac1)))
    return t2 * (1.0 / frac2) ** exponent, exponent


def probe(case, tool, budget):
    """``(estimated seconds per call at full size, growth exponent)``, or None if the case
    does not scale. See the module doc. Stops early once the estimate is far over
    ``budget``; the whole probe runs under a ``deadline`` of ``budget``."""
    points = []
    last_sizes = None
    with deadline(budget):
        for divisor in (4096, 1024, 256, 64, 16, 4):
            sizes, frac = case.scaled_sizes(divisor) or (None, 1.0)
            if sizes is None or frac >= 1.0:
                break
            if sizes == last_sizes:
                continue
            last_sizes = sizes
            call, _ = tool.build(case.data(sizes))
            if not points:
                call()  # first use: imports, caches
            points.append((frac, time_first_call(call)))
            if points[-1][1] >= PROBE_TARGET or _extrapolate(points)[0] > 10 * budget:
                break
    return _extrapolate(points) if points else None


def _calls_after_verification(tool):
    """Calls a timed tool still needs: warm-up, 3 rounds, memory (~2 under tracemalloc)."""
    return 4 + (2 if tool.memory_traced else 0)


def run_case(case, tools, opts):
    """Verify, probe, time and measure every tool of ``case``; see the module doc."""
    data = case.data()
    result = CaseResult(case.name, case.suite.name, case.size, tuple(case.sizes),
                        list(case.suite.wrt), _nbytes(data), None, [], [])
    results = []
    outputs = {}
    calls = {}
    for tool in tools:
        r = ToolResult(tool.name, tool.kind, tool.style, tool.threads)
        results.append(r)
        _say(f"  {tool.name}: building / first call ...")
        n_after = _calls_after_verification(tool)
        try:
            if not tool.cheap:
                est = probe(case, tool, opts.budget)
                if est is not None:
                    r.probe_estimate, r.probe_exponent = est
                    if est[0] * (1 + n_after) > opts.budget:
                        r.status = "skipped"
                        r.note = (f"over budget: ~{_fmt_s(est[0])} per call estimated (probe, "
                                  f"growth exponent {est[1]:.2f}), budget {opts.budget:g} s")
                        _say(f"    skipped ({r.note})")
                        continue
            call, to_numpy = tool.build(case.data())
            with deadline(math.inf if tool.cheap else opts.budget / 2):
                t0 = time.perf_counter()
                out = call()
                r.first_call_inproc = time.perf_counter() - t0
            outputs[tool.name] = to_numpy(out)
            calls[tool.name] = call
            if getattr(call, "parallel_loops", None) is not None:  # jitgrad, parallel=True
                r.threads = tool.threads.replace("(parallel)", "(parallel loops)"
                                                 if call.parallel_loops() else "(none parallel)")
            if not tool.cheap and r.first_call_inproc * (1 + n_after) > opts.budget:
                r.status = "skipped"
                r.note = (f"verified, not timed: one call took {_fmt_s(r.first_call_inproc)}"
                          f" (probe estimate {_fmt_s(r.probe_estimate or 0.0)}), over the "
                          f"budget of {opts.budget:g} s")
                _say(f"    {r.note}")
        except OverBudget as e:
            r.status = "skipped"
            r.note = f"over budget: {e} (budget {opts.budget:g} s; probe estimate " + (
                f"{_fmt_s(r.probe_estimate)})" if r.probe_estimate else "none)")
            _say(f"    skipped ({r.note})")
        except Exception as e:  # noqa: BLE001 -- any failure of a tool is reported, not fatal
            r.status = "failed"
            r.error = _error_text(e)
            _loud(f"{tool.name} FAILED on {case.name}: {r.error}")
            _say(traceback.format_exc(limit=-3))

    _verify(case, results, outputs, result, opts.tol)
    _time(results, calls, opts, interpreted={t.name for t in tools if not t.cheap})
    _memory(tools, results, calls)
    ref = next((r for r in results if r.tool == result.reference), None)
    primal = next((r for r in results if r.tool == "Numba primal"), None)
    for r in results:
        if ref is not None and ref.median and r.median:
            r.ratio = r.median / ref.median
        primal_peak = primal.peak_bytes if primal is not None else None
        if primal_peak and primal_peak >= 4096 and r.peak_bytes is not None:
            r.mem_ratio = r.peak_bytes / primal_peak
    if opts.fresh_process:
        _fresh_process_first_calls(case, tools, results, opts)
    result.tools = [dataclasses.asdict(r) for r in results]
    return result


def _verify(case, results, outputs, result, tol):
    by_name = {r.tool: r for r in results}
    ref_name = None
    for name in ("jitgrad", "hand-written Numba"):
        if name not in outputs:
            continue
        checks = oracle.check(case, outputs[name], tol)
        result.independent[name] = [dataclasses.asdict(c) for c in checks]
        line = oracle.summary(checks)
        _say(f"  {name} against independent references: {line}")
        wrong = [c for c in checks if c.status == "wrong"]
        if wrong:
            r = by_name[name]
            r.status = "mismatch"
            r.note = _join(r.note, f"wrong against {wrong[0].against}: {wrong[0].detail}; "
                                   "not timed")
            _loud(f"MISMATCH on {case.name}: {name} is wrong against {wrong[0].against}: "
                  f"{wrong[0].detail}")
            result.notes.append(f"MISMATCH: {name} is wrong against {wrong[0].against}: "
                                f"{wrong[0].detail[:300]}")
            continue
        unsure = [c for c in checks if c.status == "unsettled"]
        if unsure:
            _loud(f"{case.name}: {name} could not be checked on every sampled entry: "
                  f"{unsure[0].detail}")
            result.notes.append(f"{name}: {unsure[0].detail}")
        ref_name = name
        break
    result.reference = ref_name
    if ref_name is None:
        _loud(f"{case.name}: no gradient passed the independent checks; nothing verified")
        result.notes.append("no reference gradient (none ran, or none passed the independent "
                            "checks): nothing verified, no ratios")
    elif ref_name != "jitgrad":
        msg = (f"jitgrad failed or was wrong, so gradients are verified against and ratios "
               f"are relative to the {ref_name} gradient")
        _loud(f"{case.name}: {msg}")
        result.notes.append(msg)
    primal_ref = outputs.get("Numba primal")
    for name, out in outputs.items():
        r = by_name[name]
        if r.kind == "grad":
            if ref_name is None or r.status == "mismatch":
                continue
            r.rel_err = rel_error(out, outputs[ref_name])
            against = ref_name
        else:
            if primal_ref is None:
                continue
            r.rel_err = rel_error(out, primal_ref)
            against = "Numba primal"
        if not r.rel_err <= tol:
            r.status = "mismatch"
            r.note = f"differs from {against} by {r.rel_err:.2e} (> {tol:g}); not timed"
            _loud(f"MISMATCH on {case.name}: {name} {r.note}")
            result.notes.append(f"MISMATCH: {name} {r.note}")


def _time(results, calls, opts, interpreted):
    ok = [r for r in results if r.status == "ok"]
    # interpreted tools compile nothing, so their first call is a fair per-call estimate
    slow = [r for r in ok if r.tool in interpreted and r.first_call_inproc >= SLOW_CALL]
    fast = [r for r in ok if r not in slow]
    if fast:
        _say(f"  timing {len(fast)} tools interleaved, {opts.rounds} rounds ...")
        timings = measure({r.tool: calls[r.tool] for r in fast}, rounds=opts.rounds,
                          target_block=opts.target_block, settle=1)
        for r in fast:
            _store_timing(r, timings[r.tool], interleaved=True)
    for r in slow:
        per_call = r.first_call_inproc
        spent = per_call * 4  # verification, warm-up, memory (slower under tracemalloc)
        rounds = int(min(opts.rounds, SLOW_MAX_ROUNDS,
                         max(3, (opts.budget - spent) // per_call)))
        _say(f"  timing {r.tool} alone, {rounds} rounds of one call (~{_fmt_s(per_call)}) ...")
        t = measure({r.tool: calls[r.tool]}, rounds=rounds, inner=1, warmup=1)[r.tool]
        _store_timing(r, t, interleaved=False)


def _store_timing(r, t, interleaved):
    r.median, r.q1, r.q3 = t.median, t.q1, t.q3
    r.rounds, r.inner, r.interleaved = t.rounds, t.inner, interleaved


def _memory(tools, results, calls):
    traced = {t.name for t in tools if t.memory_traced}
    for r in results:
        if r.status != "ok":
            continue
        if r.tool not in traced:
            continue  # its allocator is invisible to tracemalloc: reported as "n/t"
        mem = peak_memory(calls[r.tool], warmup=False)
        r.peak_bytes, r.retained_bytes, r.nrt_allocs = (mem.peak_bytes, mem.retained_bytes,
                                                        mem.nrt_allocs)


def _join(a, b):
    return f"{a}; {b}" if a else b


# --------------------------------------------------------------------------------------
# first call in a fresh process
# --------------------------------------------------------------------------------------


def _child(spec, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    proc = subprocess.run(
        # thread settings: inherited with the environment the parent already set
        [sys.executable, "-m", "bench", "--threads", "env", "--first-call-child",
         json.dumps(spec)],
        capture_output=True, text=True, env=env, check=False,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"exit {proc.returncode}: {tail}"[:300]}
    return json.loads(lines[-1])


def _median_runs(runs):
    times = [r["first_call"] for r in runs if "first_call" in r]
    return statistics.median(times) if times else None


def _fresh_process_first_calls(case, tools, results, opts):
    by_name = {r.tool: r for r in results}
    spec = {"suite": case.suite.name, "size": case.size}
    for tool in tools:
        r = by_name[tool.name]
        if tool.fresh_process is None or r.status == "failed":
            continue
        _say(f"  {tool.name}: first call in a fresh process x{opts.compile_reps} ...")
        runs = {"cold": [], "warm_cache": []}
        for _ in range(opts.compile_reps):
            if tool.fresh_process == "jitgrad":
                with tempfile.TemporaryDirectory(prefix="jitgrad-bench-cache-") as cache:
                    env = {"JITGRAD_CACHE_DIR": cache}
                    runs["cold"].append(_child({**spec, "kind": "jitgrad"}, env))
                    runs["warm_cache"].append(_child({**spec, "kind": "jitgrad"}, env))
            else:
                runs["cold"].append(_child({**spec, "kind": tool.fresh_process}))
        errors = [x["error"] for v in runs.values() for x in v if "error" in x]
        if errors:
            r.note = _join(r.note, f"fresh-process run failed: {errors[0]}")
            _loud(f"{case.name}: {tool.name} fresh-process first call failed: {errors[0]}")
        r.first_call_fresh = _median_runs(runs["cold"])
        r.first_call_warm_cache = _median_runs(runs["warm_cache"])
        r.fresh_runs = {k: v for k, v in runs.items() if v}


def numba_init_time(reps=1):
    """Median first-call time of a trivial njit function in a fresh process."""
    return _median_runs([_child({"kind": "numba_init"}) for _ in range(reps)])


def helper_cache_files():
    """``{file name: mtime_ns}`` of the Numba cache of jitgrad's runtime helpers (index
    ``.nbi`` and data ``.nbc`` files in the installed package's ``__pycache__``)."""
    import jitgrad.backend.numba.runtime

    folder = os.path.join(os.path.dirname(jitgrad.backend.numba.runtime.__file__), "__pycache__")
    try:
        names = [f for f in os.listdir(folder)
                 if f.startswith("runtime.") and f.endswith((".nbi", ".nbc"))]
    except FileNotFoundError:
        return {}
    return {f: os.stat(os.path.join(folder, f)).st_mtime_ns for f in names}


def first_call_child(spec):
    """Body of ``python -m bench --first-call-child SPEC``: print one JSON line."""
    import numba

    import jitgrad

    if spec["kind"] == "numba_init":
        trivial = numba.njit(lambda v: v + 1.0)
        print(json.dumps({"first_call": time_first_call(lambda: trivial(1.0))}))
        return
    case = suites.Case(suites.SUITE_DEFS[spec["suite"]], spec["size"])
    data = case.data()
    s = case.suite
    before = helper_cache_files()
    if spec["kind"] == "jitgrad":
        def call():
            parallel = suites.Threads(None).parallel  # the parent's NUMBA_NUM_THREADS
            return jitgrad.grad(s.problem, wrt=s.wrt, parallel=parallel)(*data)
    elif spec["kind"] == "handwritten":
        def call():
            return s.grad(*data)
    else:
        def call():
            return s.primal(*data)
    t = time_first_call(call)
    after = helper_cache_files()
    written = sorted(f for f, mtime in after.items() if before.get(f) != mtime)
    print(json.dumps({"first_call": t,
                      "helper_index_files_before": sum(f.endswith(".nbi") for f in before),
                      "helper_cache_files_written": len(written),
                      "helpers_compiled": bool(written)}))


def _fmt_s(seconds):
    if seconds >= 100:
        return f"{seconds:.0f} s"
    return f"{seconds:.2g} s" if seconds >= 1 else f"{seconds * 1e3:.3g} ms"
