"""A model file for the command-line tests."""

import numpy as np


def loss(W, b, x):
    return np.sum(np.tanh(x @ W + b) ** 2)


def masked(x):
    return np.sum(x[x[:, None] > 0.0])  # marker: refused (a mask of another rank)


def scaled(x, n):
    return np.sum(x) * n
