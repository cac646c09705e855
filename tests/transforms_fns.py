"""Functions for tests/test_transforms.py: custom rules, stop_gradient, gradients from Numba."""

import numba
import numpy as np

import jitgrad


@jitgrad.custom_vjp
def ste_round(x):
    """Rounding with a straight-through gradient: value round(x), gradient the identity."""
    return np.floor(x + 0.5)


def ste_round_fwd(x):
    return np.floor(x + 0.5), ()


def ste_round_bwd(res, g):
    return (g,)


ste_round.defvjp(ste_round_fwd, ste_round_bwd)


@jitgrad.custom_vjp
def clipped_ste(x):
    """Rounding whose gradient passes only where |x| <= 1 (reads a residual)."""
    return np.floor(x + 0.5)


def clipped_ste_fwd(x):
    return np.floor(x + 0.5), (x,)


def clipped_ste_bwd(res, g):
    (x,) = res
    return (np.where(np.abs(x) <= 1.0, g, 0.0),)


clipped_ste.defvjp(clipped_ste_fwd, clipped_ste_bwd)


@jitgrad.custom_vjp
def scaled_pair(a, b):
    """a * b, whose rule sends 3 g b to a and nothing to b (deliberately not the derivative)."""
    return a * b


def scaled_pair_fwd(a, b):
    return a * b, (b,)


def scaled_pair_bwd(res, g):
    b = res[0]
    total = 0.0
    for _ in range(3):  # a loop in the rule
        total = total + g * b
    return total, None


scaled_pair.defvjp(scaled_pair_fwd, scaled_pair_bwd)


@jitgrad.custom_vjp
def softclip(x):
    """tanh, whose rule (both halves compiled by Numba too) uses the saved value."""
    return np.tanh(x)


@numba.njit
def softclip_fwd(x):
    y = np.tanh(x)
    return y, (y,)


@numba.njit
def softclip_bwd(res, g):
    y = res[0]
    return (g * (1.0 - y * y),)


softclip.defvjp(softclip_fwd, softclip_bwd)


def softclip_loss(x):
    return np.sum(softclip(x * 2.0))


def quantize_helper(w, x):
    return ste_round(w * x)


def ste_loop(w, xs):
    """Straight-through rounding inside a loop, through a helper."""
    s = 0.0
    for i in range(xs.shape[0]):
        q = quantize_helper(w, xs[i])
        s += q * q
    return s


def ste_loop_rule(w, xs):
    return sum(2.0 * np.floor(w * x + 0.5) * x for x in xs)


def clipped_array(w):
    return np.sum(clipped_ste(w) ** 2)


def clipped_array_rule(w):
    return 2.0 * np.floor(w + 0.5) * (np.abs(w) <= 1.0)


def pair_loop(a, b, n):
    s = 0.0
    for _ in range(n):
        s = s + scaled_pair(a, b) * a
    return s


def pair_loop_rule_a(a, b, n):
    return n * (3.0 * a * b + a * b)  # the rule's 3 g b with g = a, plus the direct a b


def pair_loop_rule_b(a, b, n):
    return n * 0.0  # the rule gives b nothing; the only other path is through `* a`


def stopped(x):
    return np.sum(jitgrad.stop_gradient(x * x) * x)


def stopped_scalar(x):
    y = jitgrad.stop_gradient(np.sin(x))
    return y * x + x * x


def sgd_loss(w, x, y):
    r = x @ w - y
    return np.sum(r * r) / x.shape[0]


# ------------------------------------------------------------------- array-valued functions


def arr_straight(x, A):
    return np.tanh(A @ x) * x[0]


def arr_running_sum(x, n):
    out = np.zeros(n)
    s = 0.0
    for i in range(n):
        s = s + x[i % x.shape[0]] ** 2
        out[i] = s
    return out


def arr_branch(x, t):
    if t > 0.0:
        y = x * t
    else:
        y = np.sin(x)
    return np.where(x > 0.0, y, y * y)


def arr_inplace(x):
    y = x.copy()
    for i in range(1, y.shape[0]):
        y[i] = y[i] * y[i - 1] + 0.5 * x[i]
    return y


def euler_trajectory(k, c, x0, v0, n):
    """A damped oscillator by explicit Euler: the (n, 2) trajectory."""
    out = np.zeros((n, 2))
    x, v = x0, v0
    dt = 0.1
    for i in range(n):
        a = -k * x - c * v
        x = x + dt * v
        v = v + dt * a
        out[i, 0] = x
        out[i, 1] = v
    return out


def arr_matrix(W, x):
    h = np.exp(-W * W) @ x
    return np.outer(h, x) + W
