"""``python -m bench``: benchmark jitgrad against its baselines and peers.

Usage (from the repository root)::

    python -m bench                        # every suite at its default sizes (minutes)
    python -m bench --quick                # small sizes, few rounds, no subprocesses (< 1 min)
    python -m bench --suite rnn --suite gmm --size large --no-peers

For each case (problem x size, see ``bench.suites``) it checks jitgrad's gradient against
references that are not jitgrad (``bench.oracle``), verifies every tool's gradient against
jitgrad's, times them (interleaved rounds), measures peak memory and first-call
(compile) time, and prints a markdown report on stdout (progress goes to stderr). Unless
``--no-save``, the same report is written to ``bench/results/`` as ``<timestamp>.json`` /
``.md``, ``latest.json`` / ``latest.md``, plus a PNG bar chart of the time ratios when
matplotlib is installed. See ``bench/README.md`` for what each column means.

Thread pools are set before NumPy is imported: ``--threads 1`` (the default) sets
``OPENBLAS_NUM_THREADS=1`` and ``NUMBA_NUM_THREADS=1`` and makes PyTorch and XLA
single-threaded; ``--threads N`` gives each of them N threads and runs jitgrad with
``parallel=True``; ``--threads env`` leaves the environment alone. The report's ``threads``
column says what each tool may use. The main process gives each case a temporary, empty
``JITGRAD_CACHE_DIR`` (removed at exit), so in-process first calls compile.
"""

import argparse
import os
import shlex
import sys

# the same as bench.suites.SUITES, which cannot be imported before the thread settings
SUITES = ("two_layer", "rnn", "gmm", "gmm_adbench", "gmm_adbench_cols", "reproj",
          "control_flow")


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m bench",
                                 description="Benchmark jitgrad against baselines and peers.")
    ap.add_argument("--suite", action="append", choices=SUITES,
                    help="run this suite (repeatable; default: all)")
    ap.add_argument("--size", choices=("small", "large"),
                    help="only this size (default: both sizes of two_layer and rnn, the large "
                         "size of the others; --quick: small)")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes, few rounds, 2 s budget, no fresh-process compile times")
    ap.add_argument("--no-peers", action="store_true", help="skip autograd, torch and jax")
    ap.add_argument("--rounds", type=int, help="timing rounds (default 31; --quick 7)")
    ap.add_argument("--budget", type=float,
                    help="seconds allowed per slow tool per case (default 60; --quick 2)")
    ap.add_argument("--compile-reps", type=int, default=1,
                    help="fresh processes per first-call measurement (median; default 1)")
    ap.add_argument("--no-compile", action="store_true",
                    help="skip the fresh-process first-call measurements")
    ap.add_argument("--threads", default="1",
                    help="BLAS / torch / XLA threads, or 'env' to keep the environment's")
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "results"),
                    help="where to write the JSON / markdown / PNG (default bench/results)")
    ap.add_argument("--no-save", action="store_true", help="print only, write no files")
    ap.add_argument("--first-call-child", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def set_threads(threads):
    """Must run before NumPy is imported (OpenBLAS reads the variable when it loads). Numba's
    threads too: with more than one, jitgrad runs with ``parallel=True`` (`suites`)."""
    if threads == "env":
        return
    if "numpy" in sys.modules:
        raise RuntimeError("thread settings must be applied before numpy is imported")
    os.environ["OPENBLAS_NUM_THREADS"] = threads
    os.environ["NUMBA_NUM_THREADS"] = threads
    # GNU OpenMP (Numba's default layer here) spin-waits: with other work on the cores the
    # parallel GMM gradient took 15 ms instead of 1 ms (OMP_WAIT_POLICY=passive fixes it too)
    os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    set_threads(args.threads)

    import json

    if args.first_call_child:
        from bench.run import first_call_child

        first_call_child(json.loads(args.first_call_child))
        return 0

    import shutil
    import tempfile

    cache = tempfile.mkdtemp(prefix="jitgrad-bench-main-")
    try:
        return _run(args, argv, cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _run(args, argv, cache_root):
    import tempfile

    from bench import peers, report, run, suites

    def say(msg):
        print(msg, file=sys.stderr, flush=True)

    opts = run.Options(fresh_process=not (args.quick or args.no_compile),
                       compile_reps=args.compile_reps)
    if args.quick:
        opts.rounds, opts.target_block, opts.budget = 7, 0.005, 2.0
    if args.rounds:
        opts.rounds = args.rounds
    if args.budget:
        opts.budget = args.budget
    size = args.size or ("small" if args.quick else None)
    cases = suites.cases(args.suite or SUITES, size)
    threads = suites.Threads.from_setting(args.threads)

    if args.threads != "env" and not args.no_peers:
        peers.configure_threads(int(args.threads))
    peer_versions = {} if args.no_peers else peers.available()
    systems = [s for s, v in peer_versions.items() if v]
    tape = suites.tape_module()
    if isinstance(tape, str):
        say(f"note: jitgrad.tape not available ({tape}); skipping it")
        tape_status = tape
    else:
        tape_status = "available"
    helper_files = run.helper_cache_files()
    helper_cache = {"index_files": sum(f.endswith(".nbi") for f in helper_files)}
    numba_init = run.numba_init_time(args.compile_reps) if opts.fresh_process else None
    command = "python -m bench" + (" " + shlex.join(argv) if argv else "")
    env = report.environment(command, args.threads, peer_versions, tape_status, helper_cache,
                             numba_init)

    results = []
    for case in cases:
        say(f"== {case.name} {tuple(case.sizes)}")
        # an empty cache per case: two sizes of a problem generate the same code
        os.environ["JITGRAD_CACHE_DIR"] = tempfile.mkdtemp(dir=cache_root)
        results.append(run.run_case(case, suites.tools(case, systems, threads), opts))
    settings = {"rounds": opts.rounds, "target_block": opts.target_block,
                "budget": opts.budget, "tol": opts.tol, "fresh_process": opts.fresh_process,
                "compile_reps": opts.compile_reps, "quick": args.quick,
                "no_peers": args.no_peers, "suites": args.suite or list(SUITES),
                "size": size}
    text = report.markdown(env, results, settings)
    print(text)
    if not args.no_save:
        for p in report.write(args.out_dir, env, results, settings, text):
            say(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
