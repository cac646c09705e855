"""Loops whose iterations are independent (recomputed in reverse) and loops that look alike but
are not (taped): `jitgrad.transforms.recompute`'s table."""

import math

import numpy as np


def rowwise_logsumexp(x, w):  # a work array filled by a loop, then read: recomputed
    n, d = x.shape
    z = np.zeros(d)
    total = 0.0
    for i in range(n):
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


def pairwise_energy(p, eps):  # nested loops with a reduction: recomputed
    n = p.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                r2 = (p[i, 0] - p[j, 0]) ** 2 + (p[i, 1] - p[j, 1]) ** 2 + eps
                e += math.exp(-r2) / r2
    return e


def whole_array_work(x, a):  # a work array written whole (z[:] = ...) each iteration
    n = x.shape[0]
    z = np.zeros(x.shape[1])
    total = 0.0
    for i in range(n):
        z[:] = x[i] * a
        for j in range(z.shape[0]):
            total += math.tanh(z[j]) * z[j]  # (a value to tape in the inner loop)
    return total


def reads_last_iteration(x, a):  # z[0] read before it is written: the previous row's value
    n, d = x.shape
    z = np.zeros(d)
    total = 0.0
    for i in range(n):
        total += z[0] * a
        for j in range(d):
            z[j] = x[i, j] * a
    return total + np.sum(z)


def carried_state(x, a):  # h depends on the previous iteration: taped
    h = 0.0
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            h = math.tanh(a * h + x[i, j])
        total += h
    return total


def partial_fill(x, a):  # the inner loop writes only part of z: the rest is old
    n, d = x.shape
    z = np.zeros(d)
    total = 0.0
    for i in range(n):
        for j in range(d - 1):
            z[j] = x[i, j] * a
        for j in range(d):
            total += z[j] * z[j]
    return total


def accumulates_into_array(x, w):  # acc[j] += ... across iterations: taped
    n, d = x.shape
    acc = np.zeros(d)
    for i in range(n):
        for j in range(d):
            acc[j] += x[i, j] * w[j]
    return np.sum(acc * acc)


def early_exit(x, a):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            total += x[i, j] * a
        if total > 1e9:
            break
    return total


# ---- fused (one sum after the loop) or only recomputed (more than one seed) ------------------


def log_of_sum(x, w):  # the seed depends on the sum's value (1 / total): fused
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            total += math.exp(x[i, j] * w[j])
    return math.log(total)


def fused_then_earlier_read(w, x):  # fused; in reverse its gradient reaches _b_w first, then
    v = w * 2.0                     # this read adds into it (and into the loop's _b_v)
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(w.shape[0]):
            total += np.sin(w[j] * x[i] + v[j])
    return total


def scaled_fused_then_earlier_read(w, x):  # the same, the loop's seed not one
    return 3.0 * fused_then_earlier_read(w, x)


def sum_in_a_branch(x, a):  # the sum grows on one side of a branch only: fused
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j] * a
            if v > 0.0:
                total += v * v
            else:
                total -= 0.5 * v
    return 3.0 * total


def triangular_work(x, a):  # each iteration pushes a different number of values: fused
    n = x.shape[0]
    total = 0.0
    for i in range(n):
        s = 0.0
        for j in range(i + 1):
            s += math.sin(a * x[j])
        total += s * s
    return total


def two_sums(x, a):  # two sums sent back into the loop: recomputed, not fused
    s1 = 0.0
    s2 = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            v = math.tanh(a * x[i, j])
            s1 += v
            s2 += v * v
    return s1 * s2


def writes_an_output_row(x, a):  # out[i] is read after the loop: an array seed, recomputed
    n, d = x.shape
    out = np.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(d):
            s = math.tanh(s + a * x[i, j])
        out[i] = s
    return np.sum(out * out)


def triangular_pushes(x, w):  # iteration i pushes i + 1 values (exp): fused, counted per row
    total = 0.0
    for i in range(x.shape[0]):
        s = 0.0
        for j in range(i + 1):
            s += math.exp(x[i] * w[j])
        total += math.log(s)
    return total


def log_of_row_sums(x, w):  # the inner sum's seed is 1 / s, known only after it: the outer
    total = 0.0              # loop fused, the inner one keeps its tape (counted per row)
    for i in range(x.shape[0]):
        s = 0.0
        for j in range(x.shape[1]):
            s += math.exp(x[i, j] * w[j])
        total += math.log(s)
    return total


def conv_loss(k, img, t):  # a nest of sums: fused level by level down to the window's sum,
    total = 0.0            # whose seed (2 r) is known only after it
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            s = 0.0
            for a in range(k.shape[0]):
                for b in range(k.shape[1]):
                    s += k[a, b] * img[i + a, j + b]
            r = s - t[i, j]
            total += r * r
    return total
