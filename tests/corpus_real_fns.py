"""Functions for the real-code corpus (``corpus_real.py``), written the way public Numba code
is written (issue #11): pricing, stencils, particles, likelihoods, recurrences, distances,
integrators; and the Python forms such code uses: helpers that return arrays or tuples from a
branch, nested functions and closures (``make_loss(reg)``), global arrays read as constants.
Every function returns a scalar and leaves its arguments alone.
"""

import math
import operator
from functools import reduce

import numpy as np
from scipy.optimize import rosen, rosen_der
from scipy.special import digamma, erf, expit, factorial, gammaln, logsumexp, xlogy

# ---- Python forms: helpers, closures, global arrays ------------------------------------------

STENCIL = np.array([0.25, 0.5, 0.25])  # a global array: read as a constant, as Numba does
TIMES = np.array([0.25, 0.5, 1.0, 2.0])
SQRT2 = math.sqrt(2.0)


def _soft_or_hard(x, temp):
    if temp > 0.0:
        return np.log1p(np.exp(x / temp)) * temp  # an array from one branch
    return np.maximum(x, 0.0)  # and from the other


def helper_array_from_branch(x, temp):
    return np.sum(_soft_or_hard(x, temp) ** 2)


def _moments(x, centred):
    if centred:
        m = np.mean(x)
        return m, np.mean((x - m) ** 2)  # a tuple from a branch
    else:
        return 0.0, np.mean(x * x)


def helper_tuple_from_branch(x, c):
    m, v = _moments(x, c > 0.0)
    return m + v * c


def _norm_cdf(z):
    return 0.5 * (1.0 + math.erf(z / SQRT2))


def closure_factory_loss(w, x, y):
    def make_loss(reg):
        def loss(w, x, y):
            r = x @ w - y
            return np.mean(r * r) + reg * np.sum(w * w)
        return loss
    return make_loss(0.1)(w, x, y)


def _make_ridge(reg, scale):
    def ridge(w, x, y):
        r = x @ w - y
        return np.mean(r * r) + reg * np.sum(scale * w * w)
    return ridge


ridge_closure = _make_ridge(0.05, np.array([1.0, 2.0, 0.5]))  # captures a number and an array


def nested_sigmoid_nll(w, x, y):
    n = x.shape[0]

    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    def penalty(v, p=2.0):
        return np.sum(np.abs(v) ** p) / n

    p = sigmoid(x @ w)
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) + 0.01 * penalty(w)


def global_stencil_smooth(u):
    out = np.zeros_like(u)
    for i in range(1, u.shape[0] - 1):
        out[i] = STENCIL[0] * u[i - 1] + STENCIL[1] * u[i] + STENCIL[2] * u[i + 1]
    return np.sum(out * out)


def global_term_structure(r, sigma):
    total = 0.0
    for t in TIMES:
        total += math.exp(-r * t) * _norm_cdf(sigma * math.sqrt(t))
    return total


# ---- array functions: joining, splitting, diagonals, triangles, integer indices ----------------

ORDER = np.array([3, 0, 2, 2, 1])  # a global integer array used as an index


def concat_features(w, x, z):
    feats = np.concatenate((x, z * z), axis=1)
    return np.sum(np.tanh(feats @ w))


def hstack_vstack_design(x, v):
    design = np.hstack((x, np.ones((x.shape[0], 1))))
    rows = np.vstack((v, v * 2.0))
    return np.sum(design ** 2) + np.sum(rows @ rows.T) + np.sum(np.hstack((v, -v)) ** 3)


def stack_last_axis(p, q):
    pts = np.stack((p, q), axis=1)
    return np.sum(np.sqrt(np.sum(pts * pts, axis=1)))


def argmax_payoff(v, w):
    i = np.argmax(v)
    j = np.argmin(w)
    return v[i] * w[j] + np.max(v) - w[np.argmax(w)]


