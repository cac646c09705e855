"""Hessian-vector products against gradients, in the same run (issue #14).

``python -m bench.hvp [--rounds 15]``

`jitgrad.hvp(f, wrt=k)` is forward over reverse: the tangent transform of the gradient's own
kernels, compiled as one Numba function. Forward over reverse costs a small constant times a
gradient (target: ≤ 4×). For each case the HVP is first checked against central differences
of jitgrad's gradient (1e-5 relative, in norm), then both are timed round by round, interleaved
(`bench.timing.measure`) with the value and gradient (what an optimiser calls); the table
gives the medians and the ratios. Cases: the seed
two-layer loss (HVP with respect to ``W1``; small and MNIST sizes) and a loop Rosenbrock.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import functools

import numpy as np

import jitgrad
from bench import problems
from bench.timing import measure


def rosenbrock_loop(x):
    """The extended Rosenbrock function, written as a loop (as a Numba user writes it)."""
    total = 0.0
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        total += 100.0 * a * a + b * b
    return total


def _fd_hvp(grad, args, k, v, eps=1e-8):
    """Central differences of the gradient along ``v`` (a small step: the ReLU's kinks)."""
    up, down = list(args), list(args)
    up[k] = args[k] + eps * v
    down[k] = args[k] - eps * v
    return (grad(*up) - grad(*down)) / (2 * eps)


def cases():
    """(name, function, arguments, wrt) for each case."""
    for size, label in ((problems.SMALL_TWO_LAYER, "small"), (problems.MNIST_TWO_LAYER, "MNIST")):
        args = problems.make_two_layer(*size)
        yield (f"two_layer {label} {size}, wrt W1", problems.two_layer_loss, args, 0)
    rng = np.random.default_rng(0)
    for n in (1_000, 100_000):
        yield (f"loop Rosenbrock, n = {n:,}", rosenbrock_loop, (rng.uniform(-1.5, 1.5, n),), 0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    opts = ap.parse_args(argv)
    print(f"HVP (forward over reverse) / gradient, median of {opts.rounds} interleaved rounds")
    print()
    print("| case | gradient | value and gradient | HVP | HVP / gradient | HVP / value and "
          "gradient |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for name, fn, args, k in cases():
        grad = jitgrad.grad(fn, wrt=k)
        hvp = jitgrad.hvp(fn, wrt=k)
        v = rng.standard_normal(np.shape(args[k]))
        got, want = hvp(*args, v), _fd_hvp(grad, args, k, v)
        if np.linalg.norm(got - want) > 1e-5 * np.linalg.norm(want):
            raise SystemExit(f"{name}: the HVP disagrees with differences of the gradient")
        vg = jitgrad.value_and_grad(fn, wrt=k)
        t = measure({"gradient": functools.partial(grad, *args),
                     "value_and_grad": functools.partial(vg, *args),
                     "hvp": functools.partial(hvp, *args, v)}, rounds=opts.rounds)
        a, b, c = (t[n].median for n in ("gradient", "value_and_grad", "hvp"))
        print(f"| {name} | {a * 1e3:.3f} ms | {b * 1e3:.3f} ms | {c * 1e3:.3f} ms | "
              f"{c / a:.2f}× | {c / b:.2f}× |", flush=True)


if __name__ == "__main__":
    main()
