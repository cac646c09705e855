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


def branch_set_in_first_iteration(a):
    for i in range(4):
        if i == 0:
            z = a * 2.0  # set in the first iteration, read in the later ones
        else:
            z = z * 0.5 + a
    return z


# ---- lists of arrays, objects, library calls on constants ------------------------------------


def lists_of_arrays(x, W):
    states = []
    h = x
    for t in range(3):
        h = np.tanh(W @ h + 0.1 * t)
        states.append(h)
    rows = [np.sin(x * k) for k in range(1, 3)]
    kept = []
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            kept.append(x * x[i])
    for it in range(2):
        H = np.outer(h, h) + np.eye(x.shape[0]) * it  # read after the loop
    S = np.stack(states)
    return (np.sum(S[-1] * S[0]) + np.sum(np.vstack(rows) ** 2) + np.sum(np.concatenate(rows))
            + np.sum(np.array(kept)) + np.sum(H) + len(states))


class Layer:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def forward(self, x):
        return np.tanh(self.W @ x + self.b)


class Body:
    def __init__(self, mass, pos):
        self.mass, self.pos = mass, pos

    @classmethod
    def unit(cls, pos):
        return cls(1.0, pos)

    def energy(self, g=9.81):
        return self.mass * g * self.pos[-1]


LAYERS = [Layer(np.array([[0.5, 0.1, 0.0], [0.2, -0.3, 0.4], [0.1, 0.1, 0.1]]),
                np.array([0.1, 0.0, -0.1])),
          Layer(np.eye(3) * 0.7, np.zeros(3))]
WEIGHTS = {"data": 1.0, "prior": 0.25}
DEFAULT_SHIFT = np.array([0.5, -0.5, 0.25])


def _shifted(x, shift=DEFAULT_SHIFT):
    return x + shift


def objects(x):
    for layer in LAYERS:
        x = layer.forward(x)
    body = Body.unit(_shifted(x))
    nodes, weights = np.polynomial.legendre.leggauss(4)  # constants: run while building
    ys, xs = np.meshgrid(np.arange(3.0), x)
    with np.errstate(divide="ignore"):
        quad = np.sum(weights * np.cos(nodes * x[0]))
    if np.sqrt(0.5) < 10.0 and not np.isscalar(x):
        quad = quad * WEIGHTS["data"]
    return body.energy() + quad + np.sum(xs * ys) + WEIGHTS["prior"] * np.sum(x * x)


def densities(x, m):
    from scipy import special, stats

    cov = np.array([[1.0, 0.3], [0.3, 2.0]])
    pts = np.array([[0.1, 0.2], [0.5, -0.3], [1.0, 0.0]])
    return (np.sum(stats.t.logpdf(x, 3.0, 0.5, 2.0)) + np.sum(stats.gamma.logpdf(x, 2.0))
            + np.sum(stats.beta.logpdf(x / 3.0, 2.0, 3.0)) + np.sum(stats.poisson.logpmf(3.0, x))
            + np.sum(special.logit(x / 3.0)) + np.sum(special.betaln(x, 2.0))
            + np.sum(stats.norm.logcdf(x)) + np.sum(stats.lognorm.logpdf(x, 0.5))
            + stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), x)
            + np.sum(stats.multivariate_normal.logpdf(pts, m, cov))
            + stats.multivariate_normal.pdf(pts[0], m, cov))


def loop_index_after(x):
    """Python leaves a loop's variable at its last item (the one a break stopped at); a loop
    that runs no iteration leaves it as it was."""
    for i in range(x.shape[0]):
        pass
    last = x[i] ** 3
    for j in range(x.shape[0]):
        if x[j] > 0.5:
            break
    k = 1
    for k in range(0):
        pass
    return last + x[j] ** 2 * j + x[k] * 2.0 + math.log(x[0], 3.0)


def piecewise_constant(x):
    """Rounding, counts and closeness tests: values as NumPy's, zero derivative (JAX's)."""
    from scipy import linalg, signal

    r = np.round(x * 3.7) + np.rint(x) + np.trunc(x * 5.0) + np.fix(-x) + round(x[0] * 10.0)
    c = np.count_nonzero(x > 0.5) + np.isclose(x, 0.3).sum() + np.allclose(x, x)
    k = x.argmax() + np.round(x, 1).sum() + math.trunc(x[2] * 3.0)
    A = np.outer(x, x) + np.eye(x.shape[0])
    L = linalg.cholesky(A, lower=True)
    y = linalg.solve_triangular(L, x, lower=True) + linalg.solve(A, x)
    return (np.sum(r * x) + c * x[0] + k * x[1] + np.sum(y * y)
            + np.sum(signal.convolve(x, np.array([0.25, 0.5]))))