def vdot_inner_trace(a, v, w):
    return np.vdot(v, w) + np.sum(np.inner(a, v) ** 2) + np.trace(a @ a.T) + np.inner(v, v)


def diag_precision(s, v):
    prec = s @ s.T + np.diag(v * v)
    return np.sum(np.diag(prec) ** 2) + np.sum(np.log(np.diag(np.diag(v * v) + 1.0)))


def triangular_parts(s, a):
    lower = np.tril(s)
    upper = np.triu(a, 1)
    return np.sum((lower @ lower.T) ** 2) + np.sum(upper ** 3) + np.sum(np.tril(a, -1) * a)


def repeat_upsample(v):
    up = np.repeat(v, 3)
    return np.sum(up * np.arange(up.shape[0]) * 0.1 + up ** 2)


def split_halves(v, a):
    head, tail = np.split(v, 2)
    parts = np.array_split(a, 3, axis=1)
    return np.sum(head * tail ** 2) + np.sum(parts[0] ** 2) + np.sum(parts[2] ** 3) + np.sum(
        parts[1])


def split_at_indices(v):
    first, middle, rest = np.split(v, [1, 3])
    return np.sum(first ** 2) + np.sum(middle ** 3) + np.sum(rest * 5.0)


def gather_rows(v, a):
    return np.sum(v[ORDER] ** 2 * np.arange(5.0)) + np.sum(a[ORDER[:2]] ** 3)


def embedding_lookup(table, idx, y):
    h = table[idx]
    return np.sum((np.sum(h, axis=1) - y) ** 2)


# ---- linear algebra ---------------------------------------------------------------------------


def gaussian_nll_cholesky(mu, a, x):
    cov = a @ a.T + np.eye(a.shape[0])
    chol = np.linalg.cholesky(cov)
    total = 0.0
    for k in range(x.shape[0]):
        z = np.linalg.solve(chol, x[k] - mu)
        total += 0.5 * np.sum(z * z)
    return total + x.shape[0] * np.sum(np.log(np.diag(chol)))


def gaussian_logdet(a, x):
    cov = a @ a.T + np.eye(a.shape[0])
    sign, logdet = np.linalg.slogdet(cov)
    prec = np.linalg.inv(cov)
    return 0.5 * np.sum((x @ prec) * x) + 0.5 * x.shape[0] * logdet * sign


def ridge_solve(a, y, lam):
    g = a.T @ a + lam * np.eye(a.shape[1])
    w = np.linalg.solve(g, a.T @ y)
    r = a @ w - y
    return np.sum(r * r) + np.linalg.det(g) * 1e-3


def multi_rhs_solve(m, b):
    return np.sum(np.linalg.solve(m, b) ** 2)


# ---- pricing --------------------------------------------------------------------------------


def black_scholes_vector(s, k, t, r, sigma):
    d1 = (np.log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * np.sqrt(t))
    d2 = d1 - sigma * np.sqrt(t)
    total = 0.0
    for i in range(s.shape[0]):
        nd1 = 0.5 * (1.0 + math.erf(d1[i] / SQRT2))
        nd2 = 0.5 * (1.0 + math.erf(d2[i] / SQRT2))
        total += s[i] * nd1 - k[i] * math.exp(-r * t[i]) * nd2
    return total


def binomial_american_put(s0, k, r, sigma):
    n = 40
    dt = 1.0 / n
    u = math.exp(sigma * math.sqrt(dt))
    d = 1.0 / u
    p = (math.exp(r * dt) - d) / (u - d)
    disc = math.exp(-r * dt)
    values = np.zeros(n + 1)
    for j in range(n + 1):
        values[j] = max(k - s0 * u ** j * d ** (n - j), 0.0)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1):
            hold = disc * (p * values[j + 1] + (1.0 - p) * values[j])
            exercise = k - s0 * u ** j * d ** (i - j)
            values[j] = hold if hold > exercise else exercise  # noqa: FURB136 (a branch)
    return values[0]


