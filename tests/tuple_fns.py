"""Functions taking tuples and lists of floats and arrays, as Numba takes them (issue #11):
unpacking, ``p[0]``, ``len(p)``, loops over the items, helpers that take the tuple."""

import numpy as np


def tuple_params_loss(params, x, y):
    w, b = params
    r = x @ w + b - y
    return np.mean(r * r)


def normal_nll(theta, x):
    mu, log_sigma = theta
    sigma = np.exp(log_sigma)
    z = (x - mu) / sigma
    return np.sum(0.5 * z * z) + x.shape[0] * log_sigma


def indexed_items(p, x):
    s = p[0] * np.sum(x) + p[-1] * len(p)
    for v in p:
        s += v * v
    return s


def list_of_layers(layers, x):
    h = x
    for w in layers:
        h = np.tanh(h @ w)
    return np.sum(h * h)


def _affine(p, x):
    w, b = p
    return x @ w + b


def tuple_to_helper(p, x):
    z = _affine(p, x)
    return np.sum(np.logaddexp(0.0, z))


def bounds_not_in_wrt(x, bounds):
    lo, hi = bounds
    return np.sum(np.clip(x, lo, hi) ** 2)


def mixed_items(p, x):
    """A tuple holding an integer count, a float and an array."""
    n, scale, w = p
    s = 0.0
    for t in range(n):
        s += scale * w[t] * x[t]
    return s


def branch_on_item(p, x):
    a, b = p
    if a > b:
        return np.sum(a * x)
    return np.sum(b * x * x)


def writes_into_item(p, x):
    a = p[0]
    a[0] = 2.0 * x  # works on a copy: the caller's array is unchanged
    return np.sum(a * a) + np.sum(p[1])


def rnn_params(params, xs):
    wx, wh, b = params
    h = np.zeros(wh.shape[0])
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(wx * xs[t] + wh @ h + b)
        loss += np.sum(h)
    return loss
