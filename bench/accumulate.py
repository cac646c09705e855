"""``python -m bench.accumulate``: gradients of loops that accumulate into an array element.

The loops Numba users write for matrix-vector and matrix products and convolutions,
``y[i] += A[i, j] * x[j]`` in a loop over ``j`` (the test corpus's `matvec_loops`,
`matmul_loops`, `conv1d`, and ADBench's ``Q x`` by columns, `problems.gmm_adbench_cols`). Each
jitgrad gradient is checked against central differences of the plain function on a few
entries, then timed interleaved with ``numba.njit`` of the plain function (`timing.measure`);
the table gives the gradient's median over the primal's, measured in the same run.

Three changes of 2026-12-03 are what these loops measure: an increment's adjoint leaves its
slot (`transforms.reverse._increments`), a fixed element's adjoint sums in a scalar
(`transforms.optimise.sums_in_registers`), and an index name read in ``y[i] += ...`` is not
carried by the inner loop (`frontend.build_ast.assigned_names`; it used to be pushed on a tape
every inner iteration). Options: ``--rounds R`` (default 21).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

import numba
import numpy as np

import jitgrad
from bench import problems, timing

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests"))
import corpus_fns  # the test corpus: functions as users write them


def cases():
    """(name, function, arguments, wrt)."""
    rng = np.random.default_rng(0)
    yield ("matvec_loops 300 x 300", corpus_fns.matvec_loops,
           (rng.normal(size=(300, 300)), rng.normal(size=300)), (0, 1))
    yield ("matmul_loops 80 x 80 x 80", corpus_fns.matmul_loops,
           (rng.normal(size=(80, 80)), rng.normal(size=(80, 80))), (0, 1))
    yield ("conv1d n = 20000, k = 16", corpus_fns.conv1d,
           (rng.normal(size=20_000), rng.normal(size=16)), (0, 1))
    yield ("ADBench GMM by columns, n = 2000", problems.gmm_adbench_cols,
           problems.make_adbench_gmm(2_000, 10, 25), (0, 1, 2))


def _check(fn, args, wrt, grads) -> float:
    """The worst relative error of a few entries of each gradient against central differences."""
    worst = 0.0
    rng = np.random.default_rng(1)
    for k, g in zip(wrt, grads):
        for flat in rng.choice(args[k].size, size=min(3, args[k].size), replace=False):
            pos = np.unravel_index(flat, args[k].shape)
            h = 1e-6 * max(1.0, abs(args[k][pos]))
            vals = []
            for sign in (1, -1):
                moved = [a.copy() for a in args]
                moved[k][pos] += sign * h
                vals.append(fn(*moved))
            fd = (vals[0] - vals[1]) / (2 * h)
            worst = max(worst, abs(g[pos] - fd) / max(1.0, abs(fd)))
    return worst


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=21)
    opts = ap.parse_args(argv)
    print(f"gradient / Numba primal, medians of {opts.rounds} interleaved rounds")
    print(f"{'case':34s} {'primal':>10s} {'gradient':>10s} {'ratio':>6s}  check")
    for name, fn, args, wrt in cases():
        grad = jitgrad.grad(fn, wrt=wrt)
        primal = numba.njit(fn)
        grads = grad(*args)
        err = _check(numba.njit(fn), args, wrt, grads)
        assert err < 1e-4, f"{name}: gradient off by {err:.1e} against central differences"
        t = timing.measure({"primal": functools.partial(primal, *args),
                            "grad": functools.partial(grad, *args)}, rounds=opts.rounds)
        p, g = t["primal"].median, t["grad"].median
        print(f"{name:34s} {p * 1e6:8.0f}µs {g * 1e6:8.0f}µs {g / p:6.2f}  fd {err:.0e}")


if __name__ == "__main__":
    main()