def asian_mc(s0, sigma, z):
    r = 0.03
    dt = 1.0 / z.shape[1]
    total = 0.0
    for p in range(z.shape[0]):
        s = s0
        avg = 0.0
        for t in range(z.shape[1]):
            s = s * math.exp((r - 0.5 * sigma * sigma) * dt + sigma * math.sqrt(dt) * z[p, t])
            avg += s
        avg = avg / z.shape[1]
        total += max(avg - 100.0, 0.0)
    return math.exp(-r) * total / z.shape[0]


# ---- stencils ---------------------------------------------------------------------------------


def laplace_jacobi(u0):
    u = u0.copy()
    n, m = u.shape
    for _ in range(5):
        new = u.copy()
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                new[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
        u = new
    return np.sum(u * u)


def heat_explicit(u0, alpha):
    u = u0.copy()
    for _ in range(10):
        lap = np.zeros_like(u)
        lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u = u + alpha * lap
    return np.sum(u ** 2)


def gray_scott(u0, v0, f, k):
    u = u0.copy()
    v = v0.copy()
    for _ in range(4):
        lu = np.roll(u, 1) + np.roll(u, -1) - 2.0 * u
        lv = np.roll(v, 1) + np.roll(v, -1) - 2.0 * v
        uvv = u * v * v
        u = u + 0.2 * lu - uvv + f * (1.0 - u)
        v = v + 0.1 * lv + uvv - (f + k) * v
    return np.sum(v) + np.sum(u * u)


# ---- particles --------------------------------------------------------------------------------


def nbody_energy(pos, mass):
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            dz = pos[i, 2] - pos[j, 2]
            e -= mass[i] * mass[j] / math.sqrt(dx * dx + dy * dy + dz * dz + 0.01)
    return e


def lennard_jones(pos, eps):
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = pos[i] - pos[j]
            r2 = np.sum(d * d)
            inv6 = 1.0 / (r2 * r2 * r2)
            e += 4.0 * eps * (inv6 * inv6 - inv6)
    return e


# ---- likelihoods -----------------------------------------------------------------------------


def gmm_nll(x, means, log_w):
    n, k = x.shape[0], means.shape[0]
    w = np.exp(log_w - np.max(log_w))
    w = w / np.sum(w)
    total = 0.0
    for i in range(n):
        best = -np.inf
        comps = np.empty(k)
        for c in range(k):
            d = x[i] - means[c]
            comps[c] = math.log(w[c]) - 0.5 * np.sum(d * d)
            best = max(best, comps[c])
        total -= best + math.log(np.sum(np.exp(comps - best)))
    return total


def student_t_nll(x, mu, log_scale):
    nu = 4.0
    scale = math.exp(log_scale)
    z = (x - mu) / scale
    return np.sum(0.5 * (nu + 1.0) * np.log1p(z * z / nu)) + x.shape[0] * log_scale


def logistic_regression(w, x, y):
    z = x @ w
    return np.sum(np.logaddexp(0.0, z) - y * z) / x.shape[0]


# ---- recurrences, distances, integrators --------------------------------------------------------


def ewma_variance(r, lam):
    var = r[0] * r[0]
    total = 0.0
    for t in range(1, r.shape[0]):
        var = lam * var + (1.0 - lam) * r[t - 1] * r[t - 1]
        total += math.log(var) + r[t] * r[t] / var
    return 0.5 * total


def pairwise_kde(x, h):
    n = x.shape[0]
    total = 0.0
    for i in range(n):
        dens = 0.0
        for j in range(n):
            u = (x[i] - x[j]) / h
            dens += math.exp(-0.5 * u * u)
        total += math.log(dens / (n * h))
    return total


def cdist_sum(a, b):
    d = np.sqrt(np.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=2))
    return np.sum(np.exp(-d))


