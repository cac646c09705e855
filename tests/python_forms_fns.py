"""Programs written with the plain Python that numerical code uses around its numbers (issue
#43, item 3 of the spec): parameters of every kind, ``*`` and ``**`` at call sites, in
displays and in targets; functions as values (lambdas, closures, a function chosen by a
run-time condition, ``map``/``filter``); type tests and ``in`` on values known while
building; strings, f-strings and imports inside the function; slice objects; numbers
assigned in a loop and read after it. Each mixes several forms, so that one compile covers
them (`test_python_forms.py`).
"""

import math

import numpy as np

# ---- parameters and call sites --------------------------------------------------------------


def _weighted(*terms, weights=None, **options):
    """A helper with *args, a keyword-only default and **kwargs (read by constant keys)."""
    if weights is None:
        weights = (1.0,) * len(terms)
    total = 0.0
    for w, t in zip(weights, terms):
        total = total + w * t
    return total * options.get("scale", 1.0) if "scale" in options else total


def _affine(x, /, a, *, b=0.5):
    return a * x + b


def parameters(x, y):
    pair = (x * y, np.sin(x))
    opts = {"scale": 2.0}
    head, *rest = (x, y, x * x, 3.0)
    merged = {**opts, "shift": 0.25}
    return (_weighted(*pair, weights=(0.5, 2.0), **opts) + _weighted(x, y)
            + head * rest[0] * rest[2] + _affine(y, 3.0, b=merged["shift"]) + len(rest))


def keyword_only_defaults(x, *, power=3.0, label="cubic"):
    assert label == "cubic"
    return np.sum(x ** power)


# ---- functions as values ---------------------------------------------------------------------


def _apply_twice(f, v):
    return f(f(v))


def _integrate(f, a, b, n=8):
    h = (b - a) / n
    s = 0.5 * (f(a) + f(b))
    for k in range(1, n):
        s += f(a + k * h)
    return s * h


def functions_as_values(x):
    k = 1.5

    def decay(t):
        return np.exp(-k * t) * x

    square = lambda v: v * v
    f = np.sin if x > 0.3 else np.cos
    g = square if x > 10.0 else np.tanh
    total = sum(v * x for v in (1.0, 2.0, 3.0))
    kept = sum(filter(lambda v: v > 1.5, (1.0, 2.0, 3.0)))
    return (_apply_twice(square, x) + _integrate(decay, 0.0, 1.0) + f(x) * g(x) + total
            + kept * x + _integrate(lambda t: t * t * x, 0.0, 2.0, n=4))


def _norm(v, kind="l2"):
    if isinstance(v, (float, int)):
        return abs(v)
    if kind == "l1":
        return np.sum(np.abs(v))
    return np.sqrt(np.sum(v * v))


def type_tests(x, w):
    mode = "huber"
    if mode in ("huber", "smooth"):
        r = np.where(np.abs(x) < 1.0, 0.5 * x * x, np.abs(x) - 0.5)
    else:
        r = x * x
    label = f"loss[{mode}] over {x.shape[0]} points"
    if isinstance(w, np.ndarray):
        r = r * w
    print(label)
    return np.sum(r) + _norm(w, "l1") + _norm(w) + _norm(1.5) * np.sum(x)


# ---- statements and values ----------------------------------------------------------------


def statements(x):
    import math as m

    from numpy import tanh

    window = slice(1, x.shape[0] - 1)
    steps = tuple(range(3))
    inner = x[window]
    if x[0] > 10.0:
        raise ValueError(f"x[0] = {x[0]} is too large for {len(steps)} steps")
    for k in steps:
        inner = inner * 0.9 + tanh(inner) * 0.1
    return np.sum(inner) + m.exp(x[0]) + round(2.6) * x[-1]


def read_after_loop(x, tol):
    y = x
    for it in range(50):  # Heron's iteration for sqrt(2 x), stopped at a tolerance
        y_new = 0.5 * (y + 2.0 * x / y)
        if abs(y_new - y) < tol:
            break
        y = y_new
    n = 0
    while n < 3:
        last = y_new * n
        n += 1
    return y_new + last + it * 0.0 + math.hypot(y_new, 1.0)
