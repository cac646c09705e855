"""Run in a fresh process by tests/test_threading_layer.py: make a parallel gradient, call
numba.set_num_threads (which launches Numba's threads), run it, print the layer."""

import os

import numba
import numpy as np

import jitgrad


def squares(x):
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += np.sin(x[i]) ** 2
    return s


g = jitgrad.grad(squares, parallel=True)
numba.set_num_threads(2)
x = np.linspace(0.0, 1.0, 257)
assert np.allclose(g(x), np.sin(2 * x), rtol=1e-12)
print(numba.threading_layer(), os.environ.get("OMP_WAIT_POLICY", "unset"))