def rk4_decay(y0, k):
    y = y0.copy()  # (`y = y0` is refused: y0 would be carried with y, see the report)
    h = 0.1

    def rhs(v):
        return -k * v + 0.1 * np.sin(v)

    for _ in range(10):
        k1 = rhs(y)
        k2 = rhs(y + 0.5 * h * k1)
        k3 = rhs(y + 0.5 * h * k2)
        k4 = rhs(y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(y * y)


def leapfrog_oscillator(q0, p0, w):
    q = q0
    p = p0
    dt = 0.05
    for _ in range(20):
        p = p - 0.5 * dt * w * w * q
        q = q + dt * p
        p = p - 0.5 * dt * w * w * q
    return q * q + p * p


# ---- statements real code uses (issue #25): raise, assert, try, string switches ---------------


def huber_loss(r, delta):
    if delta <= 0.0:
        raise ValueError("delta must be positive")
    a = np.abs(r)
    quad = 0.5 * r * r
    lin = delta * (a - 0.5 * delta)
    return np.sum(np.where(a <= delta, quad, lin))


def softplus_checked(x, beta):
    assert x.ndim == 1, "x must be a vector"
    assert beta > 0.0, "beta must be positive"
    return np.sum(np.log1p(np.exp(beta * x)) / beta)


def newton_sqrt(a, x0):
    x = x0
    for _ in range(8):
        if x <= 0.0:
            raise RuntimeError("Newton iterate left the domain")
        x = 0.5 * (x + a / x)
    return x


def gaussian_loglik_try(mu, x):
    try:
        r = x - mu
        ll = -0.5 * np.sum(r * r)
    except FloatingPointError:
        ll = -np.inf
    return ll


def activation_loss(x, w, kind):
    z = x @ w
    if kind == "relu":
        h = np.maximum(z, 0.0)
    elif kind == "tanh":
        h = np.tanh(z)
    elif kind == "softplus":
        h = np.log1p(np.exp(z))
    else:
        raise ValueError("unknown activation: " + "expected relu, tanh or softplus")
    return np.sum(h * h)


def penalised_fit(w, x, y, penalty="l2"):
    r = x @ w - y
    loss = np.mean(r * r)
    if penalty == "l2":
        loss = loss + 0.1 * np.sum(w * w)
    elif penalty == "l1":
        loss = loss + 0.1 * np.sum(np.abs(w))
    elif penalty != "none":
        raise ValueError("penalty must be 'l1', 'l2' or 'none'")
    return loss


# ---- arrays and indexing real code uses (issue #25): out=, masks, index arrays, einsum -------


def mlp_inplace_activations(W1, W2, X, y):
    H = X @ W1
    np.maximum(H, 0, out=H)  # scikit-learn's inplace_relu
    out = H @ W2
    np.tanh(out, out=out)
    return np.mean((out - y) ** 2)


def softmax_cross_entropy(W, X, y):
    n = X.shape[0]
    z = X @ W
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z)
    p /= np.sum(p, axis=1, keepdims=True)
    eps = np.finfo(np.float64).eps
    return -np.mean(np.log(np.maximum(p[np.arange(n), y], eps)))


def nll_take_along_axis(logits, y):
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.take_along_axis(logp, y[:, None], axis=1))


def label_smoothing_ce(logits, y, eps):
    n, c = logits.shape
    t = np.full((n, c), eps / (c - 1))
    np.put_along_axis(t, y[:, None], 1.0 - eps, axis=1)
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.mean(np.sum(t * logp, axis=1))


def smooth_l1(pred, target, beta):
    diff = np.abs(pred - target)
    loss = np.empty_like(diff)
    small = diff < beta
    loss[small] = 0.5 * diff[small] ** 2 / beta
    loss[~small] = diff[~small] - 0.5 * beta
    return loss.mean()


def clipped_relu_energy(x, lo, hi):
    y = x.copy()
    y[y < 0.0] = 0.0
    inside = (x > lo) & (x < hi)
    outside = ~inside | (x > 10.0)
    return np.sum(y[inside] ** 2) + 0.5 * np.sum(x[outside] ** 2) / np.size(x)


