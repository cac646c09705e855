"""What the forward pass saves for the adjoint, and what it rebuilds instead: whole-array
snapshots of a work array read element by element (`saving.Saver.snapshot`), integer counters
rebuilt backwards from what each iteration added (`saving.Saver.counted`), and look-alikes
that must keep a tape."""

import math

import numpy as np


def packed_triangle(x, means, packed):
    """ADBench's GMM inner loops: a work array filled per row and component, read d(d-1)/2
    times through a counter ``idx`` that an inner loop advances."""
    n, d = x.shape
    K = means.shape[0]
    xc = np.zeros(d)
    total = 0.0
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - means[k, j]
            sq = 0.0
            idx = 0
            for r in range(d):
                s = xc[r]
                for c in range(r):
                    s += packed[k, idx] * xc[c]
                    idx += 1
                sq += s * s
            total += math.log(1.0 + sq)
    return total


def counter_steps(x, w):
    """A counter advanced by 2 per inner iteration and by 1 after the inner loop."""
    n = x.shape[0]
    z = np.zeros(n)
    total = 0.0
    pos = 0
    for i in range(n):
        for j in range(i):
            z[j] = x[j] * w[pos % w.shape[0]]
            pos += 2
        pos += 1
        for j in range(i):
            total += z[j] * z[j] * w[(pos + j) % w.shape[0]]
    return total


def counter_with_break(x, w):
    """The inner loop can stop early: what it added is not its range's length (taped)."""
    n = x.shape[0]
    total = 0.0
    idx = 0
    for i in range(n):
        for j in range(n):
            if x[j] > x[i]:
                break
            total += x[j] * w[idx % w.shape[0]]
            idx += 1
        total += math.sin(x[i] * w[idx % w.shape[0]])
    return total


def reads_not_over_length(x, w):
    """Element reads of a work array in a loop that does not run over its length: a push per
    read (no snapshot)."""
    n, d = x.shape
    z = np.zeros(d)
    total = 0.0
    for i in range(n):
        for j in range(d):
            z[j] = x[i, j] * w[j]
        for t in range(3):
            total += math.tanh(z[0] + t * z[d - 1])
    return total


def snapshot_in_branch(x, w):
    """Reads of the work array inside a branch in the loop over its length."""
    n, d = x.shape
    z = np.zeros(d)
    total = 0.0
    for i in range(n):
        for j in range(d):
            z[j] = math.sin(x[i, j] + w[j])
        for j in range(d):
            if z[j] > 0.0:
                total += z[j] * z[d - 1 - j]
            else:
                total -= 0.5 * z[j]
    return total


def recurrence_in_place(x, w):
    """A state vector updated in place every step, whose versions the adjoint reads whole:
    each is saved onto a flat stack (one float array, no allocation per step)."""
    n, d = x.shape
    h = np.zeros(d)
    total = 0.0
    for t in range(n):
        h *= w
        h += x[t]
        total += np.sum(np.sin(h))
    return total


def recurrence_with_counter(x, w):
    """A recurrence (checkpointed under a memory cap) whose counter an inner loop advances."""
    n = x.shape[0]
    h = 0.5
    idx = 0
    for t in range(n):
        for j in range(t):
            h = math.tanh(h * w[idx % w.shape[0]] + x[t])
            idx += 1
        h = h + 0.1 * x[t] * w[idx % w.shape[0]]
    return h


def window_sums(x, w):
    """A recurrence through sums over two axes of a window times weights: the adjoint reads
    the product and the partial sum only for their shapes (the sum's cotangent spread back),
    so they are made empty there, not pushed once per step."""
    k = w.shape[0]
    h = np.ones(k)
    for i in range(x.shape[0] - k + 1):
        h = np.tanh(np.sum(x[i:i + k, np.newaxis, :] * w[np.newaxis], axis=(1, 2)) * h
                    + x[i:i + k, 0])
    return np.sum(h)
