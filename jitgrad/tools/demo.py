"""``python -m jitgrad demo``: see it work.

The first sanity check (d/dx x² at 3 is 6), the canonical two-layer loss with its generated code
and graph, then a short training run of that network on a synthetic three-class problem made
here, with the time per gradient step against the interpreted tape.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from jitgrad import api, pipeline, tape


def square(x):
    return np.square(x)


def loss(W1, b1, W2, b2, inputs, y_true):
    h = np.maximum(inputs @ W1 + b1, 0.0)
    z = h @ W2 + b2
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return -np.mean(np.sum(y_true * np.log(p), axis=1))


def predict(W1, b1, W2, b2, inputs):
    return np.argmax(np.maximum(inputs @ W1 + b1, 0.0) @ W2 + b2, axis=1)


def blobs(n_per_class=200, n_in=8, n_classes=3, seed=0):
    """Gaussian blobs around random centres: inputs and one-hot labels, shuffled."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=0.8, size=(n_classes, n_in))
    x = np.concatenate([c + rng.normal(size=(n_per_class, n_in)) for c in centres])
    labels = np.repeat(np.arange(n_classes), n_per_class)
    order = rng.permutation(len(labels))
    return x[order], np.eye(n_classes)[labels[order]]


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = width * done // total
    return "[" + "#" * filled + "." * (width - filled) + f"] {done}/{total}"


def main(epochs: int = 5, batch: int = 32) -> None:
    d_square = api.grad(square)
    print(f"d/dx x**2 at x = 3.0: {d_square(3.0)}")

    x, y = blobs()
    n_in, n_hidden, n_out = x.shape[1], 32, y.shape[1]
    rng = np.random.default_rng(1)
    params = [rng.normal(scale=1 / np.sqrt(n_in), size=(n_in, n_hidden)), np.zeros(n_hidden),
              rng.normal(scale=1 / np.sqrt(n_hidden), size=(n_hidden, n_out)), np.zeros(n_out)]

    step = api.value_and_grad(loss, wrt=(0, 1, 2, 3))
    start = time.perf_counter()
    step(*params, x[:batch], y[:batch])
    print(f"\nseed loss: first gradient call (parse, transform, compile or load) "
          f"{time.perf_counter() - start:.2f} s")
    worst = api.check_grad(loss, *params, x[:batch], y[:batch], wrt=(0, 1, 2, 3))
    print(f"finite-difference check: worst relative error {worst:.1e}")
    print("\nits graph, one typed operation per line:\n")
    print(step.ir())
    print("\nthe generated adjoint pass (step.source() has the forward pass before it):\n")
    print(step.source("adjoint"))
    dot = step.graph()
    print(f"the graph as DOT text: {dot.count('[label=')} nodes, {dot.count('->')} edges "
          "(step.graph(path='loss.svg') draws it with Graphviz)\n")

    lr, n = 0.1, len(y)
    steps = n // batch
    for epoch in range(1, epochs + 1):
        total = 0.0
        for k in range(steps):
            sl = slice(k * batch, (k + 1) * batch)
            value, grads = step(*params, x[sl], y[sl])
            for p, g in zip(params, grads):
                p -= lr * g
            total += value
            sys.stdout.write(f"\repoch {epoch} {_bar(k + 1, steps)}")
            sys.stdout.flush()
        accuracy = np.mean(predict(*params, x) == np.argmax(y, axis=1))
        print(f"  loss {total / steps:.4f}  accuracy {accuracy:.1%}")

    tape_step = tape.value_and_grad(loss, wrt=(0, 1, 2, 3))
    timings = {}
    for name, fn in (("jitgrad", step), ("jitgrad.tape", tape_step)):
        fn(*params, x[:batch], y[:batch])
        reps = 2000 if name == "jitgrad" else 100
        start = time.perf_counter()
        for _ in range(reps):
            fn(*params, x[:batch], y[:batch])
        timings[name] = (time.perf_counter() - start) / reps
    print(f"\ntime per gradient step (batch {batch}): jitgrad {timings['jitgrad'] * 1e6:.1f} us, "
          f"interpreted tape {timings['jitgrad.tape'] * 1e6:.0f} us "
          f"({timings['jitgrad.tape'] / timings['jitgrad']:.0f}x)")

    pipeline.compile_bytecode()  # jitgrad's own modules, where PYTHONDONTWRITEBYTECODE is set
    print("\njitgrad compiles a runtime helper the first time a gradient calls it, and keeps "
          "it in Numba's disk cache; `python -m jitgrad warm` compiles the common ones ahead "
          "of time, if you would rather wait once than a little at each new gradient.")


if __name__ == "__main__":
    main()
