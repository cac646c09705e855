"""Functions for tests/test_forward.py: forward mode, Hessians and their refusals."""

import numpy as np

import jitgrad


def rosenbrock_loop(x):
    """The extended Rosenbrock function as a loop, with a temporary array written in place."""
    terms = np.zeros(x.shape[0] - 1)
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        terms[i] = 100.0 * a * a + (1.0 - x[i]) ** 2
    return np.sum(terms)


def rosenbrock_hessian(x):
    """The analytic Hessian of the extended Rosenbrock function."""
    n = x.shape[0]
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        H[i, i + 1] += -400.0 * x[i]
        H[i + 1, i] += -400.0 * x[i]
        H[i + 1, i + 1] += 200.0
    return H


def two_layer(W1, b1, W2, b2, inputs, y_true):
    """The seed loss (examples/seed_loss.py)."""
    h = np.maximum(inputs @ W1 + b1, 0.0)
    z = h @ W2 + b2
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return -np.mean(np.sum(y_true * np.log(p), axis=1))


def trajectory(k, x0, n):
    """An array-valued loop with a branch and in-place writes: (n,) positions."""
    out = np.zeros(n)
    x, v = x0, 0.0
    for i in range(n):
        a = -k * x
        if x > 0.5:
            a = a - 0.1 * v
        v = v + 0.1 * a
        x = x + 0.1 * v
        out[i] = x
    return out


@jitgrad.custom_vjp
def clip_ste(x):
    return min(max(x, -1.0), 1.0)


def clip_ste_fwd(x):
    return min(max(x, -1.0), 1.0), ()


def clip_ste_bwd(res, g):
    return (g,)


clip_ste.defvjp(clip_ste_fwd, clip_ste_bwd)


def uses_custom_rule(x):
    return clip_ste(x) * x


def product_loss(x):
    return np.prod(x) + np.sum(x)


def with_count(x, n):
    total = 0.0
    for i in range(n):
        total = total + np.sin(x * i)
    return total


def writes_argument(x, w):
    """Writes into its argument ``x`` (jitgrad works on a copy)."""
    x *= 2.0
    return np.sum(np.sin(x) * w)


def cumprod_loss(x):
    return np.sum(np.cumprod(x))
