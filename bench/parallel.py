"""``python -m bench.parallel``: ``parallel=True`` against the serial jitgrad gradient (issue #13).

The problem is ADBench's loop GMM data term (`problems.gmm_adbench`) with its loop over points
written with ``numba.prange`` (and, as a ``prange`` loop needs, its work arrays ``xc`` and
``beta`` allocated per point), n = 4·10⁴, d = 10, K = 25. Both gradients come from
``jitgrad.value_and_grad``; the serial one reads ``prange`` as ``range``. Before timing, the
parallel result is checked against the serial one (≤ 1e-12 relative) and against itself at
1 and at every thread count measured (bit for bit). Then, for each thread count, the two run
interleaved round by round (`timing.measure`) with the plain function compiled by
``numba.njit`` and by ``numba.njit(parallel=True)``; the table gives medians, the ratio
parallel / serial, the primal's own ratio (the scaling this machine allows this loop), and
two reference loops' ratio at t threads to 1 thread: `arithmetic_loop` (one dependent chain
per chunk: latency-bound, the scaling any loop could reach) and `multiply_add_loop` (eight
independent chains per chunk: bound by the core's arithmetic throughput, like the GMM's
inner loops; on two vCPUs that share a physical core's units it scales less far). The
machine is shared: read the ratios, not the times.

It also times two serial gradients at once in two Python threads against one alone
(`two_at_once`): half that slowdown is the best parallel / serial ratio this machine allows
this very code at 2 threads.

Options: ``--rounds R`` (default 15), ``--runs K`` (repeat, then the median and range of the
ratios over the runs), ``--threads 1,2`` (thread counts), ``--n N``,
``--layer L``: the threading layer. ``jitgrad`` (the default) leaves the choice to jitgrad
(`backend.numba.compile.choose_threading_layer`: OpenMP with a passive wait policy, or
workqueue), ``workqueue`` and ``omp`` set ``NUMBA_THREADING_LAYER`` (``omp``: GNU OpenMP with
its own default wait policy, which spins: what Numba chooses on this machine). ``OMP_WAIT_POLICY``
and ``GOMP_SPINCOUNT`` in the environment are GNU OpenMP's (``GOMP_SPINCOUNT=3000``: a spin of
60-90 us here, then sleep), printed with the table.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# GNU OpenMP (Numba's omp layer) spin-waits at the end of a parallel loop: with other processes
# on the 2 cores a 2-thread gradient waits for a descheduled thread (the bench GMM at n = 1e3:
# 15 ms against 1 ms; OMP_WAIT_POLICY=passive fixes it). Numba's workqueue layer does not spin.
# The layer is read when Numba loads, before the arguments are parsed: --layer is read here.
LAYER = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--layer=")), "jitgrad")
if LAYER != "jitgrad":
    os.environ["NUMBA_THREADING_LAYER"] = LAYER

import numba
import numpy as np

import jitgrad

from .problems import make_adbench_gmm
from .timing import measure


def gmm_prange(alphas, means, icf, x):
    """`problems.gmm_adbench` with ``numba.prange`` over the points."""
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += math.exp(alphas[k] - amax)
    lse_alphas = amax + math.log(asum)
    sum_qs = np.zeros(K)
    qdiags = np.exp(icf[:, :d])
    for k in range(K):
        for j in range(d):
            sum_qs[k] += icf[k, j]
    slse = 0.0
    for i in numba.prange(n):
        xc = np.zeros(d)
        beta = np.zeros(K)
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - means[k, j]
            sqsum = 0.0
            idx = d
            for r in range(d):
                s = qdiags[k, r] * xc[r]
                for c in range(r):
                    s += icf[k, idx] * xc[c]
                    idx += 1
                sqsum += s * s
            beta[k] = alphas[k] + sum_qs[k] - 0.5 * sqsum
        bmax = beta[0]
        for k in range(1, K):
            bmax = max(bmax, beta[k])
        se = 0.0
        for k in range(K):
            se += math.exp(beta[k] - bmax)
        slse += bmax + math.log(se)
    return -0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas


@numba.njit(parallel=True, nogil=True)
def arithmetic_loop(reps):
    """A reference with nothing to share between threads: 64 chunks of one dependent chain of
    multiply-adds each, no memory traffic, no allocation. Its parallel / serial ratio is the
    best a loop can do on this machine at that thread count."""
    parts = np.zeros(64)
    for c in numba.prange(64):
        s = 0.0
        for r in range(reps):
            s = s * 0.999999 + 1e-3 * r
        parts[c] = s
    return parts.sum()


@numba.njit(parallel=True, nogil=True)
def multiply_add_loop(reps, a, b):
    """A second reference, bound by the core's floating-point throughput rather than by one
    chain's latency: 64 chunks of eight independent multiply-add chains over two arrays that
    stay in L1 (like the GMM's inner loops over d and the triangle of Q). Where two threads
    share a core's arithmetic units (two vCPUs on one physical core's hyperthreads), this
    scales less far than `arithmetic_loop`, and so does any loop of that kind."""
    parts = np.zeros(64)
    for c in numba.prange(64):
        s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
        for r in range(reps):
            for i in range(0, a.shape[0], 8):
                s0 += a[i] * b[i]
                s1 += a[i + 1] * b[i + 1]
                s2 += a[i + 2] * b[i + 2]
                s3 += a[i + 3] * b[i + 3]
                s4 += a[i + 4] * b[i + 4]
                s5 += a[i + 5] * b[i + 5]
                s6 += a[i + 6] * b[i + 6]
                s7 += a[i + 7] * b[i + 7]
        parts[c] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
    return parts.sum()


def _rel(a, b) -> float:
    return max(float(np.max(np.abs(np.asarray(u) - np.asarray(v)))) / max(
        float(np.max(np.abs(np.asarray(v)))), 1e-300) for u, v in zip(a, b))


def _flat(out):
    return [out[0], *out[1]]


def _calls(fn, reps: int, start, took: list) -> None:
    start.wait()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    took.append((time.perf_counter() - t) / reps)


def two_at_once(fn, rounds: int) -> float:
    """The best parallel / serial ratio this machine allows ``fn`` at 2 threads: ``fn`` (a
    ``nogil`` build) called in two Python threads at once, against the same calls in one,
    interleaved round by round, each thread calling it for about 0.1 s; half the median
    slowdown per call. Two vCPUs that share a core's units, or another tenant on the host,
    show here as a slowdown above 1."""
    t = time.perf_counter()
    fn()
    reps = max(1, math.ceil(0.1 / (time.perf_counter() - t)))
    alone, both = [], []
    for _ in range(rounds):
        took: list = []
        _calls(fn, reps, threading.Barrier(1), took)
        alone.append(took[0])
        start, took = threading.Barrier(2), []
        pair = [threading.Thread(target=_calls, args=(fn, reps, start, took)) for _ in range(2)]
        for th in pair:
            th.start()
        for th in pair:
            th.join()
        both.append(max(took))
    return float(np.median(both) / np.median(alone)) / 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.parallel")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--runs", type=int, default=1,
                    help="repeat the measurement and summarise the ratios (they move between "
                         "runs on a shared machine)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--n", type=int, default=40_000)
    ap.add_argument("--layer", choices=("jitgrad", "workqueue", "omp"), default="jitgrad",
                    help="threading layer (given as --layer=L; see the module docstring)")
    opts = ap.parse_args(argv)
    threads = [int(t) for t in opts.threads.split(",")]
    args = make_adbench_gmm(opts.n, 10, 25, seed=0)
    wrt = (0, 1, 2)
    serial = jitgrad.value_and_grad(gmm_prange, wrt=wrt)
    par = jitgrad.value_and_grad(gmm_prange, wrt=wrt, parallel=True)
    want = _flat(serial(*args))
    first = None
    for t in threads + threads[::-1]:
        numba.set_num_threads(t)
        got = _flat(par(*args))
        first = first or got
        assert all(np.array_equal(a, b) for a, b in zip(first, got)), "not repeatable"
    primal = numba.njit(gmm_prange)  # (prange is range without parallel=True)
    primal_par = numba.njit(parallel=True)(gmm_prange)
    assert abs(primal_par(*args) - want[0]) <= 1e-12 * abs(want[0])
    assert abs(primal(*args) - want[0]) <= 1e-12 * abs(want[0])
    rel = _rel(first, want)
    assert rel <= 1e-12, rel
    print(f"GMM data term with prange, n = {opts.n}, d = 10, K = 25; machine: "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; Numba threading "
          f"layer {numba.threading_layer()} (--layer={LAYER}; OMP_WAIT_POLICY="
          f"{os.environ.get('OMP_WAIT_POLICY', 'unset')}, GOMP_SPINCOUNT="
          f"{os.environ.get('GOMP_SPINCOUNT', 'unset')})")
    print(f"parallel vs serial: {rel:.1e} relative (value and gradients); identical at "
          f"{', '.join(map(str, threads))} threads and across runs")
    print()
    print("| threads | serial jitgrad | parallel=True | parallel / serial | Numba primal "
          "parallel / serial | arithmetic loop / 1 thread | multiply-add loop / 1 thread |")
    print("|---|---|---|---|---|---|---|")
    a, b = np.linspace(0.0, 1.0, 512), np.linspace(1.0, 0.0, 512)
    references = {"arithmetic": lambda: arithmetic_loop(200_000),
                  "multiply-add": lambda: multiply_add_loop(400, a, b)}
    for run in references.values():
        run()
    ratios: dict[int, list] = {t: [] for t in threads}
    limits = []
    for _ in range(opts.runs):
        numba.set_num_threads(1)
        alone = {k: v.median for k, v in measure(references, rounds=opts.rounds,
                                                 inner=1).items()}
        for t in threads:
            numba.set_num_threads(t)
            res = measure({"serial": lambda: serial(*args), "parallel": lambda: par(*args),
                           "primal": lambda: primal(*args),
                           "primal parallel": lambda: primal_par(*args), **references},
                          rounds=opts.rounds, inner=1)
            s, p = res["serial"].median, res["parallel"].median
            ratio = res["primal parallel"].median / res["primal"].median
            ratios[t].append((p / s, ratio))
            ceilings = " | ".join(f"{res[k].median / alone[k]:.2f}" for k in references)
            print(f"| {t} | {s * 1e3:.1f} ms | {p * 1e3:.1f} ms | {p / s:.2f} | {ratio:.2f} | "
                  f"{ceilings} |")
        limits.append(two_at_once(lambda: serial(*args), max(3, opts.rounds // 3)))
    print()
    print(f"Two serial gradients at once, in two threads, each against one alone: the best "
          f"parallel / serial at 2 threads this machine allows this code: "
          f"{', '.join(f'{x:.2f}' for x in limits)}.")
    if opts.runs > 1:
        for t in threads:
            grad = sorted(r[0] for r in ratios[t])
            prim = sorted(r[1] for r in ratios[t])
            print(f"Over {opts.runs} runs at {t} threads: parallel / serial median "
                  f"{np.median(grad):.2f} ({grad[0]:.2f}-{grad[-1]:.2f}), Numba primal "
                  f"{np.median(prim):.2f} ({prim[0]:.2f}-{prim[-1]:.2f}).")
    print()
    print("Numba primal parallel / serial: the plain function under numba.njit(parallel=True) "
          "against numba.njit, same rounds: how far this machine lets this loop scale. "
          "Arithmetic loop: `arithmetic_loop` (64 chunks of one dependent chain each) at this "
          "thread count against 1 thread: how far it lets a latency-bound loop scale. "
          "Multiply-add loop: `multiply_add_loop` (64 chunks of eight independent chains over "
          "arrays in L1) likewise: how far it lets a loop bound by the core's arithmetic "
          "throughput scale.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