# NumPy functions made of others, in three functions: as one, its gradient took 33 s of CPU to
# compile, as three 21 s (fresh caches): LLVM's time grows faster than the function.
def composed_reductions(x):
    """NaN-aware reductions, interpolation."""
    y = x.copy()
    y[1] = np.nan
    a = (np.nansum(y) + np.nanmean(y) + np.nanmax(y) + np.nanstd(y) + np.sum(np.nancumsum(y))
         + np.nanvar(y, ddof=1))
    xp = np.array([0.0, 0.5, 1.0, 2.0])
    fp = x[:4] * 2.0
    b = np.sum(np.interp(np.array([0.2, 0.7, 1.5, 2.5, -1.0]), xp, fp)) + np.interp(x[0], xp, fp)
    return a + b


def composed_statistics(x):
    """Integration, covariance, correlation."""
    return (np.trapezoid(x, np.linspace(0.0, 1.0, x.shape[0]))
            + np.sum(np.cov(np.vstack((x, x * x)))) + np.cov(x)
            + np.sum(np.corrcoef(np.vstack((x, x ** 3)))))


def composed_selections(x):
    """Signal and elementwise forms, selections, matrix powers, polynomials."""
    poly = np.polynomial.polynomial
    d = (np.sum(np.correlate(x, np.array([1.0, 2.0]), "full")) + np.ptp(x)
         + np.sum(np.fmod(x * 7.3, 1.1)) + np.sum(np.sinc(x - 0.5))
         + np.sum(np.broadcast_to(x, (2, x.shape[0]))))
    e = (np.sum(np.take(x, np.array([0, 2]))) + np.sum(np.select([x > 0.5, x > 0.2], [x, x * 2.0]))
         + np.sum(np.linalg.matrix_power(np.outer(x[:2], x[:2]) + np.eye(2), 3)))
    f = (np.sum(poly.polyval(x, np.array([1.0, 2.0, 3.0]))) + np.sum(poly.polymul(x[:2], x[1:3]))
         + np.polyval(np.array([1.0, x[0], 2.0]), 0.5) + np.sum(np.diagflat(x))
         + np.sum(np.tri(3) * x[0]))
    return d + e + f


def _solve_kepler(m, e, tol=1e-12):
    if e < 0.0:
        raise ValueError("eccentricity must not be negative")
    elif e >= 1.0:
        return np.nan  # hyperbolic: not handled here
    ecc = m
    for _ in range(50):
        step = (ecc - e * np.sin(ecc) - m) / (1.0 - e * np.cos(ecc))
        ecc = ecc - step
        if abs(step) < tol:
            break
    return ecc


def early_returns(w, e):
    """A branch that returns (or raises) leaves the names the other branches assign to the code
    after the ``if``; ``zip(range(n), w)`` in a ``for``."""
    if e < 0.3:
        scale = 2.0 * w[0]
    elif e > 0.95:
        return 0.0
    else:
        scale = 3.0 * w[0]
    s = 0.0
    for i, a in zip(range(1, w.shape[0] + 1), w):
        s += a * i
    return scale * s + _solve_kepler(w[1], e)


def accuracy_as_aux(W, x, y):
    """A softmax loss with accuracy as its aux: ``np.argmax(z, axis=1)`` (issue #46 item 7)."""
    z = x @ W
    p = np.exp(z - np.max(z, axis=1, keepdims=True))
    p = p / np.sum(p, axis=1, keepdims=True)
    acc = np.mean(np.argmax(z, axis=1) == y) + 0.0 * np.sum(np.argmin(z, axis=0))
    return -np.mean(np.log(p[np.arange(x.shape[0]), y])), acc


COEFFS = {"a": 1.5, "b": 2.5}


def loop_headers(x):
    """Loop headers Python allows: a dict's items and keys, rows unpacked, itertools.product
    of ranges."""
    import itertools

    s = 0.0
    for k, v in COEFFS.items():
        s += v * x[0] * len(k)
    for a, b in x.reshape(2, 2):
        s += a * b
    for i, j in itertools.product(range(2), range(2)):
        s += x[i] * x[j] * (i + 1)
    for name in COEFFS:  # noqa: PLC0206 (a dict iterated by its keys, as written)
        s += COEFFS[name] * x[1]
    parts = (x[:2], np.outer(x[:2], x[2:]), np.eye(2) * x[3])
    for a, m, c in zip(*parts):  # zip(*seqs) of a tuple of arrays: their rows
        s += a * np.sum(m * c)
    return s


class Frame:
    """A class compared by identity (``cls is Frame``) while building."""


def _make_step(a):
    return lambda v: v - 0.05 * (v ** 2 - a)  # a lambda returned by a helper


def _newton(func, fprime, x0, args=(), tol=1e-12, maxiter=50):
    """The root, left on some paths by a branch before a `break` (read after the loop)."""
    p0 = 1.0 * x0
    for itr in range(maxiter):
        fval = func(p0, *args)
        if fval == 0:
            p = p0
            break
        p = p0 - fval / fprime(p0, *args)
        if abs(p - p0) < tol:
            break
        p0 = p
    return p, itr


