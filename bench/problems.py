"""Reference problems for the jitgrad benchmarks.

Each problem is a plain module-level function, written the way a Numba user writes code:
only NumPy / ``math`` calls, explicit loops where a Numba user would write loops, no
closures, lambdas, ``try`` or classes. ``jitgrad.grad`` reads the *source* of these
functions, so they must stay in that subset (and should not be edited casually: a change
here changes what every benchmark measures).

Every problem returns a Python/NumPy float scalar. Each has a ``make_*`` data generator
that takes sizes and a ``seed`` and returns the positional arguments of the problem as a
tuple, built with ``np.random.default_rng(seed)`` so the same call always gives the same
data (float arrays are float64 and C-contiguous; index arrays are int64).

Problems (arguments in order; the differentiable ones are listed first):

* ``two_layer_loss(W1, b1, W2, b2, inputs, y_true)`` -- softmax cross-entropy of a
  one-hidden-layer ReLU network, written with NumPy array expressions.
  Sizes: ``SMALL_TWO_LAYER`` and ``MNIST_TWO_LAYER``.
* ``rnn_loss(w, x)`` -- scalar tanh RNN over a sequence, a loop with a carried scalar.
* ``gmm_nll(alphas, means, log_prec, x)`` -- diagonal Gaussian mixture negative
  log-likelihood written with explicit loops and a max-shifted logsumexp.
* ``reproj_loss(cams, points, obs, cam_idx, pt_idx)`` -- bundle-adjustment style squared
  reprojection error (pinhole camera with radial distortion), scalar loops with gathers.
* ``control_flow(x, thresh)`` -- loop with an if/elif/else Huber-like update of a running
  state (piecewise, branch depends on data).

Note that ``two_layer_loss`` uses ``keepdims=True`` and ``np.max(..., axis=1)``, which
Numba 0.68 does not compile: it is valid NumPy, and jitgrad is expected to lower it.
"""

import math

import numpy as np

# (batch, n_in, n_hidden, n_out)
SMALL_TWO_LAYER = (16, 8, 16, 4)
MNIST_TWO_LAYER = (128, 784, 256, 10)
# (n,) for rnn_loss
SMALL_RNN = (20,)
BENCH_RNN = (10_000,)
# (n, d, K) for gmm_nll
SMALL_GMM = (30, 3, 4)
BENCH_GMM = (10_000, 10, 25)
# (n_cams, n_points, n_obs) for reproj_loss
SMALL_REPROJ = (3, 10, 40)
BENCH_REPROJ = (50, 2_000, 20_000)
# (n,) for control_flow
SMALL_CONTROL_FLOW = (30,)
BENCH_CONTROL_FLOW = (100_000,)


# --------------------------------------------------------------------------------------
# Two-layer network, softmax cross-entropy
# --------------------------------------------------------------------------------------


def two_layer_loss(W1, b1, W2, b2, inputs, y_true):
    h = np.maximum(inputs @ W1 + b1, 0.0)
    z = h @ W2 + b2
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return -np.mean(np.sum(y_true * np.log(p), axis=1))


def make_two_layer(batch, n_in, n_hidden, n_out, seed=0):
    """Return ``(W1, b1, W2, b2, inputs, y_true)``; ``y_true`` is one-hot (batch, n_out).

    Weights use a 1/sqrt(fan_in) scale so the softmax is neither saturated nor flat.
    """
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((n_in, n_hidden)) / math.sqrt(n_in)
    b1 = 0.1 * rng.standard_normal(n_hidden)
    W2 = rng.standard_normal((n_hidden, n_out)) / math.sqrt(n_hidden)
    b2 = 0.1 * rng.standard_normal(n_out)
    inputs = rng.standard_normal((batch, n_in))
    y_true = np.zeros((batch, n_out))
    y_true[np.arange(batch), rng.integers(0, n_out, size=batch)] = 1.0
    return W1, b1, W2, b2, inputs, y_true


# --------------------------------------------------------------------------------------
# Scalar RNN
# --------------------------------------------------------------------------------------


