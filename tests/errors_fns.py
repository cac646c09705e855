"""Functions whose generated gradient code fails at run time (for tests/test_errors.py)."""

import numpy as np


def mismatched(W, x):
    h = np.tanh(x @ W)  # marker: matmul
    return np.sum(h)
