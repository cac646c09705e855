"""Versions of two problems that ``jitgrad.tape`` can record.

The tape records NumPy operations only: by design it refuses ``float()`` of a tensor that
carries a gradient, which ``math.tanh(t)`` / ``math.exp(t)`` do, and writing a tensor into a
plain NumPy array (``lp = np.empty(K); lp[k] = s``). ``rnn_loss`` and ``gmm_nll`` of
``bench.problems`` do both, so the benchmark runs the tape on these copies instead, changed
only where the tape's error message says: ``math.tanh/exp/log`` of a value that depends on
the parameters becomes ``np.tanh/exp/log``, and ``lp`` is allocated from a tensor
(``np.zeros_like(alphas)``). They compute the same numbers (to rounding) with the same
arguments. The other problems run on the tape as written.
"""

import math

import numpy as np


def rnn_loss(w, x):
    h = 0.0
    loss = 0.0
    for t in range(x.shape[0]):
        h = np.tanh(w * h + x[t])
        loss += h * h
    return loss


def gmm_nll(alphas, means, log_prec, x):
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]

    amax = alphas[0]
    for k in range(1, K):
        if alphas[k] > amax:  # noqa: PLR1730 (kept as a branch, as in the problem)
            amax = alphas[k]
    asum = 0.0
    for k in range(K):
        asum += np.exp(alphas[k] - amax)
    log_norm = amax + np.log(asum)
    const = 0.5 * d * math.log(2.0 * math.pi)

    prec = np.exp(log_prec)
    lp = np.zeros_like(alphas)
    total = 0.0
    for i in range(n):
        lmax = -math.inf
        for k in range(K):
            s = alphas[k]
            for j in range(d):
                r = prec[k, j] * (x[i, j] - means[k, j])
                s += log_prec[k, j] - 0.5 * r * r
            lp[k] = s
            if s > lmax:  # noqa: PLR1730
                lmax = s
        se = 0.0
        for k in range(K):
            se += np.exp(lp[k] - lmax)
        total += lmax + np.log(se)
    return n * (log_norm + const) - total


# problem name -> (variant, what was changed), for the report
VARIANTS = {
    "rnn": (rnn_loss, "tape variant: np.tanh for math.tanh"),
    "gmm": (gmm_nll, "tape variant: np.exp/np.log for math.exp/log, lp = np.zeros_like(alphas)"),
}