def rnn_loss(w, x):
    h = 0.0
    loss = 0.0
    for t in range(x.shape[0]):
        h = math.tanh(w * h + x[t])
        loss += h * h
    return loss


def make_rnn(n, seed=0):
    """Return ``(w, x)``: ``w`` a Python float near 0.7, ``x`` ~ 0.5 N(0, 1) of length n."""
    rng = np.random.default_rng(seed)
    w = float(0.7 + 0.05 * rng.standard_normal())
    x = 0.5 * rng.standard_normal(n)
    return w, x


# --------------------------------------------------------------------------------------
# Gaussian mixture model, diagonal covariance
# --------------------------------------------------------------------------------------


def gmm_nll(alphas, means, log_prec, x):
    """Total negative log-likelihood of the points ``x`` (n, d) under a K-component mixture.

    ``alphas`` (K,) are unnormalised log-weights, ``means`` (K, d), and ``log_prec`` (K, d)
    are logs of the inverse standard deviations. Per point and component::

        lp[k] = alphas[k] + sum_j (log_prec[k, j] - 0.5 * (prec[k, j] * (x[j] - means[k, j]))**2)

    and the result is ``n * (logsumexp(alphas) + d/2 log(2 pi)) - sum_i logsumexp_k(lp)``.
    """
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]

    # log-normaliser of the mixture weights: max-shifted logsumexp of alphas
    amax = alphas[0]
    for k in range(1, K):
        if alphas[k] > amax:  # noqa: PLR1730 (kept as a branch on purpose)
            amax = alphas[k]
    asum = 0.0
    for k in range(K):
        asum += math.exp(alphas[k] - amax)
    log_norm = amax + math.log(asum)
    const = 0.5 * d * math.log(2.0 * math.pi)

    prec = np.exp(log_prec)
    lp = np.empty(K)
    total = 0.0
    for i in range(n):
        # first pass: per-component log-density, tracking the max
        lmax = -math.inf
        for k in range(K):
            s = alphas[k]
            for j in range(d):
                r = prec[k, j] * (x[i, j] - means[k, j])
                s += log_prec[k, j] - 0.5 * r * r
            lp[k] = s
            if s > lmax:  # noqa: PLR1730
                lmax = s
        # second pass: shifted sum of exponentials
        se = 0.0
        for k in range(K):
            se += math.exp(lp[k] - lmax)
        total += lmax + math.log(se)
    return n * (log_norm + const) - total


def make_gmm(n, d, K, seed=0):
    """Return ``(alphas, means, log_prec, x)`` with ``x`` (n, d) drawn from a mixture.

    The returned parameters are a perturbed version of the generating ones, so the
    gradient is not close to zero.
    """
    rng = np.random.default_rng(seed)
    true_means = 3.0 * rng.standard_normal((K, d))
    true_std = np.exp(0.3 * rng.standard_normal((K, d)))
    comp = rng.integers(0, K, size=n)
    x = true_means[comp] + true_std[comp] * rng.standard_normal((n, d))
    alphas = 0.5 * rng.standard_normal(K)
    means = true_means + 0.3 * rng.standard_normal((K, d))
    log_prec = -np.log(true_std) + 0.1 * rng.standard_normal((K, d))
    return alphas, means, log_prec, x


