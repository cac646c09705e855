"""``python -m bench.dask_bench``: `jitgrad.dask` on a local cluster against one process.

Starts a ``distributed.LocalCluster`` (default: 2 worker processes with 1 thread each), puts the
loop GMM's points (default n = 4e5, d = 10, K = 25) in worker memory in 8 blocks, and measures:

* **the ratio**: a warm `jitgrad.dask.value_and_grad` call over the cluster against
  `jitgrad.value_and_grad` on all rows in this process (interleaved rounds, medians), after
  checking that value and gradients agree within 1e-12 (relative norm);
* **per-block cost**: the compiled gradient on one block in this process, and the median
  duration of the block tasks on the workers (Dask's task stream);
* **the additivity check** (`jitgrad.dask`'s default reads the code and checks the first call
  of each compiled signature numerically): the first call of a new gradient object (kernel
  already on the workers) with the default against ``check=False``, the reading alone, the
  check task's duration on a worker, and a warm call with ``check=True`` (a check every call)
  against ``check=False``;
* **scheduler overhead**: the same call on tiny blocks (10 rows) with B = 8 ... 512 blocks,
  fitted as ``T(B) = latency + B * per_block``: blocks in worker memory (run in one group task
  per worker) and blocks of a lazy array (one task per block, so ``per_block`` is the
  scheduler's cost per task);
* **an estimate** for n = 1e8 rows on W = 64 workers from those numbers.

Prints a markdown report; ``--out FILE`` also writes it there. ``OPENBLAS_NUM_THREADS=1`` is
set before NumPy is imported (the workers inherit it).
"""

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m bench.dask_bench", description=__doc__.split(
        "\n\n")[0])
    ap.add_argument("--n", type=float, default=4e5, help="rows (default 4e5)")
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--K", type=int, default=25)
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--target-n", type=float, default=1e8, help="rows for the estimate")
    ap.add_argument("--target-workers", type=int, default=64, help="workers for the estimate")
    ap.add_argument("--out", help="also write the report to this file")
    return ap.parse_args(argv)


_HALF = {}


def _init_half(params, x):
    """Pool initializer: this process's share of the rows, and the warm gradient."""
    import jitgrad as jg
    from bench.problems import gmm_nll

    _HALF["params"], _HALF["x"] = params, x
    _HALF["vg"] = jg.value_and_grad(gmm_nll, wrt=(0, 1, 2))


