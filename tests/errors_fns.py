"""Functions for tests/test_errors.py: generated gradient code that fails at run time, refusals
read through a traceback, and functions that print."""

import numpy as np


def mismatched(W, x):
    h = np.tanh(x @ W)  # marker: matmul
    return np.sum(h)


def masked_sum(x):
    return np.sum(x[x[:, None] > 0.0])  # marker: mask (a mask of another rank: refused)


def with_try(x):
    try:
        return 1.0 / float(x)  # marker: try (a call that is not NumPy's may raise: refused)
    except (ValueError, ZeroDivisionError):
        return x


# ----------------------------------------------------------------------------- print
# Accepted: print(...) is left out of the gradient (its arguments are not evaluated).


def printed_loss(W, x):
    print("W is", W, f"its sum {np.sum(W):.3f}", sep=" | ")
    h = np.tanh(x @ W)
    total = 0.0
    for i in range(h.shape[0]):
        if h[i, 0] > 0.0:
            print("row", i, "positive:", h[i].sum(), np.linalg.norm(h[i]), float(h[i, 0]))
        total += np.sum(h[i] * h[i])
    return total + printing_helper(W)


def printing_helper(W):
    print(f"helper sees {W.shape}")
    return np.sum(W * W)


def unprinted_loss(W, x):
    h = np.tanh(x @ W)
    total = 0.0
    for i in range(h.shape[0]):
        total += np.sum(h[i] * h[i])
    return total + np.sum(W * W)