def nan_safe_mse(pred, target):
    ok = np.isfinite(target) & ~np.isnan(pred)
    assert np.any(ok), "no finite targets"
    r = pred[ok] - target[ok]
    return np.sum(r * r) / np.sum(ok)


def sparse_sgd_step(w, idx, g):
    w_new = w.copy()
    w_new[idx] -= 0.1 * g  # a repeated index keeps one update, as NumPy applies it
    return np.sum(w_new ** 2 * np.arange(1.0, w.shape[0] + 1))


def scatter_rows(table, idx, rows):
    t = table.copy()
    t[idx] = rows
    return np.sum(np.tanh(t) * t)


def bilinear_attention(q, k, v):
    scores = np.einsum("nd,md->nm", q, k) / np.sqrt(q.shape[1])
    scores = scores - scores.max(axis=1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=1, keepdims=True)
    out = np.einsum("nm,md->nd", w, v)
    return np.sum(np.einsum("nd,nd->n", out, q))


def quadratic_form_einsum(x, A):
    return np.einsum("i,ij,j->", x, A, x) + np.einsum("ii", A @ A.T)


# ---- SciPy functions of arrays (issue #25, item 6) ---------------------------------------------


def poisson_nll(log_rate, counts):
    rate = np.exp(log_rate)
    return np.sum(rate - xlogy(counts, rate) + gammaln(counts + 1.0))


def dirichlet_logpdf(alpha, x):
    return gammaln(np.sum(alpha)) - np.sum(gammaln(alpha)) + np.sum(xlogy(alpha - 1.0, x))


def poisson_pmf_factorial(lam, k):
    return np.sum(k * np.log(lam) - lam - np.log(factorial(k)))


def rosen_gradient_penalty(x):
    return rosen(x) + 1e-3 * np.sum(rosen_der(x) ** 2)


