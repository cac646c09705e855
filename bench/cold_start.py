"""``python -m bench.cold_start``: how long jitgrad takes to compile, from a cold start (issue #24).

Usage (from the repository root)::

    python -m bench.cold_start                                  # every program, one process each
    python -m bench.cold_start --programs gp,eos --timeout 120 --reps 3

For each program of `bench.cold_programs` (a name, a plain function, its data and the
positions of its differentiable arguments), every measurement is made in a fresh process
(``python -m bench.cold_start --child SPEC``) that imports NumPy, Numba, jitgrad and the
program, and makes the data, before its clock starts:

1. **jitgrad cold**: the wall time of ``jitgrad.grad(f, wrt, parallel)(*args)`` (building
   the gradient and its first call), with an empty temporary ``JITGRAD_CACHE_DIR``. Its
   ``NUMBA_CACHE_DIR`` holds only jitgrad's runtime, made ready once per run by ``python -m
   jitgrad warm`` in a process of its own (as on a machine where jitgrad was installed and
   its demo or ``warm`` run; its time is in the header), copied into each cold process's
   empty folder. With ``--runtime cold`` the folder is empty too: the first gradient ever
   made on a machine, which compiles the runtime helpers it calls as well.
2. **Numba cold**: the first call of ``numba.njit(f)(*args)`` (``parallel=True`` for the
   ``prange`` program), in another fresh process. A function Numba does not compile gets
   "—" and its error in the notes. **ratio** = jitgrad cold / Numba cold; the median and
   the worst ratio over the programs are given under the table.
3. **Warm cache**: a second fresh process on the caches the cold one filled; the time from
   just before the parent starts it to its first gradient, less the time it spent making
   the data (so: interpreter start, imports, loading the cached code, the call), and the
   ``jitgrad.grad(f, ...)(*args)`` call alone ("the call": loading the cached code). Two more
   fresh processes on the same caches time only ``import numba`` and only ``import
   jitgrad`` the same way (interpreter start included), and **beyond import numba** is the
   warm time less the ``import numba`` one. **Numba warm** is Numba's own warm start: a fresh
   process's first call of ``numba.njit(cache=True)(f)`` on a cache a build of it filled
   (after the Numba cold call, off the clock), timed like jitgrad's warm process; **beyond
   Numba warm** = jitgrad's warm time less Numba's: what a user waits for on top of a Numba
   program that loads its cached code (both pay Numba's registries and SciPy's import on
   that first call).
4. **Peak RSS** of the cold processes: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` just
   after the timed call, in MB, with the value before the clock (after the imports and the
   data) in parentheses.

The cold jitgrad process then checks its gradient (first repetition only) against central
differences of the plain Python function (`bench.oracle.central_differences`: 5-point
stencil on 6 sampled entries per argument, the largest |gradient| among them, within 1e-6
relative plus the quotient's rounding error), so the time is that of a right gradient; a
wrong one is said loudly on stderr and in the table.

Every child runs under ``--timeout`` seconds (default 300; "timeout" in the table). With
``--reps N`` each measurement is the median over N sets of fresh processes; the sets are
interleaved (every repetition runs every program, the order rotated), so a burst of load hits
all programs alike. Children get ``OPENBLAS_NUM_THREADS=1`` and Numba's ``workqueue``
threading layer unless the environment sets them (see ``bench/README.md``).

The report is markdown on stdout (progress on stderr), also written to
``bench/results/cold_start-<timestamp>.md`` unless ``--no-save``. The machine is shared:
compare programs within one run.
"""

import argparse
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD_DEFAULTS = {"OPENBLAS_NUM_THREADS": "1", "NUMBA_THREADING_LAYER": "workqueue"}


# --------------------------------------------------------------------------------------
# child processes
# --------------------------------------------------------------------------------------


def _rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB


def _jitgrad_child(program, check):
    import jitgrad
    from bench import oracle

    t0 = time.perf_counter()
    args = program.make()
    data_s = time.perf_counter() - t0
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    grads = jitgrad.grad(program.fn, wrt=program.wrt, parallel=program.parallel)(*args)
    first_call = time.perf_counter() - t0
    out = {"done_at": time.time(), "data_s": data_s, "first_call": first_call,
           "rss_before_mb": rss_before, "peak_rss_mb": _rss_mb()}
    if check:
        c = oracle.central_differences(program.fn, args, program.wrt, grads)
        out["check"] = {"status": c.status, "detail": c.detail}
    return out


