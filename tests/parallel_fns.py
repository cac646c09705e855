"""``numba.prange`` loops for `jitgrad.transforms.parallel`'s table: a per-row loss, a pairwise energy, a
row-wise logsumexp with a work array per row, the GMM data term, work arrays allocated once
before the loop (one per chunk), and loops that must stay serial (a value carried across
iterations, an array that keeps the previous iteration's values, a work array read after the
loop)."""

import math

import numba
import numpy as np


def per_row_loss(x, w, y):  # writes out[i]; the adjoint reads and zeroes _b_out[i]
    n = x.shape[0]
    out = np.zeros(n)
    for i in numba.prange(n):
        s = 0.0
        for j in range(x.shape[1]):
            s += x[i, j] * w[j]
        out[i] = (math.tanh(s) - y[i]) ** 2
    return np.sum(out)


def pairwise_energy(p, eps):  # every iteration adds into the whole of _b_p, and into _b_eps
    n = p.shape[0]
    e = 0.0
    for i in numba.prange(n):
        for j in range(n):
            if i != j:
                r2 = (p[i, 0] - p[j, 0]) ** 2 + (p[i, 1] - p[j, 1]) ** 2 + eps
                e += math.exp(-r2) / r2
    return e


def rowwise_logsumexp(x, w):  # a work array per row, taped within the iteration
    n, d = x.shape
    total = 0.0
    for i in numba.prange(n):
        z = np.zeros(d)
        for j in range(d):
            z[j] = x[i, j] * w[j]
        m = z[0]
        for j in range(1, d):
            m = max(m, z[j])
        s = 0.0
        for j in range(d):
            s += math.exp(z[j] - m)
        total += m + math.log(s)
    return total


def gmm_data_term(alphas, means, icf, x):  # bench.parallel's problem, small
    n, d = x.shape
    K = alphas.shape[0]
    qdiags = np.exp(icf[:, :d])
    slse = 0.0
    for i in numba.prange(n):
        beta = np.zeros(K)
        xc = np.zeros(d)
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
            beta[k] = alphas[k] + np.sum(icf[k, :d]) - 0.5 * sqsum
        bmax = np.max(beta)
        se = 0.0
        for k in range(K):
            se += math.exp(beta[k] - bmax)
        slse += bmax + math.log(se)
    return slse


def carried_state(x, a):  # h crosses iterations: runs serially, says so
    h = 0.0
    total = 0.0
    for i in numba.prange(x.shape[0]):
        h = math.tanh(a * h + x[i])
        total += h
    return total


def shared_work_array(x, a):  # z: one work array, filled before read: one per chunk
    n, d = x.shape
    z = np.zeros(d)
    total = 0.0
    for i in numba.prange(n):
        for j in range(d):
            z[j] = x[i, j] * a
        for j in range(d):
            total += z[j] * z[j]
    return total


def rows_written_in_inner_loop(x, w):  # out[i, j] through an inner loop: disjoint rows
    n, d = x.shape
    out = np.zeros((n, d))
    for i in numba.prange(n):
        for j in range(d):
            out[i, j] = math.log1p(math.exp(x[i, j] * w[j]))
    return np.sum(out * out)


def gmm_work_arrays_before_loop(alphas, means, icf, x):  # ADBench's form: xc, beta allocated
    n, d = x.shape  # once, before the loop; every iteration fills them before reading them
    K = alphas.shape[0]
    xc = np.zeros(d)
    beta = np.zeros(K)
    slse = 0.0
    for i in numba.prange(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - means[k, j]
            sqsum = 0.0
            idx = d
            for r in range(d):
                s = math.exp(icf[k, r]) * xc[r]
                for c in range(r):
                    s += icf[k, idx] * xc[c]
                    idx += 1
                sqsum += s * s
            beta[k] = alphas[k] - 0.5 * sqsum
        bmax = np.max(beta)
        se = 0.0
        for k in range(K):
            se += math.exp(beta[k] - bmax)
        slse += bmax + math.log(se)
    return slse


def running_array(x, a):  # z[j] keeps the previous iteration's value: runs serially
    n, d = x.shape
    z = np.zeros(d)
    total = 0.0
    for i in numba.prange(n):
        for j in range(d):
            z[j] = a * z[j] + x[i, j]
            total += z[j] * z[j]
    return total


def work_array_read_after(x, a):  # like shared_work_array, but z's last row is read after
    n, d = x.shape  # the loop: runs serially
    z = np.zeros(d)
    total = 0.0
    for i in numba.prange(n):
        for j in range(d):
            z[j] = x[i, j] * a
        for j in range(d):
            total += z[j] * z[j]
    return total + z[0]


def rowwise_logsumexp_range(x, w):  # rowwise_logsumexp with range: found independent, runs
    n, d = x.shape  # in parallel under parallel=True, and .source() says so
    total = 0.0
    for i in range(n):
        z = np.zeros(d)
        for j in range(d):
            z[j] = x[i, j] * w[j]
        m = z[0]
        for j in range(1, d):
            m = max(m, z[j])
        s = 0.0
        for j in range(d):
            s += math.exp(z[j] - m)
        total += m + math.log(s)
    return total


def carried_state_range(x, a):  # carried_state with range: stays serial, without a note
    h = 0.0
    total = 0.0
    for i in range(x.shape[0]):
        h = math.tanh(a * h + x[i])
        total += h
    return total


def shared_scratch(x, w):  # recomputed in reverse, then kept serial: `tmp` is shared
    n, d = x.shape
    tmp = np.zeros(d)
    total = 0.0
    for i in numba.prange(n):
        for j in range(d):
            tmp[j] = math.tanh(x[i, j] * w[j])
        s = 0.0
        for j in range(d):
            s += tmp[j] * tmp[j] * w[j]
        total += s
    return total + np.sum(tmp)