def logistic_probit_mix(w, X, y):
    z = X @ w
    p = 0.5 * expit(z) + 0.25 * (1.0 + erf(z / math.sqrt(2.0)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) + logsumexp(w) * 0.01


def gamma_shape_loglik(log_k, x):
    k = math.exp(log_k)
    n = x.shape[0]
    return (k - 1.0) * np.sum(np.log(x)) - np.sum(x) - n * math.lgamma(k)


def dirichlet_expected_log(alpha, w):
    return np.sum(w * (digamma(alpha) - digamma(np.sum(alpha))))


def max_abs_normalise(x, w):  # a scale taken the way scripts take it: Python's max
    scale = max(abs(x))
    return np.sum(w * x / scale)


def range_penalty(x):  # min/max of a 1-D array and of a tuple
    return (max(x) - min(x)) ** 2 + max((x[0] * x[1], 0.25, x[2]))


def dot_by_zip(a, b):  # pure-Python style dot product (finance and physics scripts)
    return sum(x * y for x, y in zip(a, b))


def weighted_log_terms(w, x):  # a filtered generator, and max of one
    total = sum(wi * np.log(1.0 + xi * xi) for wi, xi in zip(w, x) if xi > -10.0)
    return total + max(abs(v) for v in w)


def pairwise_energy(pos):  # nested generator expressions over index pairs
    n = pos.shape[0]
    return sum(sum(1.0 / (1.0 + (pos[i] - pos[j]) ** 2) for j in range(i)) for i in range(n))


def any_all_switch(x):  # any/all of generators as branch conditions
    if any(v > 2.5 for v in x):
        return np.sum(x ** 2)
    return np.sum(x) * float(all(v > -5.0 for v in x)) + min([v * v for v in x])


# ---- np.random inside the function (issue #25): draws are constants of the call -------------

def dropout_mlp_loss(W, x, y):
    """Inverted dropout on a hidden layer; the mask drawn from a generator seeded in the
    function, as a reproducible training step writes it."""
    rng = np.random.default_rng(0)
    keep = 0.8
    h = np.tanh(x @ W)
    mask = rng.random(h.shape) < keep
    h = h * mask / keep
    return np.mean((h.sum(axis=1) - y) ** 2)


def reparam_gaussian_loss(mu, log_sigma, x):
    """A variational Gaussian's loss: z = mu + sigma * eps drawn by np.random.normal(mu, sigma)
    (the reparameterisation: the gradient flows into mu and sigma), plus the KL term."""
    rng = np.random.default_rng(1)
    sigma = np.exp(log_sigma)
    z = rng.normal(mu, sigma)
    recon = np.sum((x - z) ** 2)
    kl = 0.5 * np.sum(sigma ** 2 + mu ** 2 - 1.0 - 2.0 * log_sigma)
    return recon + kl


def mc_european_call(s0, k, r, sigma, t):
    """Monte-Carlo price of a European call under geometric Brownian motion, the global
    generator seeded in the function: its gradient is the pathwise delta, rho, vega, theta."""
    np.random.seed(7)
    n = 400
    total = 0.0
    for i in range(n):
        z = np.random.randn()
        st = s0 * math.exp((r - 0.5 * sigma * sigma) * t + sigma * math.sqrt(t) * z)
        total += max(st - k, 0.0)
    return math.exp(-r * t) * total / n


# ---- lists, lambdas, walrus, reduce, constant lists and dicts (issue #25, item 3) -------------

SMOOTHING = [0.25, 0.5, 0.25]  # a module-level list of weights, as scripts keep them


def asset_contributions(w, r):  # per-asset terms appended in a loop, then NumPy over them
    contrib = []
    for i in range(len(w)):
        contrib.append(w[i] * r[i])
    return np.std(contrib) + sum(contrib)


def kinetic_energy_list(m, v):  # a list comprehension over particles
    energies = [0.5 * m[i] * np.dot(v[i], v[i]) for i in range(len(m))]
    return sum(energies) + max(energies)


def squared_errors_loop(w, X, y):  # the textbook loss loop: a list of losses, then the mean
    losses = []
    for xi, yi in zip(X, y):
        pred = np.dot(w, xi)
        losses.append((pred - yi) ** 2)
    return np.mean(np.array(losses))


def positive_gain_ratio(returns):  # a filtered comprehension: its length is a run-time value
    gains = [r for r in returns if r > 0]
    losses = [-r for r in returns if r <= 0]
    return sum(gains) / (len(gains) + 1.0) - sum(losses) / (len(losses) + 1.0)


def geometric_mean_reduce(x):
    return reduce(operator.mul, x) ** (1.0 / len(x))


def compounded_growth(rates):
    return reduce(lambda a, b: a * b, [1.0 + r for r in rates], 1.0) - 1.0


def logistic_loss_lambda(w, X, y):
    sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))
    p = sigmoid(X @ w)
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def clipped_step_walrus(x, g):
    step = 0.1 * g
    if (norm := np.sqrt(np.sum(step * step))) > 0.5:
        step = step * (0.5 / norm)
    return np.sum((x - step) ** 2) + norm


def smoothed_by_weights(x):  # constant weights in a list, and a generator over them
    total = 0.0
    for i in range(1, x.shape[0] - 1):
        s = sum(c * x[i + k - 1] for k, c in enumerate(SMOOTHING))
        total += s * s
    return total + np.sum(np.array(SMOOTHING) * x[:3])


def piecewise_knots(x):  # sorted constant knots, zipped with constant slopes
    knots = sorted([0.5, -0.5, 0.0])
    slopes = (1.0, 2.0, 0.5)
    total = 0.0
    for k, a in zip(knots, slopes):
        total += a * np.sum(np.maximum(x - k, 0.0) ** 2)
    return total * len(knots)


def config_dict_penalty(w, x):  # a small dict of settings and arrays made in the function
    p = {"alpha": 0.3, "l1": 0.01, "w": w}
    r = x @ p["w"]
    return np.mean(r * r) + p["alpha"] * np.sum(p["w"] ** 2) + p["l1"] * np.sum(np.abs(w))