def _numba_child(program):
    """Numba's cold compile of the plain function (not cached, as a first ``njit`` call
    compiles), then, off the clock, a ``cache=True`` build that fills Numba's cache for
    `_numba_warm_child`."""
    import numba

    args = program.make()
    rss_before = _rss_mb()
    fn = numba.njit(parallel=program.parallel)(program.fn)
    t0 = time.perf_counter()
    try:
        fn(*args)
    except numba.core.errors.NumbaError as e:
        return {"unsupported": _refusal(e)}
    out = {"first_call": time.perf_counter() - t0, "rss_before_mb": rss_before,
           "peak_rss_mb": _rss_mb()}
    numba.njit(cache=True, parallel=program.parallel)(program.fn)(*args)
    return out


def _numba_warm_child(program):
    """Numba's own warm start: the first call of ``numba.njit(cache=True)(f)`` in a fresh
    process whose cache `_numba_child` filled (Numba's registries load on this call)."""
    import numba

    t0 = time.perf_counter()
    args = program.make()
    data_s = time.perf_counter() - t0
    fn = numba.njit(cache=True, parallel=program.parallel)(program.fn)
    t0 = time.perf_counter()
    fn(*args)
    if not fn.stats.cache_hits:
        return {"status": "error", "error": "Numba compiled instead of loading its cache"}
    return {"done_at": time.time(), "data_s": data_s, "first_call": time.perf_counter() - t0}


def _refusal(e):
    """Numba's compile error in one line: the signature it has no implementation for (or its
    first message after "Failed in ... pipeline") and the source line's file."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    signature = next((line[3:].strip() for line in lines if line.startswith(">>>")), None)
    what = (f"no implementation of {signature}" if signature else
            next((line for line in lines if not line.startswith("Failed in")), lines[0]))
    where = next((line for line in lines if line.startswith("File ")), None)
    return f"{type(e).__name__}: {what}" + (f" ({where})" if where else "")


def child(spec):
    """Body of ``--child SPEC``: one measurement, printed as one JSON line."""
    if spec["kind"] == "import":
        __import__(spec["module"])
        out = {"done_at": time.time()}
    else:
        import numba  # noqa: F401 -- imported before the clock, as jitgrad imports it
        import numpy  # noqa: F401

        from bench.cold_programs import PROGRAMS

        program = PROGRAMS[spec["program"]]
        if spec["kind"] == "jitgrad":
            import jitgrad  # noqa: F401

            out = _jitgrad_child(program, spec.get("check", False))
        elif spec["kind"] == "numba_warm":
            out = _numba_warm_child(program)
        else:
            out = _numba_child(program)
    print(json.dumps(out))


def _child_env(tmp, runtime_cache=None):
    """The environment of a child whose caches live in ``tmp``; ``runtime_cache``: a Numba
    cache folder holding jitgrad's warmed runtime, copied in first."""
    env = dict(os.environ)
    for k, v in CHILD_DEFAULTS.items():
        env.setdefault(k, v)
    env["JITGRAD_CACHE_DIR"] = os.path.join(tmp, "jitgrad")
    env["NUMBA_CACHE_DIR"] = os.path.join(tmp, "numba")
    if runtime_cache is not None:
        shutil.copytree(runtime_cache, env["NUMBA_CACHE_DIR"])
    return env