def more_forms(x):
    from scipy.linalg import block_diag

    try:
        arr = np.array(x, dtype=np.float64).flatten()  # cannot raise: the handler never runs
    except ValueError:
        raise ValueError("not an array") from None
    cls = Frame
    if cls is Frame:
        arr = arr * 2.0
    mask = np.full_like(x, False, dtype=bool)
    us = [0.0] * x.shape[0]  # a list of one number, repeated: an array
    for i in range(x.shape[0]):
        us[i] = x[i] * (i + 1)
    root, _ = _newton(lambda v, a: v * v - a, lambda v, a: 2.0 * v, 1.0, args=(x[0] + 1.0,))
    step = _make_step(x[1])
    q = [[0.25 * x[0] ** 4, 0.5 * x[0] ** 3], [0.5 * x[0] ** 3, x[0] ** 2]]  # rows, as filterpy
    return (np.sum(np.where(mask, 0.0, arr)) + np.sum(block_diag(*[np.outer(x[:2], x[:2])] * 2))
            + np.sum(block_diag(*[q] * 3))
            + np.sum(np.array(us)) + root + step(1.5))


def trajectory(x, W):
    """A list made with its first items, then appended to: a trajectory from its initial state
    (the first item is the value where the list was made, not after)."""
    h = x
    xs = [h]
    h = h * 1.0
    for t in range(3):
        h = np.tanh(W @ h)
        xs.append(h)
    vals = [x[0], x[1] * 2.0]
    for v in x:
        if v > 0.4:
            vals.append(v * v)
    S = np.array(xs)
    return np.sum(S * S) + len(xs) + np.sum(np.array(vals)) * len(vals)


def deleted_names(x):
    tmp = x * 2.0
    y = tmp + 1.0
    del tmp  # unbound from here on, as in Python
    return y * y


def _solve_with_results(x):
    from collections import namedtuple

    results = namedtuple("results", "root iterations")
    return results(x * 2.0, 3)


def named_results(x, us=None):
    """A namedtuple's fields read by name; a list argument defaulting to None, made as a list
    of one number repeated when it is None."""
    out = _solve_with_results(x)
    if us is None:
        us = [0.0] * 3
    for i in range(3):
        us[i] = x * i
    return out.root * out.iterations + np.sum(np.array(us))


def sorted_values(x):
    """sorted() of numbers known only at run time: NumPy's sort of them (reverse= reads it
    backwards); the sorted entries weighted by their rank."""
    ranked = sorted([x[2], x[0], 0.25, x[1]])
    top = sorted((x[0] * x[1], x[2]), reverse=True)
    return ranked[0] + 2.0 * ranked[1] + 3.0 * ranked[2] + 4.0 * ranked[3] + top[0] * 5.0


def padded_and_spaced(x, A):
    """np.pad (constant, edge), logspace and geomspace from a run-time end, unwrap,
    Fortran-order reshape and ravel, einsum with '...', logsumexp with weights, and
    ascontiguousarray/asfortranarray: compositions of what jitgrad differentiates."""
    import scipy.special

    p = np.pad(x, (1, 2)) + np.pad(x, (2, 1), mode="edge") * 0.5
    q = np.pad(A, ((0, 1), (2, 0)), mode="edge") + np.pad(A, ((1, 0), (0, 2)), constant_values=1.5)
    s = np.sum(p * np.arange(p.size)) + np.sum(q * q) * 0.1
    s += np.sum(np.logspace(x[0], 1.0, 4)) * 0.01 + np.sum(np.geomspace(x[1] + 2.0, 4.0, 5))
    s += np.sum(np.unwrap(x * 4.0) ** 2) * 0.1
    s += np.sum(np.reshape(A, (3, 2), order="F") * np.arange(6.0).reshape(3, 2))
    s += np.sum(np.ravel(np.ascontiguousarray(A.T), order="F") * np.arange(6.0))
    s += np.sum(np.einsum("...j,...j->...", A, np.asfortranarray(A)))
    return s + scipy.special.logsumexp(x, b=np.array([0.5, 1.0, 2.0]))


def kalman_gain_try(P, H, R):
    """A filter's gain as written around a 1-D fallback: np.linalg in a try (it raises in the
    compiled code where NumPy does), ``x.shape[0]`` in a try, and a shape compared with a
    tuple of sizes."""
    S = H @ P @ H.T + R
    if S.shape != (H.shape[0], H.shape[0]):
        raise ValueError("S must be square")
    try:
        K = P @ H.T @ np.linalg.inv(S)
    except np.linalg.LinAlgError:
        K = P @ H.T / S
    try:
        I_KH = np.eye(P.shape[0]) - K @ H
    except IndexError:
        I_KH = 1.0 - K * H
    return np.sum((I_KH @ P) ** 2) + np.sum(K * K)