def _run_half(blocks):
    """(value, grads) summed over this process's blocks of rows (as the workers do)."""
    vg, x = _HALF["vg"], _HALF["x"]
    total = None
    for b in range(blocks):
        rows = -(-len(x) // blocks)
        out = vg(*_HALF["params"], x[b * rows:(b + 1) * rows])
        total = out if total is None else (total[0] + out[0],
                                           tuple(a + g for a, g in zip(total[1], out[1])))
    return total


def fmt(t):
    return f"{t * 1e3:.1f} ms" if t >= 1e-3 else f"{t * 1e6:.0f} µs"


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import dask.array as da
    from distributed import Client, LocalCluster, get_task_stream, wait

    import jitgrad as jg
    import jitgrad.dask as jgd
    from bench.problems import gmm_nll, make_gmm
    from bench.timing import measure

    n, d, K = int(args.n), args.d, args.K
    log = lambda *a: print(*a, file=sys.stderr, flush=True)
    alphas, means, log_prec, x = make_gmm(n, d, K, seed=0)
    rows = -(-n // args.blocks)

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        with warnings.catch_warnings():  # "Sending large graph": once, on purpose
            warnings.simplefilter("ignore")
            X = da.from_array(x, chunks=(rows, d)).persist()
        client.wait_for_workers(args.workers)
        wait(X)
        vg_dask = jgd.value_and_grad(gmm_nll, wrt=(0, 1, 2), shard="x", client=client)
        vg_one = jg.value_and_grad(gmm_nll, wrt=(0, 1, 2))

        log("first calls (compile or load from disk) ...")
        t0 = time.perf_counter()
        want = vg_one(alphas, means, log_prec, x)
        first_one = time.perf_counter() - t0
        t0 = time.perf_counter()
        got = vg_dask(alphas, means, log_prec, X)
        first_dask = time.perf_counter() - t0
        diff = jgd.relative_difference(got, want)
        if not diff <= 1e-12:
            raise SystemExit(f"jitgrad.dask differs from one process by {diff:.3g}")

        # the machine's ceiling: the same blocks in bare worker processes, no Dask
        import multiprocessing

        halves = np.array_split(np.arange(n), args.workers)
        pools = [multiprocessing.get_context("spawn").Pool(
            1, _init_half, ((alphas, means, log_prec), x[h[0]:h[-1] + 1]))
            for h in halves]
        per = args.blocks // args.workers

        def bare():
            outs = [p.apply_async(_run_half, (per,)) for p in pools]
            return [o.get() for o in outs]
        bare()

        log("timing ...")
        vg_every = jgd.value_and_grad(gmm_nll, wrt=(0, 1, 2), shard="x", client=client,
                                      check=True)
        vg_never = jgd.value_and_grad(gmm_nll, wrt=(0, 1, 2), shard="x", client=client,
                                      check=False)
        timings = measure({
            "one process": lambda: vg_one(alphas, means, log_prec, x),
            "jitgrad.dask": lambda: vg_dask(alphas, means, log_prec, X),
            "bare processes": bare,
            "check=True": lambda: vg_every(alphas, means, log_prec, X),
            "check=False": lambda: vg_never(alphas, means, log_prec, X),
        }, rounds=args.rounds, inner=1)
        for p in pools:
            p.close()
        t_one = timings["one process"].median
        t_dask = timings["jitgrad.dask"].median
        t_bare = timings["bare processes"].median
        t_every, t_never = timings["check=True"].median, timings["check=False"].median

        # the check's cost on a first call: new gradient objects (the kernel is on the
        # workers; each builds the source on the client), the default against check=False
        def first(check):
            vg = jgd.value_and_grad(gmm_nll, wrt=(0, 1, 2), shard="x", client=client,
                                    check=check)
            t0 = time.perf_counter()
            vg(alphas, means, log_prec, X)
            return time.perf_counter() - t0
        firsts = {"first": [], False: []}
        for _ in range(max(3, args.rounds // 3)):
            for check, times in firsts.items():
                times.append(first(check))
        t_first_checked = float(np.median(firsts["first"]))
        t_first_unchecked = float(np.median(firsts[False]))
        vg_read = jgd.DaskGradFunction(gmm_nll, (0, 1, 2), shard="x", client=client)
        types = vg_read._grad.types_of((alphas, means, log_prec, x[:rows]))
        generated = vg_read._grad.generate(types)
        t_read = measure({"r": lambda: vg_read._read_code(types, generated)}, rounds=5,
                         inner=1)["r"].median
        with get_task_stream(client) as ts:
            vg_every(alphas, means, log_prec, X)
        t_check_task = sum(s["stop"] - s["start"] for t in ts.data
                           if "jitgrad-check" in str(t["key"]) for s in t["startstops"]
                           if s["action"] == "compute")
        log(f"one process {fmt(t_one)}, dask {fmt(t_dask)}: {t_dask / t_one:.2f}x")

        # per-block cost: here, and on the workers (task stream of a few calls)
        block = x[:rows]
        t_block = measure({"b": lambda: vg_one(alphas, means, log_prec, block)},
                          rounds=args.rounds, inner=1)["b"].median
        with get_task_stream(client) as ts:
            for _ in range(3):
                vg_dask(alphas, means, log_prec, X)
        durs = [sum(s["stop"] - s["start"] for s in t["startstops"] if s["action"] == "compute")
                for t in ts.data if "jitgrad-group" in str(t["key"])]
        groups = len(durs) / 3
        t_block_worker = float(np.median(durs)) * groups / args.blocks if durs else float("nan")

        # scheduler overhead: tiny blocks, T(B) = latency + B * per_block, in memory and lazy
        tiny, lazy = {}, {}
        for B in (8, 32, 128, 512):
            xb = da.from_array(x[:10 * B], chunks=(10, d))
            xp = xb.persist()
            wait(xp)
            rounds = max(5, args.rounds // 2)
            tiny[B] = measure({"t": lambda xp=xp: vg_dask(alphas, means, log_prec, xp)},
                              rounds=rounds, inner=1)["t"].median
            lazy[B] = measure({"t": lambda xb=xb: vg_dask(alphas, means, log_prec, xb)},
                              rounds=rounds, inner=1)["t"].median
        Bs = np.array(sorted(tiny), dtype=float)
        per_block, latency = np.polyfit(Bs, np.array([tiny[int(b)] for b in Bs]), 1)
        per_task, latency_lazy = np.polyfit(Bs, np.array([lazy[int(b)] for b in Bs]), 1)
        # one level of sum tasks: the same call with the client's share of the sum turned off
        # (CLIENT_SUM_BYTES = 0: a task on a worker adds the two groups) against the default
        xp = da.from_array(x[:80], chunks=(10, d)).persist()
        wait(xp)

        def tree():
            saved, jgd.CLIENT_SUM_BYTES = jgd.CLIENT_SUM_BYTES, 0
            try:
                return vg_dask(alphas, means, log_prec, xp)
            finally:
                jgd.CLIENT_SUM_BYTES = saved
        level = measure({"tree": tree, "flat": lambda: vg_dask(alphas, means, log_prec, xp)},
                        rounds=max(5, args.rounds // 2), inner=1)
        t_level = level["tree"].median - level["flat"].median
    finally:
        client.close()
        cluster.close()

    # the estimate: n rows on W workers, data in worker memory: one group task per worker
    W, N = args.target_workers, args.target_n
    c_row = t_block / rows
    compute = N / W * c_row
    sched = W * per_task
    depth = 0  # levels of sum tasks before the client adds at most split_every (8) results
    parts = W
    while parts > 8:
        parts, depth = -(-parts // 8), depth + 1
    estimate = latency + compute + depth * t_level
    worst = estimate + sched

    lines = [
        (f"# jitgrad.dask: loop GMM, n = {n:.3g}, d = {d}, K = {K}, {args.blocks} blocks, "
        f"{args.workers} worker processes x 1 thread"),
        "",
        (f"`python -m bench.dask_bench {' '.join(sys.argv[1:] if argv is None else argv)}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, nproc {os.cpu_count()}, "
        f"medians of {args.rounds} interleaved rounds"),
        "",
        "| measurement | time |",
        "|---|---|",
        f"| one process, jitgrad.value_and_grad on all rows (warm) | {fmt(t_one)} |",
        f"| jitgrad.dask warm call | {fmt(t_dask)} |",
        f"| **ratio (dask / one process)** | **{t_dask / t_one:.2f}×** |",
        (f"| the same blocks in {args.workers} bare processes (no Dask; the machine's "
         f"ceiling) | {fmt(t_bare)} ({t_bare / t_one:.2f}×) |"),
        f"| value and gradients, relative difference | {diff:.1e} |",
        f"| load average at the end (1 min) | {os.getloadavg()[0]:.1f} |",
        (f"| first call: one process / dask (compile or disk cache) | {fmt(first_one)} / "
        f"{fmt(first_dask)} |"),
        (f"| additivity check, first call of a new gradient object (source built on the "
         f"client, kernel already on the workers): default / check=False | "
         f"{fmt(t_first_checked)} / {fmt(t_first_unchecked)} "
         f"(+{fmt(t_first_checked - t_first_unchecked)}) |"),
        (f"| the reading of the code (once per build, on the client) / the check task on a "
         f"worker ({min(rows, jgd.CHECK_ROWS)} rows of 2 blocks) | {fmt(t_read)} / "
         f"{fmt(t_check_task)} |"),
        (f"| warm call: default (no check after the first) / check=True (every call) / "
         f"check=False | {fmt(t_dask)} / {fmt(t_every)} / {fmt(t_never)} |"),
        (f"| one block ({rows} rows), in this process | {fmt(t_block)} "
        f"({t_block / rows * 1e9:.0f} ns/row) |"),
        (f"| one block on a worker (median group task duration / its blocks; "
         f"{groups:.0f} group tasks per call) | {fmt(t_block_worker)} |"),
        (f"| tiny blocks (10 rows) in worker memory: T(B) for B = "
         f"{', '.join(map(str, sorted(tiny)))} | {', '.join(fmt(tiny[b]) for b in sorted(tiny))} |"),
        (f"| fitted per-call latency, per block (in memory, grouped) | {fmt(latency)}, "
         f"{fmt(per_block)} |"),
        (f"| tiny blocks of a lazy array (a task each): T(B) | "
         f"{', '.join(fmt(lazy[b]) for b in sorted(lazy))} |"),
        f"| fitted per-call latency, per task (lazy) | {fmt(latency_lazy)}, {fmt(per_task)} |",
        (f"| one level of sum tasks on the workers (two groups added by a task, not the "
         f"client) | {fmt(t_level)} |"),
        "",
        (f"Estimate for n = {N:.0e} on W = {W} workers (1 thread each, data already in worker "
        f"memory, so one group task per worker of {N / W:.3g} rows): compute "
        f"n/W x {c_row * 1e9:.0f} ns/row = {compute:.2f} s; {depth} level(s) of sum tasks "
        f"({fmt(t_level)} each) before the client adds at most 8 partial sums; latency "
        f"{fmt(latency)}. About **{estimate:.2f} s** per call; {worst:.2f} s if the "
        f"scheduler's {W} x {fmt(per_task)} per task did not overlap anything. One process "
        f"would take {N * c_row:.0f} s. Not included: load imbalance between workers and "
        f"network bandwidth (each call sends the parameters to {W} workers)."),
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
