"""The third real-code corpus table (issue #11): one ``Case`` per function of
``corpus_more_fns``, in the style of ``corpus.py``: each checked for every float argument it
names against finite differences, plain Python and the tape, with points on every side of each
branch (and away from the kinks and jumps, where finite differences mean nothing)."""

from __future__ import annotations

import math

import corpus_more_fns as F
import numpy as np
from corpus import N, U, case


def _spd(rng, n):
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def _barrier_mc(rng):
    """Some paths knocked out and some not; no path near the barrier, no end near the
    strike (the payoff jumps or bends there)."""
    pts = []
    while len(pts) < 2:
        s0, sigma, barrier = rng.uniform(97, 103), rng.uniform(0.2, 0.3), rng.uniform(92, 95)
        z = rng.normal(size=(12, 8))
        dt = 1.0 / 8
        paths = s0 * np.exp(np.cumsum((0.02 - 0.5 * sigma ** 2) * dt
                                      + sigma * math.sqrt(dt) * z, axis=1))
        low = paths.min(axis=1)
        out = low <= barrier
        if (np.min(np.abs(paths - barrier)) > 0.3 and np.min(np.abs(paths[:, -1] - 100.0)) > 0.3
                and out.any() and (~out & (paths[:, -1] > 100.0)).any()):
            pts.append((s0, sigma, barrier, z))
    return pts


def _binomial_barrier(rng):
    pts = []
    while len(pts) < 2:
        s0, sigma, barrier = rng.uniform(95, 105), rng.uniform(0.15, 0.3), rng.uniform(112, 125)
        u = math.exp(sigma * math.sqrt(1.0 / 12))
        nodes = np.array([s0 * u ** (2 * j - step) for step in range(13) for j in range(step + 1)])
        if (np.min(np.abs(nodes - barrier)) > 0.3 and np.min(np.abs(nodes - 100.0)) > 0.3
                and (nodes >= barrier).any()):
            pts.append((s0, sigma, barrier))
    return pts


def _kalman(rng):
    return [(rng.normal(size=3), _spd(rng, 3), rng.normal(size=(2, 3)), _spd(rng, 2),
             rng.normal(size=2)) for _ in range(2)]


def _spline(rng):
    knots = np.arange(5.0)
    pts = []
    while len(pts) < 2:
        xq = rng.uniform(0.05, 3.95, size=6)
        if np.min(np.abs(xq[:, None] - knots[None, :])) > 0.05:
            pts.append((rng.normal(size=(4, 4)), knots, xq))
    return pts


def _interp(rng):
    pts = []
    while len(pts) < 2:
        xp = np.sort(rng.uniform(0.0, 4.0, size=5))
        xq = np.concatenate(([-0.5, 4.5], rng.uniform(0.0, 4.0, size=4)))
        if (np.min(np.diff(xp)) > 0.2
                and np.min(np.abs(xq[:, None] - xp[None, :])) > 0.05):
            pts.append((xp, rng.normal(size=5), xq))
    return pts


def _softmax(rng):
    pts = []
    for _ in range(2):
        x = rng.normal(size=(6, 3))
        y = np.eye(4)[rng.integers(0, 4, size=6)]
        pts.append((rng.normal(size=(3, 4)), rng.normal(size=4), x, y))
    return pts


def _robust(threshold, lo=0.3, hi=1.5):
    """Residuals on both sides of ``threshold`` (scaled by the last argument), none near it."""
    def points(rng):
        pts = []
        while len(pts) < 2:
            w, x, t = rng.normal(size=3), rng.normal(size=(8, 3)), rng.uniform(lo, hi)
            y = x @ w + rng.normal(scale=1.5, size=8)
            u = np.abs(y - x @ w) / t
            if np.min(np.abs(u - threshold)) > 0.05 and (u < threshold).any() and (
                    u > threshold).any():
                pts.append((w, x, y, t))
        return pts
    return points


def _svm(rng):
    pts = []
    while len(pts) < 2:
        w, b, x = rng.normal(size=3), rng.normal(), rng.normal(size=(8, 3))
        y = np.where(rng.uniform(size=8) > 0.5, 1.0, -1.0)
        m = y * (x @ w + b)
        if np.min(np.abs(m - 1.0)) > 0.05 and (m < 1.0).any() and (m > 1.0).any():
            pts.append((w, b, x, y))
    return pts


