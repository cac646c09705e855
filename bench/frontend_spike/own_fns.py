"""Small functions using Python forms, for the frontend spike (issue #43). Each is measured
through route (a) (jitgrad's AST frontend) and route (b) (Numba IR → translated source)."""

import math

import numpy as np


def own_lambda(x):
    sq = lambda t: t * t
    return sq(x) + sq(2.0 * x)


def _apply_twice(f, x):
    return f(f(x))


def own_closure_arg(x, a):
    return _apply_twice(lambda t: a * np.sin(t), x)


def own_global_fn_arg(x):
    return _apply_twice(np.tanh, x)


def own_fn_argument(x, act):
    return np.sum(act(x))


def own_varargs(*xs):
    return xs[0] * xs[1] + math.sin(xs[2]) * len(xs)


def own_varargs_loop(*xs):
    s = 0.0
    for v in xs:
        s += v * v
    return s


def own_power(x, n):
    return 1.0 if n == 0 else x * own_power(x, n - 1)


def own_loop_last(x):
    for i in range(3):
        y = x * (i + 1.0)
        last = i
    return y * last


def own_isinstance(x):
    if isinstance(x, np.ndarray):
        return np.sum(x * x)
    return x * x


def own_in_modes(x, mode):
    if mode in ("l2", "sq"):
        return np.sum(x * x)
    return np.sum(np.abs(x))


def own_map(x):
    return sum(t * t for t in (x, 2.0 * x))


def own_slice(x):
    s = slice(1, 3)
    return np.sum(x[s] ** 2)


def own_pick(x, c):
    f = np.sin if c > 0 else np.cos
    return np.sum(f(x))


def own_while(x):
    k = 0
    y = x
    while y < 10.0:
        y = y * 1.5
        k += 1
    return y + k


def own_inner_def(x):
    def inner(t):
        return t * x

    return inner(x) + inner(2.0)


def own_swap(x, y):
    a, b = x, y
    for _ in range(3):
        a, b = b, a * b
    return a + b


def own_early_return(x):
    for i in range(5):
        if x * i > 3.0:
            return x * i
    return x


def own_and_or(x):
    if x > 0.0 and x < 5.0 or x < -10.0:
        return x * x
    return -x


def own_while_true(x):
    k = 0.0
    while True:
        k += 1.0
        if k * x > 4.0:
            break
    return k * x * x


def own_nested_loops(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            if x[i] > x[j]:
                s += x[i] * x[j]
            else:
                continue
    return s


def own_list_build(x):
    parts = [x[0] * 2.0, x[1] * x[2]]
    return parts[0] + parts[1]


def own_inplace_write(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * x[(i + 1) % 3]
    return np.sum(y * y)


CASES = [
    (own_lambda, (1.5,), 0),
    (own_closure_arg, (0.7, 1.3), 0),
    (own_global_fn_arg, (0.4,), 0),
    (own_fn_argument, (np.array([0.3, -0.2, 1.1]), np.tanh), 0),
    (own_varargs, (1.5, 2.0, 0.3), 0),
    (own_varargs_loop, (1.5, 2.0, 0.3), 1),
    (own_power, (1.3, 3), 0),
    (own_loop_last, (1.7,), 0),
    (own_isinstance, (np.array([0.3, -0.2, 1.1]),), 0),
    (own_in_modes, (np.array([0.3, -0.2, 1.1]), "l2"), 0),
    (own_map, (1.2,), 0),
    (own_slice, (np.array([0.3, -0.2, 1.1, 2.0]),), 0),
    (own_pick, (np.array([0.3, -0.2, 1.1]), -1.0), 0),
    (own_while, (1.3,), 0),
    (own_inner_def, (1.3,), 0),
    (own_swap, (1.1, 0.9), 0),
    (own_early_return, (1.3,), 0),
    (own_and_or, (1.3,), 0),
    (own_while_true, (1.3,), 0),
    (own_nested_loops, (np.array([0.3, -0.2, 1.1, 0.5]),), 0),
    (own_list_build, (np.array([0.3, -0.2, 1.1]),), 0),
    (own_inplace_write, (np.array([0.3, -0.2, 1.1]),), 0),
]
