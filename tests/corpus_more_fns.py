"""More functions written the way public Numba code is written (issue #11, third slice):
barrier options, PDE steps with boundary conditions, a particle filter on fixed noise, Kalman
filters, splines, softmax regression, robust losses, Poisson and Gamma likelihoods, AR and
GARCH recurrences, distance matrices, attention; running products (``np.cumprod``), ``.flat``
reads and ``np.ndindex`` loops. Every function returns a scalar and leaves its arguments alone.
"""

import math

import numpy as np

# ---- pricing ------------------------------------------------------------------------------------


def down_and_out_call_mc(s0, sigma, barrier, z):
    """Monte Carlo down-and-out call on fixed normal draws ``z`` (paths x steps): a path that
    touches the barrier is knocked out (a ``break`` in the path loop)."""
    n_paths, n_steps = z.shape
    dt = 1.0 / n_steps
    r = 0.02
    strike = 100.0
    drift = (r - 0.5 * sigma * sigma) * dt
    vol = sigma * math.sqrt(dt)
    total = 0.0
    for p in range(n_paths):
        s = s0
        alive = True
        for t in range(n_steps):
            s = s * math.exp(drift + vol * z[p, t])
            if s <= barrier:
                alive = False
                break
        if alive and s > strike:
            total += s - strike
    return math.exp(-r) * total / n_paths


def up_and_out_binomial(s0, sigma, barrier):
    """A binomial tree for an up-and-out put: nodes at or above the barrier are worth 0."""
    n = 12
    strike = 100.0
    r = 0.03
    dt = 1.0 / n
    u = math.exp(sigma * math.sqrt(dt))
    d = 1.0 / u
    q = (math.exp(r * dt) - d) / (u - d)
    disc = math.exp(-r * dt)
    v = np.empty(n + 1)
    for j in range(n + 1):
        s = s0 * u ** j * d ** (n - j)
        v[j] = 0.0 if s >= barrier else max(strike - s, 0.0)
    for step in range(n - 1, -1, -1):
        for j in range(step + 1):
            s = s0 * u ** j * d ** (step - j)
            if s >= barrier:
                v[j] = 0.0
            else:
                v[j] = disc * (q * v[j + 1] + (1.0 - q) * v[j])
    return v[0]


# ---- PDE steps with boundary conditions --------------------------------------------------------


