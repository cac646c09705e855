"""Loops whose iterations depend on one another (recurrences), for `jitgrad.transforms.checkpoint`: each is
differentiated with a tiny memory cap (many segments) and without one."""

import math

import numpy as np


def tanh_recurrence(x, a):
    h = 0.5
    for i in range(x.shape[0]):
        h = math.tanh(a * h + x[i])
    return h


def rnn_loss(w, x):
    h = 0.0
    loss = 0.0
    for t in range(x.shape[0]):
        h = math.tanh(w * h + x[t])
        loss += h * h
    return loss


def nested_state(x, a):  # the carried state runs through an inner loop
    h = 0.0
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            h = math.tanh(a * h + x[i, j])
        total += h * h
    return total


def branchy_recurrence(x, a):
    h = 0.1
    for i in range(x.shape[0]):
        if h > 0.0:
            h = a * h + x[i]
        else:
            h = math.sin(h) - x[i] * a
    return h * h


def vector_state(W, x):  # an array carried by rebinding (no in-place write)
    h = np.zeros(W.shape[0])
    loss = 0.0
    for t in range(x.shape[0]):
        h = np.tanh(W @ h + x[t])
        loss += np.sum(h * h)
    return loss


def leapfrog(q0, p0, k, dt):  # two carried values: an ODE integrator
    q = q0
    p = p0
    for _ in range(200):
        p = p - 0.5 * dt * k * math.sin(q)
        q = q + dt * p
        p = p - 0.5 * dt * k * math.sin(q)
    return q * q + p


def strided(x, a):  # a loop over range(1, n, 2)
    h = 1.0
    for i in range(1, x.shape[0], 2):
        h = h * a + math.cos(x[i] * h)
    return h


# ---- kept on the tape, with the reason in .source() --------------------------------------------


def exits_early(x, a):
    h = 0.0
    for i in range(x.shape[0]):
        h = math.tanh(a * h + x[i])
        if h > 0.9:
            break
    return h


def state_written_in_place(x, a):
    h = np.zeros(3)
    for i in range(x.shape[0]):
        h[:] = np.tanh(a * h + x[i])
    return np.sum(h)


def reads_an_array_written_after(x, a):  # the replay would read y's new values
    y = x * 1.0
    h = 0.0
    for i in range(y.shape[0]):
        h = math.tanh(a * h + y[i])
    y[0] = 0.0
    return h + np.sum(y * y)

