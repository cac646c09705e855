"""An SGD loop written in ``@numba.njit`` code, calling jitgrad's gradient (issue #14).

``python -m bench.njit_loop [--steps 10000] [--rounds 7]``

``jitgrad.grad(f, wrt=...).njit(*example_args)`` gives the Numba dispatcher of the compiled
gradient; an ``@njit`` loop calls it ``steps`` times without returning to Python. The same
loop (one factory, so the same code) calls the hand-written Numba gradient of
`bench.handwritten` instead. Both loops are checked to end at the same parameters (1e-8
relative) before anything is timed; the two are timed round by round, interleaved
(`bench.timing.measure`), and the table gives the median of each and their ratio
(target: jitgrad ≤ 1.1× the hand-written loop).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import functools

import numba
import numpy as np

import jitgrad
from bench import handwritten, problems
from bench.timing import measure


def make_two_layer_sgd(grad):
    @numba.njit
    def sgd(W1, b1, W2, b2, inputs, y_true, lr, steps):
        W1, b1, W2, b2 = W1.copy(), b1.copy(), W2.copy(), b2.copy()
        for _ in range(steps):
            dW1, db1, dW2, db2 = grad(W1, b1, W2, b2, inputs, y_true)
            W1 -= lr * dW1
            b1 -= lr * db1
            W2 -= lr * dW2
            b2 -= lr * db2
        return W1, b1, W2, b2
    return sgd


def make_rnn_sgd(grad):
    @numba.njit
    def sgd(w, x, lr, steps):
        for _ in range(steps):
            dw = grad(w, x)[0]
            w -= lr * dw
        return w
    return sgd


def cases(steps):
    """(name, jitgrad loop, hand-written loop), each a zero-argument callable."""
    args = problems.make_two_layer(*problems.SMALL_TWO_LAYER)
    jg = jitgrad.grad(problems.two_layer_loss, wrt=(0, 1, 2, 3)).njit(*args)
    yield ("two_layer small (16, 8→16→4)",
           functools.partial(make_two_layer_sgd(jg), *args, 0.05, steps),
           functools.partial(make_two_layer_sgd(handwritten.two_layer_grad), *args, 0.05, steps))
    w, x = problems.make_rnn(100)
    jg = jitgrad.grad(problems.rnn_loss, wrt=(0, 1)).njit(w, x)
    yield ("scalar RNN, n = 100",
           functools.partial(make_rnn_sgd(jg), w, x, 1e-3, steps),
           functools.partial(make_rnn_sgd(handwritten.rnn_grad), w, x, 1e-3, steps))


def _close(a, b) -> bool:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return all(np.allclose(u, v, rtol=1e-8, atol=1e-12) for u, v in zip(a, b))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=7)
    opts = ap.parse_args(argv)
    print(f"@njit SGD loop, {opts.steps} gradient calls per loop; median of {opts.rounds} rounds")
    print()
    print("| case | jitgrad `.njit()` loop | hand-written Numba loop | ratio |")
    print("|---|---|---|---|")
    for name, ours, theirs in cases(opts.steps):
        if not _close(ours(), theirs()):
            raise SystemExit(f"{name}: the two loops end at different parameters")
        t = measure({"jitgrad": ours, "hand-written": theirs}, rounds=opts.rounds, inner=1)
        a, b = t["jitgrad"].median, t["hand-written"].median
        print(f"| {name} | {a * 1e3:.2f} ms | {b * 1e3:.2f} ms | {a / b:.2f}× |")


if __name__ == "__main__":
    main()
