"""The first sanity check and the canonical example, end to end.

Run:  python examples/seed_loss.py

1. d/dx square(x) at 3.0 is 6.0.
2. The two-layer network loss  loss(y_true, softmax(relu(inputs @ W1 + b1) @ W2 + b2)):
   its gradients, a finite-difference check, and the generated forward/adjoint source.
"""

import time

import numpy as np

import jitgrad as jg


@jg.grad
def square(x):
    return np.square(x)


def loss(W1, b1, W2, b2, inputs, y_true):
    h = np.maximum(inputs @ W1 + b1, 0.0)
    z = h @ W2 + b2
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return -np.mean(np.sum(y_true * np.log(p), axis=1))


def main():
    print("d/dx square(x) at 3.0 =", square(3.0))
    value, slope = jg.value_and_grad(square)(3.0)  # (square's undecorated body is read)
    print("value_and_grad(square)(3.0) =", (value, slope))

    rng = np.random.default_rng(0)
    batch, n_in, n_hidden, n_out = 16, 8, 16, 4
    W1 = rng.normal(scale=0.5, size=(n_in, n_hidden))
    b1 = rng.normal(scale=0.1, size=n_hidden)
    W2 = rng.normal(scale=0.5, size=(n_hidden, n_out))
    b2 = rng.normal(scale=0.1, size=n_out)
    x = rng.normal(size=(batch, n_in))
    y = np.eye(n_out)[rng.integers(0, n_out, batch)]

    grad_loss = jg.grad(loss, wrt=("W1", "b1", "W2", "b2"))
    start = time.perf_counter()
    dW1, db1, dW2, db2 = grad_loss(W1, b1, W2, b2, x, y)
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(1000):
        grad_loss(W1, b1, W2, b2, x, y)
    per_call = (time.perf_counter() - start) / 1000
    print(f"\nloss = {loss(W1, b1, W2, b2, x, y):.6f}")
    print(f"first call (parse, transform, compile or load from the disk cache): {first:.2f} s")
    print(f"later calls: {per_call * 1e6:.1f} us each")
    for name, g in zip(("dW1", "db1", "dW2", "db2"), (dW1, db1, dW2, db2)):
        print(f"{name}: shape {g.shape}, norm {np.linalg.norm(g):.6f}")

    worst = jg.check_grad(loss, W1, b1, W2, b2, x, y, wrt=(0, 1, 2, 3))
    print(f"finite-difference check passed (worst relative error {worst:.1e})")

    print("\nThe generated code:\n")
    print(grad_loss.source())


if __name__ == "__main__":
    main()