def _glm(rng):
    return [(rng.normal(size=3) * 0.3, rng.normal(size=(7, 3)),
             rng.poisson(2.0, size=7).astype(float)) for _ in range(2)]


def _gamma(rng):
    return [(rng.normal(size=3) * 0.3, rng.normal(size=(7, 3)), rng.uniform(0.5, 2.0, size=7),
             rng.uniform(1.5, 3.0)) for _ in range(2)]


def _survival(rng):
    h = rng.uniform(0.0, 0.5, size=6)
    one = h.copy()
    one[3] = 1.0  # certain death at step 3: the survival curve is exactly 0 from there on
    two = h.copy()
    two[[1, 4]] = 1.0
    w = rng.uniform(0.5, 1.5, size=6)
    return [(h, w), (one, w), (two, w)]


def _mahalanobis(rng):
    return [(rng.normal(size=(5, 3)), rng.normal(size=3),
             np.tril(rng.normal(size=(3, 3))) + 2.0 * np.eye(3)) for _ in range(2)]


MORE_CASES = [
    case(F.down_and_out_call_mc, points=_barrier_mc, wrt=(0, 1), tol=1e-4),
    case(F.up_and_out_binomial, points=_binomial_barrier, wrt=(0, 1), tol=1e-4),
    case(F.heat_dirichlet_neumann, N(8), U(0.1, 0.4), N()),
    case(F.implicit_heat_step, N(6), U(0.2, 1.0)),
    case(F.wave_fixed_ends, N(7), N(7), U(0.5, 1.0)),
    case(F.ndindex_laplacian_energy, N(4, 5), U(0.5, 1.5)),
    case(F.particle_filter_loglik, N(6), U(0.5, 0.9), U(0.5, 1.5), N(6, 5)),
    case(F.kalman_1d_nll, N(8), U(0.5, 0.95), U(0.1, 1.0), U(0.1, 1.0)),
    case(F.kalman_update, points=_kalman),
    case(F.cubic_spline_eval, points=_spline, wrt=(0, 2)),
    case(F.linear_interp_loss, points=_interp),
    case(F.softmax_regression, points=_softmax, wrt=(0, 1, 2)),
    case(F.softmax_regression_loops, N(3, 4), N(5, 3), np.array([0, 3, 1, 2, 0])),
    case(F.huber_regression, points=_robust(1.0)),
    case(F.tukey_cauchy_losses, points=_robust(1.0, 1.0, 2.5)),
    case(F.squared_hinge_svm, points=_svm, wrt=(0, 1, 2)),
    case(F.poisson_glm_nll, points=_glm, wrt=(0, 1)),
    case(F.gamma_glm_nll, points=_gamma),
    case(F.poisson_loglik_loop, U(0.5, 3.0, 5), np.array([0, 1, 3, 2, 5])),
    case(F.ar_p_sse, N(3, s=0.3), N(10)),
    case(F.garch11_nll, U(0.05, 0.2), U(0.05, 0.2), U(0.5, 0.8), N(10)),
    case(F.holt_linear_sse, U(0.2, 0.8), U(0.1, 0.5), N(8)),
    case(F.survival_cumprod, points=_survival),
    case(F.rbf_distance_matrix, N(3, 2), N(4, 2), U(0.3, 1.0)),
    case(F.mahalanobis_sum, points=_mahalanobis),
    case(F.flat_weights_energy, N(3, 4), N(12)),
    case(F.attention, N(4, 3), N(5, 3), N(5, 2)),
    case(F.causal_attention_loops, N(4, 3), N(4, 3), N(4, 2)),
    case(F.lotka_volterra_rk2, U(0.8, 1.2), U(0.3, 0.6), U(0.3, 0.6), U(0.8, 1.2)),
]

# Functions the tape cannot run (math.* converts a Tensor with float(); it records no write
# into an array made by np.zeros/np.empty/np.full).
TAPE_REFUSES = {"down_and_out_call_mc", "up_and_out_binomial", "wave_fixed_ends",
                "kalman_1d_nll", "softmax_regression_loops", "poisson_loglik_loop",
                "garch11_nll", "rbf_distance_matrix", "causal_attention_loops"}

assert len({c.name for c in MORE_CASES}) == len(MORE_CASES)
