"""Recover a damped oscillator's parameters from noisy observations.

Run:  python examples/fit_ode.py

The model is integrated by an explicit-Euler loop, written the way a Numba user writes it;
jitgrad differentiates the loop as written (the adjoint runs it backwards over a typed tape)
and plain gradient descent on (log stiffness, log damping) recovers the true values.
"""

import math
import time

import numpy as np

import jitgrad as jg


def simulate(log_k, log_c, x0, v0, dt, n):
    """Positions of x'' = -k x - c x' from (x0, v0), n explicit-Euler steps of size dt."""
    k = math.exp(log_k)
    c = math.exp(log_c)
    xs = np.empty(n)
    x = x0
    v = v0
    for t in range(n):
        a = -k * x - c * v
        x = x + dt * v
        v = v + dt * a
        xs[t] = x
    return xs


def loss(log_k, log_c, x0, v0, observed, dt):
    """Mean squared error between the simulated and the observed positions."""
    n = observed.shape[0]
    k = math.exp(log_k)
    c = math.exp(log_c)
    x = x0
    v = v0
    total = 0.0
    for t in range(n):
        a = -k * x - c * v
        x = x + dt * v
        v = v + dt * a
        r = x - observed[t]
        total += r * r
    return total / n


def main():
    rng = np.random.default_rng(0)
    true_k, true_c, dt, n = 4.0, 0.3, 0.01, 2000
    clean = simulate(math.log(true_k), math.log(true_c), 1.0, 0.0, dt, n)
    observed = clean + 0.05 * rng.normal(size=n)

    step = jg.value_and_grad(loss, wrt=("log_k", "log_c", "x0", "v0"))
    params = np.array([math.log(1.0), math.log(1.0), 0.5, 0.5])  # a poor first guess
    lr = np.array([0.05, 0.5, 0.5, 0.5])
    m = np.zeros(4)
    s = np.zeros(4)
    start = time.perf_counter()
    for it in range(1, 801):
        value, grads = step(params[0], params[1], params[2], params[3], observed, dt)
        g = np.array(grads)
        m = 0.9 * m + 0.1 * g  # Adam: the scales of the four parameters differ a lot
        s = 0.999 * s + 0.001 * g * g
        params -= lr * 0.1 * (m / (1 - 0.9**it)) / (np.sqrt(s / (1 - 0.999**it)) + 1e-8)
        if it in (1, 10, 50, 100, 200, 400, 800):
            print(f"step {it:4d}  loss {value:.6f}  k {math.exp(params[0]):.3f}  "
                  f"c {math.exp(params[1]):.3f}")
    elapsed = time.perf_counter() - start
    print(f"\n800 gradient steps in {elapsed:.2f} s (the first includes compilation)")
    print(f"true       k = {true_k:.3f}, c = {true_c:.3f}, x0 = 1.000, v0 = 0.000")
    print(f"recovered  k = {math.exp(params[0]):.3f}, c = {math.exp(params[1]):.3f}, "
          f"x0 = {params[2]:.3f}, v0 = {params[3]:.3f}")
    print(f"noise floor (variance of the observation noise): {0.05**2:.6f}")


if __name__ == "__main__":
    main()
