"""Measure the hand-written baselines: compile time (fresh process) and run time.

Usage (from the repository root)::

    python -m bench.run_baselines                 # everything, prints a table
    python -m bench.run_baselines --compile-reps 5 --rounds 21 --out bench/results/b.json
    python -m bench.run_baselines --only gmm --no-compile

Takes the tools in ``TOOLS`` (one per hand-written function in ``bench.handwritten``,
plus ``numba_init``, a trivial njit function whose first call shows the fixed cost of the
first compilation in a process, and ``two_layer_numpy``, the plain NumPy problem).

* compile: for each tool, ``--compile-reps`` fresh ``python`` processes each build the data,
  then time the tool's first call (``timing.time_first_call``), i.e. Numba typing + LLVM
  + one run, *including* the one-off Numba initialisation that ``numba_init`` shows.
  Imports (numba, numpy) happen before the timer. The median over processes is reported.
* run: tools of the same problem are timed together with ``timing.measure`` (interleaved
  rounds), on the benchmark sizes ``BENCH_*`` / ``MNIST_TWO_LAYER`` of ``bench.problems``.

BLAS runs single-threaded by default (``--blas-threads``, sets ``OPENBLAS_NUM_THREADS``
for this process and the children): NumPy and SciPy (whose BLAS Numba calls for ``@``)
each load their own OpenBLAS, and on a 2-core machine their spinning worker threads
fight each other -- two-layer timings went from ~1.8 ms to 30-50 ms with a huge spread.
"""

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys

# tool name -> (problem group, data-generator name, sizes name, function path)
TOOLS = {
    "numba_init": ("init", None, None, None),
    "two_layer_numpy": (
        "two_layer",
        "make_two_layer",
        "MNIST_TWO_LAYER",
        "problems.two_layer_loss",
    ),
    "two_layer_primal": (
        "two_layer",
        "make_two_layer",
        "MNIST_TWO_LAYER",
        "handwritten.two_layer_primal",
    ),
    "two_layer_grad": (
        "two_layer",
        "make_two_layer",
        "MNIST_TWO_LAYER",
        "handwritten.two_layer_grad",
    ),
    "two_layer_grad_loops": (
        "two_layer",
        "make_two_layer",
        "MNIST_TWO_LAYER",
        "handwritten.two_layer_grad_loops",
    ),
    "rnn_primal": ("rnn", "make_rnn", "BENCH_RNN", "handwritten.rnn_primal"),
    "rnn_grad": ("rnn", "make_rnn", "BENCH_RNN", "handwritten.rnn_grad"),
    "gmm_primal": ("gmm", "make_gmm", "BENCH_GMM", "handwritten.gmm_primal"),
    "gmm_grad": ("gmm", "make_gmm", "BENCH_GMM", "handwritten.gmm_grad"),
    "reproj_primal": ("reproj", "make_reproj", "BENCH_REPROJ", "handwritten.reproj_primal"),
    "reproj_grad": ("reproj", "make_reproj", "BENCH_REPROJ", "handwritten.reproj_grad"),
    "control_flow_primal": (
        "control_flow",
        "make_control_flow",
        "BENCH_CONTROL_FLOW",
        "handwritten.control_flow_primal",
    ),
    "control_flow_grad": (
        "control_flow",
        "make_control_flow",
        "BENCH_CONTROL_FLOW",
        "handwritten.control_flow_grad",
    ),
}


def make_call(name):
    """Return a zero-argument callable running tool ``name`` on its benchmark data."""
    from bench import handwritten, problems

    group, maker, sizes, path = TOOLS[name]
    if group == "init":
        import numba

        trivial = numba.njit(lambda x: x + 1.0)
        return functools.partial(trivial, 1.0)
    data = getattr(problems, maker)(*getattr(problems, sizes))
    module, fn = path.split(".")
    return functools.partial(
        getattr({"problems": problems, "handwritten": handwritten}[module], fn), *data
    )


def _first_call_child(name):
    # runs in the fresh process: imports and data outside the timer
    import numba  # noqa: F401

    from bench.timing import time_first_call

    call = make_call(name)
    print(json.dumps({"first_call": time_first_call(call)}))


def compile_times(names, reps):
    out = {}
    for name in names:
        times = []
        for _ in range(reps):
            proc = subprocess.run(
                [sys.executable, "-m", "bench.run_baselines", "--first-call-child", name],
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(json.loads(proc.stdout.strip().splitlines()[-1])["first_call"])
        out[name] = {"median": statistics.median(times), "all": times}
    return out


def run_times(names, rounds):
    from bench.timing import measure, peak_memory

    groups = {}
    for name in names:
        if TOOLS[name][0] != "init":
            groups.setdefault(TOOLS[name][0], []).append(name)
    out = {}
    for members in groups.values():
        calls = {name: make_call(name) for name in members}
        for name, t in measure(calls, rounds=rounds).items():
            mem = peak_memory(calls[name], warmup=False)
            out[name] = {
                "median": t.median,
                "q1": t.q1,
                "q3": t.q3,
                "inner": t.inner,
                "peak_bytes": mem.peak_bytes,
                "nrt_allocs": mem.nrt_allocs,
            }
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="substring filter on tool names")
    ap.add_argument("--compile-reps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument(
        "--blas-threads",
        default="1",
        help="OPENBLAS_NUM_THREADS for the measurements ('env' keeps the environment's)",
    )
    ap.add_argument("--out", help="write the results as JSON to this path")
    ap.add_argument("--first-call-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.blas_threads != "env":
        if "numpy" in sys.modules:
            raise RuntimeError("--blas-threads must be applied before numpy is imported")
        os.environ["OPENBLAS_NUM_THREADS"] = args.blas_threads
    if args.first_call_child:
        _first_call_child(args.first_call_child)
        return

    names = [n for n in TOOLS if not args.only or args.only in n]
    comp = {} if args.no_compile else compile_times(names, args.compile_reps)
    run = {} if args.no_run else run_times(names, args.rounds)

    print(f"{'tool':<22} {'compile s':>9} {'run median':>11} {'IQR':>9} {'peak MB':>8}")
    for name in names:
        c = f"{comp[name]['median']:9.2f}" if name in comp else " " * 9
        if name in run:
            r = run[name]
            rt = f"{r['median'] * 1e3:8.3f} ms {(r['q3'] - r['q1']) * 1e3:6.3f} ms"
            rt += f" {r['peak_bytes'] / 1e6:8.2f}"
        else:
            rt = ""
        print(f"{name:<22} {c} {rt}")
    if args.out:
        meta = {
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
            "compile_reps": args.compile_reps,
            "rounds": args.rounds,
        }
        with open(args.out, "w") as fh:
            json.dump({"meta": meta, "compile": comp, "run": run}, fh, indent=2)


if __name__ == "__main__":
    main()
