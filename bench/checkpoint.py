"""Checkpointed recurrences under a memory cap, against the taped gradient and the primal, in
the same run (issue #12).

``python -m bench.checkpoint [--rounds 11] [--n 1000000] [--cap 1048576]``

The problem is a scalar tanh recurrence of ``n`` steps (`problems.rnn_loss`, whose carried ``h``
makes every iteration depend on the one before: it cannot be recomputed per iteration, only
taped or checkpointed). For each variant the gradient is first checked against the taped one
(1e-12), then the Numba primal, the taped gradient and the capped gradient are timed round by
round, interleaved (`bench.timing.measure`; medians). Memory is the tracemalloc peak of one call
(tracemalloc sees Numba's allocations) minus the gradient array itself, which any gradient
must return: what remains is the tape, the checkpoints and the work arrays.
"""

from __future__ import annotations

import argparse
import functools
import tracemalloc

import numpy as np

import jitgrad
from bench import handwritten, problems
from bench.timing import measure


def _beyond_result(fn, *args) -> int:
    fn(*args)
    tracemalloc.start()
    try:
        _, grads = fn(*args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - sum(np.asarray(g).nbytes for g in grads)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--cap", type=int, default=1 << 20, help="bytes")
    opts = ap.parse_args(argv)
    w, x = problems.make_rnn(opts.n)
    taped = jitgrad.value_and_grad(problems.rnn_loss, wrt=(0, 1))
    capped = jitgrad.value_and_grad(problems.rnn_loss, wrt=(0, 1), memory_cap=opts.cap)
    (v0, g0), (v1, g1) = taped(w, x), capped(w, x)
    if abs(v0 - v1) > 1e-12 * abs(v0) or any(
            not np.allclose(a, b, rtol=1e-12, atol=1e-12) for a, b in zip(g0, g1)):
        raise SystemExit("the checkpointed gradient differs from the taped one")
    primal = handwritten.rnn_primal
    t = measure({"primal": functools.partial(primal, w, x),
                 "taped": functools.partial(taped, w, x),
                 "capped": functools.partial(capped, w, x)}, rounds=opts.rounds)
    p = t["primal"].median
    print(f"tanh recurrence (problems.rnn_loss), n = {opts.n:,}; memory cap {opts.cap:,} bytes; "
          f"median of {opts.rounds} interleaved rounds")
    print()
    print("| variant | time | / Numba primal | memory beyond the gradient |")
    print("|---|---|---|---|")
    print(f"| Numba primal | {p * 1e3:.2f} ms | 1.00× | |")
    for name, fn in (("taped", taped), ("capped", capped)):
        m = t[name].median
        print(f"| jitgrad, {name} | {m * 1e3:.2f} ms | {m / p:.2f}× | "
              f"{_beyond_result(fn, w, x) / 2**20:.2f} MiB |", flush=True)


if __name__ == "__main__":
    main()
