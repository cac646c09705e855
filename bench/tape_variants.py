"""Versions of three problems that ``jitgrad.tape`` can record.

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


def gmm_adbench(alphas, means, icf, x):
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += np.exp(alphas[k] - amax)
    lse_alphas = amax + np.log(asum)
    sum_qs = np.zeros_like(alphas)
    qdiags = np.exp(icf[:, :d])
    for k in range(K):
        for j in range(d):
            sum_qs[k] += icf[k, j]
    xc = np.zeros_like(means[0])
    beta = np.zeros_like(alphas)
    slse = 0.0
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - means[k, j]
            sqsum = 0.0
            idx = d
            for r in range(d):
                s = qdiags[k, r] * xc[r]
                for c in range(r):
                    s += icf[k, idx] * xc[c]
                    idx += 1
                sqsum += s * s
            beta[k] = alphas[k] + sum_qs[k] - 0.5 * sqsum
        bmax = beta[0]
        for k in range(1, K):
            bmax = max(bmax, beta[k])
        se = 0.0
        for k in range(K):
            se += np.exp(beta[k] - bmax)
        slse += bmax + np.log(se)
    return -0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas


def gmm_adbench_cols(alphas, means, icf, x):
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += np.exp(alphas[k] - amax)
    lse_alphas = amax + np.log(asum)
    sum_qs = np.zeros_like(alphas)
    qdiags = np.exp(icf[:, :d])
    for k in range(K):
        for j in range(d):
            sum_qs[k] += icf[k, j]
    xc = np.zeros_like(means[0])
    qxc = np.zeros_like(means[0])
    beta = np.zeros_like(alphas)
    slse = 0.0
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - means[k, j]
            for j in range(d):
                qxc[j] = qdiags[k, j] * xc[j]
            idx = d
            for c in range(d):
                for r in range(c + 1, d):
                    qxc[r] += icf[k, idx] * xc[c]
                    idx += 1
            sqsum = 0.0
            for j in range(d):
                sqsum += qxc[j] * qxc[j]
            beta[k] = alphas[k] + sum_qs[k] - 0.5 * sqsum
        bmax = beta[0]
        for k in range(1, K):
            bmax = max(bmax, beta[k])
        se = 0.0
        for k in range(K):
            se += np.exp(beta[k] - bmax)
        slse += bmax + np.log(se)
    return -0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas


# problem name -> (variant, what was changed), for the report
VARIANTS = {
    "rnn": (rnn_loss, "tape variant: np.tanh for math.tanh"),
    "gmm": (gmm_nll, "tape variant: np.exp/np.log for math.exp/log, lp = np.zeros_like(alphas)"),
    "gmm_adbench": (gmm_adbench, ("tape variant: np.exp/np.log for math.exp/log, work arrays "
                                  "allocated with np.zeros_like")),
    "gmm_adbench_cols": (gmm_adbench_cols, ("tape variant: np.exp/np.log for math.exp/log, "
                                            "work arrays allocated with np.zeros_like")),
}