def warm_runtime(folder, timeout):
    """``python -m jitgrad warm`` with ``NUMBA_CACHE_DIR=folder``: its wall time in seconds
    and its last line of output."""
    env = dict(os.environ, NUMBA_CACHE_DIR=folder)
    start = time.time()
    proc = subprocess.run([sys.executable, "-m", "jitgrad", "warm"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=True)
    return time.time() - start, proc.stdout.strip().splitlines()[-1]


def run_child(spec, env, timeout):
    """The child's JSON, with ``since_start``: seconds from just before it was started to its
    ``done_at``, less its data making; or ``{"status": "timeout" | "error", ...}``."""
    start = time.time()
    try:
        proc = subprocess.run([sys.executable, "-m", "bench.cold_start", "--child",
                               json.dumps(spec)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"status": "error", "error": f"exit {proc.returncode}: {tail}"[:300]}
    out = json.loads(lines[-1])
    out.setdefault("status", "unsupported" if "unsupported" in out else "ok")
    if "done_at" in out:
        out["since_start"] = out["done_at"] - start - out.get("data_s", 0.0)
    return out


# --------------------------------------------------------------------------------------
# one program, and the interleaved repetitions
# --------------------------------------------------------------------------------------


def measure_program(name, timeout, check, runtime_cache=None):
    """One set of fresh processes for program ``name``: ``{measurement: child output}``."""
    runs = {}
    with tempfile.TemporaryDirectory(prefix="jitgrad-cold-") as tmp:
        env = _child_env(tmp, runtime_cache)
        runs["cold"] = run_child({"kind": "jitgrad", "program": name, "check": check}, env,
                                 timeout)
        if runs["cold"]["status"] == "ok":
            runs["warm"] = run_child({"kind": "jitgrad", "program": name}, env, timeout)
        for module in ("numba", "jitgrad"):
            runs[f"import_{module}"] = run_child({"kind": "import", "module": module}, env,
                                                 timeout)
    with tempfile.TemporaryDirectory(prefix="jitgrad-cold-numba-") as tmp:
        env = _child_env(tmp)
        runs["numba"] = run_child({"kind": "numba", "program": name}, env, timeout)
        if runs["numba"]["status"] == "ok":
            runs["numba_warm"] = run_child({"kind": "numba_warm", "program": name}, env,
                                           timeout)
    return runs


def measure_all(names, timeout, reps, runtime_cache=None):
    """``{name: [runs of each repetition]}``; repetition r starts at the r-th program."""
    results = {name: [] for name in names}
    for r in range(reps):
        for name in names[r % len(names):] + names[:r % len(names)]:
            _say(f"[rep {r + 1}/{reps}] {name} ...")
            runs = measure_program(name, timeout, check=r == 0, runtime_cache=runtime_cache)
            results[name].append(runs)
            _say("    " + ", ".join(f"{k} {_brief(v)}" for k, v in runs.items()))
            check = runs["cold"].get("check")
            if check and check["status"] != "ok":
                _say(f"!!! {name}: GRADIENT CHECK {check['status'].upper()}: {check['detail']}")
    return results


def _brief(run):
    if run["status"] != "ok":
        return run["status"]
    return " / ".join(f"{run[k]:.3g} s {k}" for k in ("first_call", "since_start") if k in run)


def _say(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# summary and report
# --------------------------------------------------------------------------------------


def summarise(runs):
    """One row's numbers from a program's repetitions: medians over the runs that succeeded
    (None if none did), and the status of a measurement that never succeeded."""
    def median(kind, key):
        values = [r[kind][key] for r in runs if r.get(kind, {}).get("status") == "ok"]
        return statistics.median(values) if values else None

    def failure(kind):
        statuses = [r[kind] for r in runs if kind in r]
        if not statuses:
            return "not run"
        if any(s["status"] == "ok" for s in statuses):
            return None
        return statuses[0]["status"]

    row = {"jitgrad": median("cold", "first_call"), "numba": median("numba", "first_call"),
           "warm": median("warm", "since_start"), "warm_call": median("warm", "first_call"),
           "import_numba": median("import_numba", "since_start"),
           "import_jitgrad": median("import_jitgrad", "since_start"),
           "rss": median("cold", "peak_rss_mb"), "rss_before": median("cold", "rss_before_mb"),
           "numba_rss": median("numba", "peak_rss_mb"),
           "numba_rss_before": median("numba", "rss_before_mb"),
           "failures": {k: failure(k) for k in ("cold", "warm", "numba", "numba_warm")},
           "check": runs[0]["cold"].get("check"), "notes": []}
    row["ratio"] = row["jitgrad"] / row["numba"] if row["jitgrad"] and row["numba"] else None
    row["numba_warm"] = median("numba_warm", "since_start")
    row["beyond_numba"] = (row["warm"] - row["import_numba"]
                           if row["warm"] is not None and row["import_numba"] is not None
                           else None)
    row["beyond_numba_warm"] = (row["warm"] - row["numba_warm"]
                                if row["warm"] is not None and row["numba_warm"] is not None
                                else None)
    for kind in ("cold", "numba"):
        bad = next((r[kind] for r in runs if r[kind]["status"] not in ("ok", "timeout")), None)
        if bad is not None:
            row["notes"].append(f"{'Numba' if kind == 'numba' else 'jitgrad'}: "
                                + bad.get("unsupported", bad.get("error", "")))
    return row


def _cell(row, key, kind):
    from bench.report import fmt_time

    if row[key] is not None:
        return fmt_time(row[key])
    failure = row["failures"][kind]
    return "—" if failure in (None, "unsupported") else failure


def _signed_time(seconds):
    """A time that may be negative (jitgrad's warm start faster than Numba's)."""
    from bench.report import fmt_time

    if seconds is None or seconds >= 0:
        return fmt_time(seconds)
    return "−" + fmt_time(-seconds)


def _mb(peak, before):
    return "—" if peak is None else f"{peak:.0f} ({before:.0f})"


def _check_cell(check):
    if check is None:
        return "—"
    return "ok" if check["status"] == "ok" else f"**{check['status'].upper()}**"


def table(rows, programs):
    from bench.report import fmt_ratio, fmt_time

    header = ["program", "exercises", "jitgrad cold", "Numba cold", "ratio",
              "warm: start → gradient", "warm: the call", "import numba", "import jitgrad",
              "beyond import numba", "Numba warm: start → call", "beyond Numba warm",
              "peak RSS MB jitgrad (imports)", "peak RSS MB Numba (imports)", "gradient check"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, row in rows.items():
        cells = [f"`{name}`", programs[name].features, _cell(row, "jitgrad", "cold"),
                 _cell(row, "numba", "numba"), fmt_ratio(row["ratio"]),
                 _cell(row, "warm", "warm"), _cell(row, "warm_call", "warm"),
                 fmt_time(row["import_numba"]), fmt_time(row["import_jitgrad"]),
                 fmt_time(row["beyond_numba"]), _cell(row, "numba_warm", "numba_warm"),
                 _signed_time(row["beyond_numba_warm"]),
                 _mb(row["rss"], row["rss_before"]),
                 _mb(row["numba_rss"], row["numba_rss_before"]), _check_cell(row["check"])]
        lines.append("| " + " | ".join(cells) + " |")
    ratios = [row["ratio"] for row in rows.values() if row["ratio"] is not None]
    if ratios:
        worst = max(rows, key=lambda n: rows[n]["ratio"] or 0.0)
        lines += ["", (f"Ratio jitgrad cold / Numba cold over {len(ratios)} programs: median "
                       f"{fmt_ratio(statistics.median(ratios))}, worst "
                       f"{fmt_ratio(max(ratios))} (`{worst}`).")]
    return "\n".join(lines)


def notes(rows):
    out = []
    for name, row in rows.items():
        check = row["check"]
        if check is not None:
            status = "" if check["status"] == "ok" else f"**{check['status'].upper()}**: "
            out.append(f"- `{name}` gradient check: {status}{check['detail']}")
        out += [f"- `{name}`: {n}" for n in row["notes"]]
    return "\n".join(out)


DEFINITIONS = (
    "jitgrad cold: `jitgrad.grad(f, wrt, parallel)(*args)` in a fresh process with an empty "
    "JITGRAD_CACHE_DIR and a NUMBA_CACHE_DIR holding jitgrad's runtime only (see runtime "
    "above), imports and data before the clock. Numba cold: the "
    "first `numba.njit(f)(*args)` call (`parallel=True` for `prange`), likewise. warm: a fresh "
    "process on the caches the cold one filled, from its start to its first gradient (less "
    "making the data), and its `jitgrad.grad(f, ...)(*args)` call alone (loading the cached "
    "code). import numba / import jitgrad: fresh processes that only import it, timed the same "
    "way. beyond import numba = warm - import numba. Numba warm: a fresh process on a cache "
    "that a `numba.njit(cache=True)(f)` build filled, from its start to the first call of "
    "that function (Numba loads its registries, and through them SciPy, on that call: paid by "
    "any Numba program's first call); beyond Numba warm = warm - Numba warm. Peak RSS: "
    "ru_maxrss after the timed call (in parentheses: after the imports and the data, before "
    "the clock)."
)


def _load(load):
    return "/".join(f"{x:.2f}" for x in load)


def header(command, started, load_start, reps, timeout, runtime_note):
    from bench import report

    env = report.environment(command, threads="env", peer_versions={}, tape=None,
                             helper_cache=None, numba_init=None)
    git = f" (git {env['jitgrad_git']})" if env["jitgrad_git"] else ""
    settings = ", ".join(f"{k}={os.environ.get(k, v)}" for k, v in CHILD_DEFAULTS.items())
    settings += f", NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS', 'default')}"
    sets = ("one set of fresh processes per program" if reps == 1
            else f"median over {reps} interleaved sets of fresh processes")
    return "\n".join([
        "# Cold start: jitgrad's first gradient against Numba's first call (issue #24)",
        "",
        ("**The machine is shared**: other jobs may have run on its cores during the run; "
         "compare programs within this run, not with other runs."),
        "",
        f"- command: `{command}` (in `{ROOT}`)",
        f"- date: {started} to {env['date']}",
        (f"- machine: {env['nproc']} cores (nproc), {env['cpu_model']}; load average "
         f"{_load(load_start)} at start, {_load(os.getloadavg())} at the end"),
        (f"- versions: Python {env['python']}, NumPy {env['numpy']}, Numba {env['numba']}, "
         f"jitgrad {env['jitgrad']}{git}"),
        f"- children: {settings}; timeout {timeout:g} s per process; {sets}",
        f"- runtime: {runtime_note}",
        f"- {DEFINITIONS}",
    ])


def report_text(command, started, load_start, names, results, reps, timeout, runtime_note):
    from bench.cold_programs import PROGRAMS

    rows = {name: summarise(results[name]) for name in names}
    parts = [header(command, started, load_start, reps, timeout, runtime_note), "",
             table(rows, PROGRAMS)]
    extra = notes(rows)
    if extra:
        parts += ["", "Notes:", "", extra]
    return "\n".join(parts) + "\n"


def parse_args(argv):
    from bench.cold_programs import PROGRAMS

    ap = argparse.ArgumentParser(prog="python -m bench.cold_start",
                                 description="Cold-start compile times of jitgrad and Numba.")
    ap.add_argument("--programs", default=",".join(PROGRAMS),
                    help=f"comma-separated subset of {','.join(PROGRAMS)} (default: all)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds per child process (default 300)")
    ap.add_argument("--reps", type=int, default=1,
                    help="fresh-process sets per program, median (default 1)")
    ap.add_argument("--runtime", choices=("warm", "cold"), default="warm",
                    help="warm (default): jitgrad's runtime made ready once (python -m "
                         "jitgrad warm) before the cold processes; cold: compiled in each")
    ap.add_argument("--no-save", action="store_true", help="print only, write no file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.names = [n.strip() for n in args.programs.split(",") if n.strip()]
    unknown = [n for n in args.names if n not in PROGRAMS]
    if unknown:
        ap.error(f"unknown programs {unknown}; known: {', '.join(PROGRAMS)}")
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(json.loads(argv[1]))
        return
    args = parse_args(argv)
    command = "python -m bench.cold_start" + "".join(" " + shlex.quote(a) for a in argv)
    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="jitgrad-runtime-") as runtime_cache:
        if args.runtime == "warm":
            _say("python -m jitgrad warm ...")
            seconds, said = warm_runtime(runtime_cache, args.timeout)
            runtime_note = (f"made ready once by `python -m jitgrad warm` in {seconds:.1f} s "
                            f"(\"{said}\"), then copied into each cold process's empty "
                            "NUMBA_CACHE_DIR")
        else:
            runtime_cache = None
            runtime_note = ("cold (`--runtime cold`): each cold process compiles the runtime "
                            "helpers it calls")
        results = measure_all(args.names, args.timeout, args.reps, runtime_cache)
    text = report_text(command, started, load_start, args.names, results, args.reps,
                       args.timeout, runtime_note)
    print(text)
    if not args.no_save:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        path = os.path.join(ROOT, "bench", "results", f"cold_start-{stamp}.md")
        with open(path, "w") as fh:
            fh.write(text)
        _say(f"wrote {path}")


if __name__ == "__main__":
    main()