def gmm_adbench(alphas, means, icf, x):
    """ADBench's Gaussian-mixture objective in its loop form (the data term and the weights'
    normaliser; no Wishart prior), with Q applied row by row.

    ``icf`` (K, d + d(d-1)/2) holds, per component, the log-diagonal of the lower-triangular
    inverse Cholesky factor Q_k (first d entries) and its off-diagonal entries row by row.
    Q_k is applied one row at a time in an inner ``for c in range(r)`` loop (a dot product
    per row: ADBench's C++ applies it by columns, an update of the output per entry, which is
    `gmm_adbench_cols`), and the K-vector ``beta`` is overwritten for every point (a two-pass,
    max-shifted logsumexp). As in ADBench, the diagonals exp(icf[k, :d]) and their logs' sums
    are computed once, before the loop over points::

        value = -n d/2 log(2 pi) + sum_i logsumexp_k(alphas[k] + sum(icf[k, :d])
                                                     - |Q_k (x_i - means_k)|^2 / 2)
                - n logsumexp(alphas)
    """
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += math.exp(alphas[k] - amax)
    lse_alphas = amax + math.log(asum)
    sum_qs = np.zeros(K)
    qdiags = np.exp(icf[:, :d])
    for k in range(K):
        for j in range(d):
            sum_qs[k] += icf[k, j]
    xc = np.zeros(d)
    beta = np.zeros(K)
    slse = 0.0
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - means[k, j]
            sqsum = 0.0
            idx = d
            for r in range(d):
                s = qdiags[k, r] * xc[r]
                for c in range(r):
                    s += icf[k, idx] * xc[c]
                    idx += 1
                sqsum += s * s
            beta[k] = alphas[k] + sum_qs[k] - 0.5 * sqsum
        bmax = beta[0]
        for k in range(1, K):
            bmax = max(bmax, beta[k])
        se = 0.0
        for k in range(K):
            se += math.exp(beta[k] - bmax)
        slse += bmax + math.log(se)
    return -0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas


def gmm_adbench_cols(alphas, means, icf, x):
    """`gmm_adbench` as ADBench's C++ writes it (``gmm.h``: ``Qtimesx``): ``icf`` holds Q_k's
    off-diagonal entries column by column, and Q_k (x - mu_k) is the diagonal's product
    updated one column at a time, ``out[r] += Q[r, c] * xc[c]`` for the rows below ``c``.
    Its sum of squares is then a loop of its own. Same value formula as `gmm_adbench` (with
    the entries of ``icf`` read in the other order)."""
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += math.exp(alphas[k] - amax)
    lse_alphas = amax + math.log(asum)
    sum_qs = np.zeros(K)
    qdiags = np.exp(icf[:, :d])
    for k in range(K):
        for j in range(d):
            sum_qs[k] += icf[k, j]
    xc = np.zeros(d)
    qxc = np.zeros(d)
    beta = np.zeros(K)
    slse = 0.0
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - means[k, j]
            for j in range(d):
                qxc[j] = qdiags[k, j] * xc[j]
            idx = d
            for c in range(d):
                for r in range(c + 1, d):
                    qxc[r] += icf[k, idx] * xc[c]
                    idx += 1
            sqsum = 0.0
            for j in range(d):
                sqsum += qxc[j] * qxc[j]
            beta[k] = alphas[k] + sum_qs[k] - 0.5 * sqsum
        bmax = beta[0]
        for k in range(1, K):
            bmax = max(bmax, beta[k])
        se = 0.0
        for k in range(K):
            se += math.exp(beta[k] - bmax)
        slse += bmax + math.log(se)
    return -0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas


