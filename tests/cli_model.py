"""A model file for the command-line tests."""

import numpy as np


def loss(W, b, x):
    return np.sum(np.tanh(x @ W + b) ** 2)