def heat_dirichlet_neumann(u0, alpha, left):
    """Explicit heat steps: the left end held at ``left`` (Dirichlet), the right end with zero
    flux (Neumann, a ghost node equal to its neighbour)."""
    u = u0.copy()
    n = u.shape[0]
    for _ in range(15):
        un = u.copy()
        for i in range(1, n - 1):
            un[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        un[0] = left
        un[n - 1] = un[n - 2]
        u = un
    return np.sum(u * u)


def implicit_heat_step(u, alpha):
    """One backward-Euler step: (I - alpha L) u_new = u with a tridiagonal L, then a second."""
    n = u.shape[0]
    a = np.eye(n) * (1.0 + 2.0 * alpha)
    for i in range(n - 1):
        a[i, i + 1] = -alpha
        a[i + 1, i] = -alpha
    v = np.linalg.solve(a, u)
    w = np.linalg.solve(a, v)
    return np.sum(w * w) + w[0]


def wave_fixed_ends(u0, v0, c):
    """Leapfrog for the wave equation with both ends fixed at zero."""
    n = u0.shape[0]
    dt = 0.1
    prev = u0.copy()
    cur = u0 + dt * v0
    cur[0] = 0.0
    cur[n - 1] = 0.0
    for _ in range(10):
        nxt = np.zeros(n)
        for i in range(1, n - 1):
            nxt[i] = 2.0 * cur[i] - prev[i] + (c * dt) ** 2 * (cur[i + 1] - 2.0 * cur[i]
                                                              + cur[i - 1])
        prev = cur
        cur = nxt
    return np.sum(cur * cur)


def ndindex_laplacian_energy(u, k):
    """A 5-point Laplacian over the interior of a grid, visited with ``np.ndindex``; the
    boundary is skipped with ``continue``."""
    n, m = u.shape
    e = 0.0
    for idx in np.ndindex(u.shape):
        i, j = idx
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            continue
        lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[idx]
        e += k * lap * lap
    return e


# ---- filters --------------------------------------------------------------------------------


def particle_filter_loglik(y, phi, sigma, noise):
    """A bootstrap particle filter for x_t = phi x_{t-1} + sigma e_t, y_t ~ N(x_t, 1), on fixed
    noise (time x particles) and without resampling: the log-likelihood estimate."""
    n_t, n_p = noise.shape
    x = np.zeros(n_p)
    logw = np.zeros(n_p)
    ll = 0.0
    for t in range(n_t):
        x = phi * x + sigma * noise[t]
        logw = logw - 0.5 * (y[t] - x) ** 2
        m = np.max(logw)
        w = np.exp(logw - m)
        ll += m + np.log(np.sum(w)) - np.log(n_p)
        logw = np.log(w / np.sum(w))
    return ll


def kalman_1d_nll(y, a, q, r):
    """Scalar Kalman filter: the negative log-likelihood of the innovations."""
    m = 0.0
    p = 1.0
    nll = 0.0
    for t in range(y.shape[0]):
        m = a * m
        p = a * a * p + q
        s = p + r
        v = y[t] - m
        nll += 0.5 * (math.log(2.0 * math.pi * s) + v * v / s)
        k = p / s
        m = m + k * v
        p = (1.0 - k) * p
    return nll


def kalman_update(x, p, h, r, y):
    """One multivariate Kalman measurement update; loss: the posterior mean's size and the
    posterior covariance's trace."""
    s = h @ p @ h.T + r
    k = p @ h.T @ np.linalg.inv(s)
    innov = y - h @ x
    x_new = x + k @ innov
    p_new = (np.eye(x.shape[0]) - k @ h) @ p
    return np.sum(x_new * x_new) + np.trace(p_new)


# ---- splines and interpolation ----------------------------------------------------------------


def cubic_spline_eval(coef, knots, xq):
    """Piecewise cubic with coefficients ``coef[j]`` on [knots[j], knots[j+1]): find each
    query's interval with a while loop, then Horner."""
    total = 0.0
    n = knots.shape[0]
    for i in range(xq.shape[0]):
        j = 0
        while j < n - 2 and xq[i] >= knots[j + 1]:
            j += 1
        t = xq[i] - knots[j]
        v = coef[j, 3]
        for c in range(2, -1, -1):
            v = v * t + coef[j, c]
        total += v * v
    return total


def linear_interp_loss(xp, fp, xq):
    """np.interp written out (sorted xp, clamped at the ends), the way Numba kernels do it."""
    n = xp.shape[0]
    s = 0.0
    for i in range(xq.shape[0]):
        x = xq[i]
        if x <= xp[0]:
            v = fp[0]
        elif x >= xp[n - 1]:
            v = fp[n - 1]
        else:
            j = 1
            while xp[j] < x:
                j += 1
            w = (x - xp[j - 1]) / (xp[j] - xp[j - 1])
            v = (1.0 - w) * fp[j - 1] + w * fp[j]
        s += v * v
    return s


# ---- regression -------------------------------------------------------------------------------


def softmax_regression(w, b, x, y_onehot):
    z = x @ w + b
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y_onehot * logp) / x.shape[0] + 0.01 * np.sum(w * w)


def softmax_regression_loops(w, x, labels):
    """The same with loops and integer labels used as an index."""
    n, d = x.shape
    k = w.shape[1]
    loss = 0.0
    for i in range(n):
        z = np.zeros(k)
        for c in range(k):
            for f in range(d):
                z[c] += x[i, f] * w[f, c]
        m = np.max(z)
        lse = m + math.log(np.sum(np.exp(z - m)))
        loss += lse - z[labels[i]]
    return loss / n


def huber_regression(w, x, y, delta):
    loss = 0.0
    for i in range(x.shape[0]):
        r = y[i] - np.dot(x[i], w)
        if abs(r) <= delta:
            loss += 0.5 * r * r
        else:
            loss += delta * (abs(r) - 0.5 * delta)
    return loss


def tukey_cauchy_losses(w, x, y, c):
    """Cauchy loss on all residuals plus Tukey's biweight (constant beyond ``c``)."""
    r = y - x @ w
    cauchy = np.sum(np.log1p((r / c) ** 2))
    tukey = 0.0
    for i in range(r.shape[0]):
        u = r[i] / c
        if abs(u) < 1.0:
            tukey += c * c / 6.0 * (1.0 - (1.0 - u * u) ** 3)
        else:
            tukey += c * c / 6.0
    return cauchy + tukey


def squared_hinge_svm(w, b, x, y):
    loss = 0.0
    for i in range(x.shape[0]):
        m = y[i] * (np.dot(w, x[i]) + b)
        if m < 1.0:
            loss += (1.0 - m) ** 2
    return loss + 0.5 * np.dot(w, w)