def make_adbench_gmm(n, d, K, seed=0):
    """Return ``(alphas, means, icf, x)`` for `gmm_adbench` and `gmm_adbench_cols`: points from a mixture, and
    parameters near the generating ones (so the gradient is not close to zero)."""
    rng = np.random.default_rng(seed)
    true_means = 3.0 * rng.standard_normal((K, d))
    comp = rng.integers(0, K, size=n)
    x = true_means[comp] + rng.standard_normal((n, d))
    alphas = 0.5 * rng.standard_normal(K)
    means = true_means + 0.3 * rng.standard_normal((K, d))
    icf = np.concatenate([0.1 * rng.standard_normal((K, d)),
                          0.1 * rng.standard_normal((K, d * (d - 1) // 2))], axis=1)
    return alphas, means, icf, x


# --------------------------------------------------------------------------------------
# Bundle-adjustment style reprojection error
# --------------------------------------------------------------------------------------


def reproj_loss(cams, points, obs, cam_idx, pt_idx):
    """Sum of squared reprojection residuals.

    ``cams`` (n_cams, 6): translation (3), focal length, radial distortion k1, k2 -- no
    rotation. ``points`` (n_points, 3), ``obs`` (n_obs, 2) observed image coordinates,
    ``cam_idx`` / ``pt_idx`` (n_obs,) int64 indices of the camera and point of each
    observation. Projection of point X by camera c::

        Y = X + t;  u = Y[:2] / Y[2];  r2 = |u|^2;  proj = f * (1 + k1 r2 + k2 r2^2) * u
    """
    loss = 0.0
    for o in range(obs.shape[0]):
        c = cam_idx[o]
        p = pt_idx[o]
        y0 = points[p, 0] + cams[c, 0]
        y1 = points[p, 1] + cams[c, 1]
        y2 = points[p, 2] + cams[c, 2]
        u0 = y0 / y2
        u1 = y1 / y2
        r2 = u0 * u0 + u1 * u1
        scale = cams[c, 3] * (1.0 + cams[c, 4] * r2 + cams[c, 5] * r2 * r2)
        e0 = scale * u0 - obs[o, 0]
        e1 = scale * u1 - obs[o, 1]
        loss += e0 * e0 + e1 * e1
    return loss


def make_reproj(n_cams, n_points, n_obs, seed=0):
    """Return ``(cams, points, obs, cam_idx, pt_idx)``.

    Points sit at depth 4..6 in front of every camera (translations are small), so the
    projection never divides by a value near zero. ``obs`` are the projections at the
    generating parameters plus noise; the returned ``cams`` / ``points`` are perturbed.
    Every camera and point is observed at least once when ``n_obs >= max(n_cams, n_points)``.
    """
    rng = np.random.default_rng(seed)
    cams = np.empty((n_cams, 6))
    cams[:, 0:3] = 0.2 * rng.standard_normal((n_cams, 3))
    cams[:, 3] = 1.0 + 0.05 * rng.standard_normal(n_cams)
    cams[:, 4] = 0.05 * rng.standard_normal(n_cams)
    cams[:, 5] = 0.01 * rng.standard_normal(n_cams)
    points = np.empty((n_points, 3))
    points[:, 0:2] = rng.uniform(-2.0, 2.0, size=(n_points, 2))
    points[:, 2] = rng.uniform(4.0, 6.0, size=n_points)
    cam_idx = rng.integers(0, n_cams, size=n_obs).astype(np.int64)
    pt_idx = rng.integers(0, n_points, size=n_obs).astype(np.int64)
    m = min(n_obs, max(n_cams, n_points))
    cam_idx[:m] = np.arange(m) % n_cams
    pt_idx[:m] = np.arange(m) % n_points
    obs = np.empty((n_obs, 2))
    for o in range(n_obs):
        cam = cams[cam_idx[o]]
        y = points[pt_idx[o]] + cam[0:3]
        u = y[0:2] / y[2]
        r2 = u @ u
        obs[o] = cam[3] * (1.0 + cam[4] * r2 + cam[5] * r2 * r2) * u
    obs += 0.01 * rng.standard_normal((n_obs, 2))
    cams = cams + 0.01 * rng.standard_normal(cams.shape)
    points = points + 0.05 * rng.standard_normal(points.shape)
    return cams, points, obs, cam_idx, pt_idx


# --------------------------------------------------------------------------------------
# Data-dependent control flow
# --------------------------------------------------------------------------------------


def control_flow(x, thresh):
    """Huber loss of each element's residual against a running state, summed.

    The residual ``r = x[i] - 0.5 * state`` is penalised quadratically inside
    ``[-thresh, thresh]`` and linearly outside; the state is a leaky sum of the clipped
    residuals, so each branch also changes how the state evolves.
    """
    state = 0.0
    total = 0.0
    for i in range(x.shape[0]):
        r = x[i] - 0.5 * state
        if r > thresh:
            total += thresh * (r - 0.5 * thresh)
            state = 0.9 * state + thresh
        elif r < -thresh:
            total += thresh * (-r - 0.5 * thresh)
            state = 0.9 * state - thresh
        else:
            total += 0.5 * r * r
            state = 0.9 * state + r
    return total


def make_control_flow(n, seed=0):
    """Return ``(x, thresh)``: ``x`` ~ N(0, 1) of length n and ``thresh`` = 1.0 (float).

    With these scales about 18% of the steps take each linear branch, 64% the quadratic one.
    """
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    return x, 1.0