# ---- likelihoods ------------------------------------------------------------------------------


def poisson_glm_nll(beta, x, counts):
    eta = x @ beta
    return np.sum(np.exp(eta) - counts * eta)


def gamma_glm_nll(beta, x, y, shape):
    """Gamma regression with a log link (without the log-Gamma normaliser, which needs the
    digamma function for its derivative)."""
    mu = np.exp(x @ beta)
    return shape * np.sum(y / mu + np.log(mu)) - (shape - 1.0) * np.sum(np.log(y))


def poisson_loglik_loop(lam, counts):
    """Poisson log-likelihood with a log-factorial table built in the loop (as Numba code
    avoids lgamma)."""
    ll = 0.0
    for i in range(counts.shape[0]):
        k = counts[i]
        logfact = 0.0
        for m in range(2, k + 1):
            logfact += math.log(m)
        ll += k * math.log(lam[i]) - lam[i] - logfact
    return -ll


# ---- time series ------------------------------------------------------------------------------


def ar_p_sse(phi, x):
    p = phi.shape[0]
    sse = 0.0
    for t in range(p, x.shape[0]):
        pred = 0.0
        for k in range(p):
            pred += phi[k] * x[t - k - 1]
        e = x[t] - pred
        sse += e * e
    return sse


def garch11_nll(omega, alpha, beta, r):
    s2 = np.var(r)
    nll = 0.0
    for t in range(1, r.shape[0]):
        s2 = omega + alpha * r[t - 1] ** 2 + beta * s2
        nll += 0.5 * (math.log(s2) + r[t] ** 2 / s2)
    return nll


def holt_linear_sse(alpha, beta, y):
    level = y[0]
    trend = y[1] - y[0]
    sse = 0.0
    for t in range(1, y.shape[0]):
        forecast = level + trend
        e = y[t] - forecast
        sse += e * e
        new_level = alpha * y[t] + (1.0 - alpha) * forecast
        trend = beta * (new_level - level) + (1.0 - beta) * trend
        level = new_level
    return sse


def survival_cumprod(hazard, w):
    """A discrete survival curve S_t = prod_{s<=t} (1 - h_s): expected (weighted) lifetime."""
    surv = np.cumprod(1.0 - hazard)
    return np.sum(surv * w) + surv[-1]


# ---- distances and kernels --------------------------------------------------------------------


def rbf_distance_matrix(x, y, gamma):
    n, d = x.shape
    m = y.shape[0]
    k = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            s = 0.0
            for f in range(d):
                diff = x[i, f] - y[j, f]
                s += diff * diff
            k[i, j] = math.exp(-gamma * s)
    return np.sum(k) - np.trace(k[:, :n])


def mahalanobis_sum(x, mu, prec_chol):
    total = 0.0
    for i in range(x.shape[0]):
        z = prec_chol @ (x[i] - mu)
        total += np.sqrt(np.dot(z, z) + 1e-12)
    return total


def flat_weights_energy(x, w):
    """Reads through ``.flat``: a weight per entry of a matrix, in row-major order."""
    e = 0.0
    for k in range(x.size):
        e += w[k] * x.flat[k] ** 2
    return e + x.flat[x.size - 1]


# ---- attention --------------------------------------------------------------------------------


def attention(q, k, v):
    d = q.shape[1]
    s = q @ k.T / np.sqrt(d)
    s = s - np.max(s, axis=1, keepdims=True)
    p = np.exp(s)
    p = p / np.sum(p, axis=1, keepdims=True)
    out = p @ v
    return np.sum(out * out)


def causal_attention_loops(q, k, v):
    n, d = q.shape
    scale = 1.0 / math.sqrt(d)
    total = 0.0
    for i in range(n):
        scores = np.full(n, -np.inf)
        for j in range(n):
            if j > i:
                continue
            scores[j] = np.dot(q[i], k[j]) * scale
        m = np.max(scores)
        p = np.exp(scores - m)
        p = p / np.sum(p)
        o = p @ v
        total += np.sum(o * o)
    return total


def lotka_volterra_rk2(a, b, c, d):
    x, y = 1.0, 0.5
    h = 0.05
    for _ in range(40):
        fx = a * x - b * x * y
        fy = c * x * y - d * y
        xm, ym = x + 0.5 * h * fx, y + 0.5 * h * fy
        x = x + h * (a * xm - b * xm * ym)
        y = y + h * (c * xm * ym - d * ym)
    return x + y
