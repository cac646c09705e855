"""The domain corpus table (issue #43 item 3): one ``DomainCase`` per entry function of
``corpus_domains_fns``.

Each case names its domain and the public project whose forms the function follows, an
argument maker (``make()`` returns fresh arguments, drawn from a generator seeded by the case
name, at a point clear of kinks: clipped values away from their bounds, ``min``/``max`` and
``np.where`` arguments apart, events away from breakpoints; ``accept`` functions below replay
a function's branches to check this), the arguments to differentiate, the tolerance, whether
the NumPy code runs unchanged under ``jax.numpy`` (``jax=True``: ``corpus_domains_jax``), and
the status jitgrad gives it today (``EXPECTED``; the test fails when one changes, so that a
case jitgrad learns to differentiate is moved here, with its gradient then checked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import corpus_domains_fns as F
import numpy as np
from corpus import rng_for


@dataclass(frozen=True, eq=False)
class DomainCase:
    name: str
    domain: str
    project: str
    fn: object = field(repr=False)
    maker: object = field(repr=False)
    wrt: tuple
    tol: float = 1e-5
    jax: bool = False

    def make(self):
        """Fresh arguments (the same on every call)."""
        return self.maker(rng_for(self.name))

    @property
    def expected(self):
        return EXPECTED.get(self.name, "differentiates")


def _accepting(draw, accept, tries=2000):
    def maker(rng):
        for _ in range(tries):
            args = draw(rng)
            if accept is None or accept(*args):
                return args
        raise RuntimeError("no point found clear of the kinks")

    return maker


CASES = []


def dcase(fn, domain, project, draw, wrt, tol=1e-5, jax=False, accept=None):
    CASES.append(DomainCase(fn.__name__, domain, project, fn, _accepting(draw, accept),
                            tuple(wrt), tol, jax))


def u(rng, lo, hi, *shape):
    return float(rng.uniform(lo, hi)) if not shape else rng.uniform(lo, hi, size=shape)


def nrm(rng, *shape, s=1.0, m=0.0):
    return float(rng.normal(m, s)) if not shape else rng.normal(m, s, size=shape)


def signed(rng, lo, hi, *shape):
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(lo, hi, size=shape)


def gap_ok(a, b, margin):
    return bool(np.all(np.abs(np.asarray(a) - np.asarray(b)) > margin))


# ---- photovoltaics -----------------------------------------------------------------------------

PV = "photovoltaics"
PVLIB = "pvlib-python"

dcase(F.poa_isotropic_np, PV, PVLIB, lambda r: (
    u(r, 20, 40), u(r, 160, 200), u(r, 20, 60, 6), u(r, 120, 240, 6), u(r, 500, 900, 6),
    u(r, 400, 800, 6), u(r, 50, 150, 6)), wrt=range(7), jax=True)
dcase(F.pv_energy_np, PV, PVLIB, lambda r: (
    u(r, 200, 1000, 6), u(r, 10, 30, 6), u(r, 0.5, 5, 6), u(r, 200, 300), u(r, -0.005, -0.003)),
    wrt=range(5), jax=True)
dcase(F.bishop88_power_np, PV, PVLIB, lambda r: (
    np.linspace(0.0, 36.0, 8) + u(r, 0.1, 0.3, 8), u(r, 7, 9), 1e-9 * u(r, 0.5, 2),
    u(r, 0.2, 0.5), u(r, 200, 400), u(r, 1.6, 1.8)), wrt=range(6), jax=True)
dcase(F.single_diode_current_nb, PV, PVLIB, lambda r: (
    np.linspace(1.0, 34.0, 6) + u(r, 0.0, 0.5, 6), u(r, 7, 9), 1e-9 * u(r, 0.5, 2),
    u(r, 0.2, 0.5), u(r, 200, 400), u(r, 1.6, 1.8)), wrt=range(6))
dcase(F.haydavies_np, PV, PVLIB, lambda r: (
    u(r, 20, 40), u(r, 160, 200), u(r, 50, 150, 6), u(r, 500, 900, 6), u(r, 1360, 1370),
    u(r, 20, 60, 6), u(r, 120, 240, 6)), wrt=range(7), jax=True)
dcase(F.physical_iam_np, PV, PVLIB, lambda r: (u(r, 5, 80, 6),), wrt=(0,), jax=True)
dcase(F.solar_zenith_nb, PV, PVLIB, lambda r: (
    u(r, 150, 200), u(r, 8, 16, 6), u(r, 35, 45), u(r, -10, 10)), wrt=(0, 1, 2, 3))
dcase(F.pvwatts_ac_np, PV, PVLIB, lambda r: (
    np.array([50.0, 120.0, 180.0, 220.0, 285.0, 300.0]) + u(r, -5, 5, 6), u(r, 248, 252)),
    wrt=(0, 1), jax=False)


# ---- power systems -----------------------------------------------------------------------------

PS = "power systems"
F3 = np.array([0, 1, 0])
T3 = np.array([1, 2, 2])


def _ybus_gb(r, x):
    y = 1 / (r + 1j * x)
    Y = np.zeros((3, 3), dtype=complex)
    for k in range(3):
        Y[F3[k], F3[k]] += y[k]
        Y[T3[k], T3[k]] += y[k]
        Y[F3[k], T3[k]] -= y[k]
        Y[T3[k], F3[k]] -= y[k]
    return Y.real.copy(), Y.imag.copy()


dcase(F.power_mismatch_complex, PS, "PYPOWER", lambda r: (
    u(r, 0.95, 1.05, 3), u(r, -0.1, 0.1, 3), u(r, 0.01, 0.03, 3), u(r, 0.1, 0.3, 3),
    u(r, 0.0, 0.02, 3), F3, T3, np.array([0.8 + 0.2j, -0.5 - 0.1j, -0.3 - 0.1j])), wrt=(0, 1))
dcase(F.dc_power_flow_np, PS, "PYPOWER", lambda r: (
    u(r, 0.1, 0.3, 3), np.array([0.8, -0.5, -0.3]) + u(r, -0.05, 0.05, 3), F3, T3),
    wrt=(0, 1))
dcase(F.polar_mismatch_nb, PS, "pandapower", lambda r: (
    u(r, 0.95, 1.05, 3), u(r, -0.1, 0.1, 3), *_ybus_gb(u(r, 0.01, 0.03, 3), u(r, 0.1, 0.3, 3)),
    u(r, -0.6, -0.2, 3), u(r, -0.2, -0.05, 3)), wrt=range(6))
dcase(F.newton_pf_nb, PS, "PYPOWER", lambda r: (
    np.array([0.0, -0.5, -0.3]) + u(r, -0.05, 0.05, 3),
    np.array([0.0, -0.2, -0.1]) + u(r, -0.02, 0.02, 3),
    *_ybus_gb(u(r, 0.01, 0.03, 3), u(r, 0.1, 0.3, 3))), wrt=(0, 1, 2, 3), tol=1e-4)
dcase(F.branch_losses_np, PS, "pandapower", lambda r: (
    u(r, 0.95, 1.05, 3), u(r, -0.1, 0.1, 3), u(r, 0.01, 0.03, 3), u(r, 0.1, 0.3, 3), F3, T3),
    wrt=(0, 1, 2, 3), jax=True)
dcase(F.totcost_nb, PS, "PYPOWER", lambda r: (
    np.column_stack([np.full(3, 2.0), np.zeros(3), np.zeros(3), np.full(3, 3.0),
                     u(r, 0.01, 0.05, 3), u(r, 10, 20, 3), u(r, 50, 100, 3)]),
    u(r, 20, 150, 3)), wrt=(1,))  # gencost is data: its column 3 is a count read by int()
dcase(F.line_loading_pp, PS, "pandapower", lambda r: (
    u(r, 0.95, 1.05, 3), u(r, -5, 5, 3),
    {"from_bus": F3, "to_bus": T3, "r_ohm": u(r, 0.5, 1.5, 3), "x_ohm": u(r, 2, 4, 3),
     "vn_kv": 20.0, "max_i_ka": u(r, 0.3, 0.5, 3)}), wrt=(0, 1), jax=True)
dcase(F.economic_dispatch_np, PS, "PYPOWER", lambda r: (
    u(r, 19.5, 20.5), np.array([10.0, 12.0, 15.0]) + u(r, -0.5, 0.5, 3),
    np.array([0.05, 0.04, 0.06]), np.full(3, 10.0), np.array([150.0, 80.0, 200.0]),
    u(r, 200, 260)), wrt=range(6), jax=True)


# ---- seismology --------------------------------------------------------------------------------

SE = "seismology"
dcase(F.classic_sta_lta_np, SE, "obspy", lambda r: (nrm(r, 8), 2, 4), wrt=(0,))
dcase(F.recursive_sta_lta_py, SE, "obspy", lambda r: (nrm(r, 8), 2, 4), wrt=(0,))
dcase(F.tapered_energy_np, SE, "obspy", lambda r: (nrm(r, 8),), wrt=(0,))
dcase(F.envelope_peak_np, SE, "obspy", lambda r: (nrm(r, 8),), wrt=(0,))
dcase(F.hypocenter_misfit_nb, SE, "pyrocko", lambda r: (
    np.array([2.0, 3.0, 5.0]) + nrm(r, 3, s=0.5), u(r, -0.5, 0.5), u(r, -10, 10, 5, 3),
    u(r, 1.0, 4.0, 5), u(r, 5.5, 6.5)), wrt=(0, 1, 3, 4))
dcase(F.brune_misfit_np, SE, "SourceSpec", lambda r: (
    u(r, 1.5, 2.5), u(r, 0.3, 0.7), u(r, 0.01, 0.03), np.geomspace(0.5, 40.0, 8),
    u(r, 1.0, 100.0, 8)), wrt=(0, 1, 2), jax=True)
dcase(F.polarization_linearity_np, SE, "obspy", lambda r: (nrm(r, 8), nrm(r, 8), nrm(r, 8)),
      wrt=(0, 1, 2))


def _xcorr_clear(a, b, shift_len):
    n = len(a)
    ccs = []
    for s in range(-shift_len, shift_len + 1):
        ccs.append(sum(a[i] * b[i + s] for i in range(n) if 0 <= i + s < n))
    ccs = np.sort(ccs)
    return ccs[-1] - ccs[-2] > 0.2


dcase(F.xcorr_max_nb, SE, "obspy", lambda r: (nrm(r, 8), nrm(r, 8), 2), wrt=(0, 1),
      accept=_xcorr_clear)
dcase(F.local_magnitude_np, SE, "obspy", lambda r: (u(r, 0.1, 2.0, 5), u(r, 10, 100, 5)),
      wrt=(0, 1), jax=True)


# ---- volatility econometrics -------------------------------------------------------------------

VE = "volatility econometrics"
dcase(F.gjr_garch_nll, VE, "arch", lambda r: (
    np.array([0.1, 0.08, 0.05, 0.85]) + u(r, -0.01, 0.01, 4), signed(r, 0.2, 2.0, 10),
    u(r, 0.8, 1.2)), wrt=(0, 1, 2))
dcase(F.egarch_nll_nb, VE, "arch", lambda r: (
    np.array([0.0, 0.1, -0.05, 0.9]) + u(r, -0.01, 0.01, 4), signed(r, 0.2, 2.0, 10),
    u(r, -0.2, 0.2)), wrt=(0, 1, 2))
dcase(F.studentst_loglik_np, VE, "arch", lambda r: (
    u(r, 5, 8), nrm(r, 8), u(r, 0.5, 2.0, 8)), wrt=(0, 1, 2), jax=True)


def _skewt_clear(parameters, std_resid):
    eta, lam = parameters
    c = math.lgamma((eta + 1) / 2) - math.lgamma(eta / 2) - math.log(math.pi * (eta - 2)) / 2
    a = 4 * lam * math.exp(c) * (eta - 2) / (eta - 1)
    b = math.sqrt(1 + 3 * lam ** 2 - a ** 2)
    return gap_ok(std_resid, -a / b, 0.05)


dcase(F.skewt_loglik_np, VE, "arch", lambda r: (
    np.array([u(r, 6, 8), u(r, -0.3, 0.3)]), nrm(r, 8)), wrt=(0, 1), jax=True,
    accept=_skewt_clear)
dcase(F.ewma_nll, VE, "arch", lambda r: (nrm(r, 10),), wrt=(0,))
dcase(F.har_fit_lstsq, VE, "arch", lambda r: (u(r, 0.5, 2.0, 12),), wrt=(0,))
dcase(F.har_fit_normal_eq, VE, "arch", lambda r: (u(r, 0.5, 2.0, 12),), wrt=(0,))
dcase(F.garch_forecast_nb, VE, "arch", lambda r: (
    np.array([0.05, 0.08, 0.9]) + u(r, -0.01, 0.01, 3), nrm(r), u(r, 0.5, 1.5)),
    wrt=(0, 1, 2))


# ---- survival analysis -------------------------------------------------------------------------

SA = "survival analysis"
LL = "lifelines"


def _events(r, n):
    e = r.uniform(size=n) < 0.7
    e[0] = True
    e[-1] = False
    return e


dcase(F.weibull_nll_np, SA, LL, lambda r: (
    np.array([u(r, 0.1, 0.3), u(r, 1.2, 2.0)]), u(r, 1, 10, 8), _events(r, 8)), wrt=(0, 1),
    jax=True)
dcase(F.weibull_aft_nll_np, SA, LL, lambda r: (
    np.array([1.5, 0.2, -0.1]) + nrm(r, 3, s=0.1), u(r, 0.1, 0.5), u(r, 1, 10, 8),
    _events(r, 8), np.column_stack([np.ones(8), nrm(r, 8, 2)])), wrt=(0, 1, 2), jax=True)
dcase(F.coxph_nll_np, SA, LL, lambda r: (
    nrm(r, 3, s=0.5), nrm(r, 8, 3), np.sort(u(r, 1, 10, 8)) + np.arange(8), _events(r, 8)),
    wrt=(0, 1), jax=True)
dcase(F.coxph_efron_nll_nb, SA, LL, lambda r: (
    nrm(r, 3, s=0.5), nrm(r, 8, 3), np.array([1.0, 2.0, 2.0, 3.5, 4.0, 4.0, 6.0, 7.5]),
    np.array([True, True, True, False, True, True, True, False])), wrt=(0, 1))
dcase(F.loglogistic_nll_np, SA, LL, lambda r: (
    u(r, 3, 6), u(r, 1.5, 3), u(r, 1, 10, 8), _events(r, 8)), wrt=(0, 1, 2), jax=True)


def _pwe_clear(log_lambdas, breakpoints, T, E):
    return gap_ok(T[:, None], breakpoints[None, :], 0.2)


dcase(F.piecewise_exponential_nll_nb, SA, LL, lambda r: (
    nrm(r, 3, s=0.3, m=-2.0), np.array([3.0, 6.0]) + u(r, -0.3, 0.3, 2), u(r, 0.5, 9, 8),
    _events(r, 8).astype(float)), wrt=(0, 1, 2), accept=_pwe_clear)
dcase(F.generalized_gamma_nll, SA, LL, lambda r: (
    u(r, 1.0, 2.0), u(r, -0.5, 0.0), u(r, 0.5, 1.0), u(r, 1, 10, 8), _events(r, 8)),
    wrt=(0, 1, 2))
dcase(F.mixture_cure_nll_np, SA, LL, lambda r: (
    nrm(r, s=0.5), u(r, 1.0, 2.0), u(r, 0.0, 0.5), u(r, 1, 10, 8),
    _events(r, 8).astype(float)), wrt=(0, 1, 2, 3), jax=True)


# ---- Gaussian processes ------------------------------------------------------------------------

GP = "Gaussian processes"
dcase(F.gp_rbf_nll_np, GP, "GPy", lambda r: (
    nrm(r, s=0.3), u(r, -0.2, 0.4), u(r, -2.5, -1.5), nrm(r, 6, 2), nrm(r, 6)),
    wrt=range(5))
dcase(F.matern52_nll_np, GP, "GPy", lambda r: (
    u(r, -0.2, 0.4, 2), u(r, -2.5, -1.5), nrm(r, 6, 2), nrm(r, 6)), wrt=range(4), jax=True)
dcase(F.george_predict, GP, "george", lambda r: (
    nrm(r, s=0.3), u(r, -0.2, 0.4), np.sort(u(r, 0, 5, 6)), nrm(r, 6), u(r, 0, 5, 3)),
    wrt=(0, 1, 3))
dcase(F.quasi_periodic_nll_nb, GP, "george", lambda r: (
    np.array([u(r, 1, 2), u(r, 2, 4), u(r, 0.5, 1.5), u(r, 0.5, 1.0), u(r, 0.1, 0.2)]),
    np.sort(u(r, 0, 5, 6)), nrm(r, 6)), wrt=(0, 1, 2))
dcase(F.sparse_gp_bound_np, GP, "GPy", lambda r: (
    np.array([[-1.0], [0.1], [1.2]]) + nrm(r, 3, 1, s=0.1), nrm(r, s=0.3), u(r, -0.2, 0.4),
    u(r, -2.5, -1.5), u(r, -2, 2, 8, 1), nrm(r, 8)), wrt=(0, 1, 2, 3, 5))
# (no JAX: Kmm's zero distances on its diagonal meet np.sqrt at 0, whose derivative JAX takes
# as inf, giving NaN where the finite differences and jitgrad give the limit)
dcase(F.gp_laplace_nll_nb, GP, "GPy", lambda r: (
    u(r, 0.0, 0.5), u(r, -0.2, 0.4), u(r, -2, 2, 6, 1),
    np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])), wrt=(0, 1, 2))
dcase(F.gp_config_nll, GP, "GPy", lambda r: (
    u(r, -0.2, 0.4), u(r, -2.5, -1.5), nrm(r, 6, 2), nrm(r, 6),
    {"kernel": "matern32", "jitter": 1e-6}), wrt=(0, 1, 3))


# ---- psychometrics -----------------------------------------------------------------------------

PM = "psychometrics"
GI = "girth"


def _responses(r, n_items, n_people, n_cat=2):
    return r.integers(0, n_cat, size=(n_items, n_people))


dcase(F.twopl_jml_nll_np, PM, GI, lambda r: (
    u(r, 0.8, 2.0, 4), nrm(r, 4), nrm(r, 6), _responses(r, 4, 6)), wrt=(0, 1, 2), jax=True)
dcase(F.twopl_mml_nll_np, PM, GI, lambda r: (
    u(r, 0.8, 2.0, 4), nrm(r, 4), _responses(r, 4, 6)), wrt=(0, 1), jax=True)
dcase(F.grm_nll_nb, PM, GI, lambda r: (
    u(r, 0.8, 2.0, 3), np.sort(nrm(r, 3, 2), axis=1) + np.array([0.0, 0.5]), nrm(r, 6),
    _responses(r, 3, 6, 3)), wrt=(0, 1, 2))
dcase(F.pcm_nll_np, PM, GI, lambda r: (
    u(r, 0.8, 2.0, 3), nrm(r, 3, 2), nrm(r, 6), _responses(r, 3, 6, 3)), wrt=(0, 1, 2),
    jax=True)
dcase(F.threepl_nll_np, PM, GI, lambda r: (
    u(r, 0.8, 2.0, 4), nrm(r, 4), u(r, 0.1, 0.25, 4), nrm(r, 6),
    _responses(r, 4, 6).astype(float)), wrt=(0, 1, 2, 3), jax=True)
dcase(F.eap_spread_np, PM, GI, lambda r: (nrm(r, 4), u(r, 0.8, 2.0, 4), _responses(r, 4, 6)),
      wrt=(0, 1), jax=True)
dcase(F.ability_mle_nb, PM, GI, lambda r: (
    u(r, 0.8, 2.0, 4), nrm(r, 4), _responses(r, 4, 6).astype(float)), wrt=(0, 1))


# ---- reinforcement learning --------------------------------------------------------------------

RL = "reinforcement learning"
dcase(F.cartpole_rollout_cost, RL, "gym", lambda r: (nrm(r, 4, s=0.3), nrm(r, 4, s=0.05)),
      wrt=(0, 1))


def _pendulum_clear(k_p, k_d, th0, thdot0):
    th, thdot = th0, thdot0
    for _ in range(8):
        a = ((th + np.pi) % (2 * np.pi)) - np.pi
        if abs(abs(th + np.pi) % (2 * np.pi)) < 0.05 or abs(abs(a) - np.pi) < 0.05:
            return False
        u_raw = -k_p * a - k_d * thdot
        if abs(abs(u_raw) - 2.0) < 0.05:
            return False
        u_c = min(max(u_raw, -2.0), 2.0)
        nd = thdot + (15.0 * np.sin(th) + 3.0 * u_c) * 0.05
        if abs(abs(nd) - 8.0) < 0.05:
            return False
        nd = min(max(nd, -8.0), 8.0)
        th, thdot = th + nd * 0.05, nd
    return True


dcase(F.pendulum_rollout_cost, RL, "gym", lambda r: (
    u(r, 1, 6), u(r, 0.5, 2), u(r, -2.5, 2.5), u(r, -1, 1)), wrt=range(4),
    accept=_pendulum_clear)
dcase(F.compute_gae, RL, "stable-baselines3", lambda r: (
    nrm(r, 8), nrm(r, 8), np.array([1.0, 0, 0, 0, 1.0, 0, 0, 0]), nrm(r), 0.0),
    wrt=(0, 1, 3))
dcase(F.reward_to_go_loss, RL, "spinningup", lambda r: (nrm(r, 8), nrm(r, 8)), wrt=(0, 1))


def _ppo_draw(r):
    logits = nrm(r, 6, 3)
    actions = r.integers(0, 3, size=6)
    z = logits - logits.max(axis=1, keepdims=True)
    logp = (z - np.log(np.exp(z).sum(axis=1, keepdims=True)))[np.arange(6), actions]
    delta = np.array([-0.4, -0.05, 0.05, 0.4, -0.45, 0.35]) + u(r, -0.03, 0.03, 6)
    return logits, actions, logp - delta, signed(r, 0.3, 1.5, 6)


dcase(F.ppo_clip_loss_np, RL, "stable-baselines3", _ppo_draw, wrt=(0, 2, 3), jax=True)
dcase(F.reinforce_loss_nb, RL, "spinningup", lambda r: (
    nrm(r, 3), nrm(r, 5, 3, 3), r.integers(0, 3, size=5), nrm(r, 5)), wrt=(0, 1, 3))
dcase(F.gaussian_policy_loss_np, RL, "spinningup", lambda r: (
    nrm(r, 3, 2, s=0.5), u(r, -1, 0, 2), nrm(r, 6, 3), nrm(r, 6, 2), nrm(r, 6)), wrt=range(5),
    jax=True)


def _sac_draw(r):
    q1 = nrm(r, 6)
    q2 = nrm(r, 6)
    nq1 = nrm(r, 6)
    nq2 = nq1 + signed(r, 0.1, 0.5, 6)
    return q1, q2, nq1, nq2, nrm(r, 6), nrm(r, 6), np.array([0.0, 0, 1, 0, 0, 1])


dcase(F.sac_critic_loss_np, RL, "stable-baselines3", _sac_draw, wrt=range(6), jax=True)


def _mountain_clear(k, position0, velocity0):
    p, v = position0, velocity0
    for _ in range(10):
        v += math.tanh(k * v) * 0.001 + math.cos(3 * p) * (-0.0025)
        if abs(abs(v) - 0.07) < 1e-3:
            return False
        v = min(max(v, -0.07), 0.07)
        p += v
        if p < -1.19 or p > 0.59:
            return False
    return True


dcase(F.mountain_car_return, RL, "gym", lambda r: (u(r, 5, 20), u(r, -0.6, -0.4),
                                                   u(r, -0.02, 0.02)),
      wrt=(0, 1, 2), accept=_mountain_clear)


# ---- optics ------------------------------------------------------------------------------------

OP = "optics"
dcase(F.tmm_stack_R, OP, "tmm", lambda r: (u(r, 1.4, 2.3, 2), u(r, 80, 150, 2), u(r, 500, 600)),
      wrt=(0, 1, 2))
dcase(F.quarter_stack_reflectance_nb, OP, "tmm", lambda r: (
    u(r, 1.4, 2.3, 3), u(r, 80, 150, 3), u(r, 450, 650, 4)), wrt=(0, 1, 2))
dcase(F.fresnel_unpolarized_np, OP, "tmm", lambda r: (
    u(r, 1.0, 1.1), u(r, 1.4, 1.6), u(r, 0.1, 1.2, 6)), wrt=(0, 1, 2), jax=True)
dcase(F.abcd_system_np, OP, "RayTracing", lambda r: (
    np.array([0.02, -0.02, 0.015, -0.01]) + u(r, -1e-3, 1e-3, 4),
    np.array([5.0, 10.0, 4.0, 30.0]) + u(r, -0.5, 0.5, 4), u(r, 1.5, 1.6)), wrt=(0, 1, 2))
dcase(F.sellmeier_fit_np, OP, "rayoptics", lambda r: (
    np.array([1.04, 0.23, 1.01]) + u(r, -0.01, 0.01, 3),
    np.array([0.006, 0.02, 103.5]) + u(r, -1e-4, 1e-4, 3), u(r, 0.4, 1.0, 6),
    u(r, 1.50, 1.53, 6)), wrt=(0, 1), jax=True)
dcase(F.trace_meridional_nb, OP, "rayoptics", lambda r: (
    np.array([0.02, -0.02]) + u(r, -1e-3, 1e-3, 2), np.array([5.0, 40.0]) + u(r, -0.5, 0.5, 2),
    np.array([1.5, 1.0]) + np.array([u(r, 0.0, 0.05), 0.0]),
    np.array([-4.0, -2.0, 1.0, 3.0]) + u(r, -0.2, 0.2, 4)), wrt=(0, 1, 2, 3))


# ---- sports ratings ----------------------------------------------------------------------------

SR = "sports ratings"
HOME8 = np.array([0, 1, 2, 3, 4, 0, 2, 1])
AWAY8 = np.array([1, 2, 3, 4, 0, 3, 4, 3])
dcase(F.elo_history_nb, SR, "elo", lambda r: (
    u(r, 1400, 1600, 5), np.array([0, 2, 1, 3, 4, 0]), np.array([1, 3, 4, 0, 2, 2])),
    wrt=(0,))
dcase(F.elo_logloss_np, SR, "nfl-elo-game", lambda r: (
    u(r, 1400, 1600, 5), HOME8, AWAY8, (r.uniform(size=8) < 0.5).astype(float)), wrt=(0,),
    jax=True)


def _glicko_draw(r):
    return (u(r, -0.5, 0.5), u(r, 0.3, 1.2), u(r, 0.05, 0.07), u(r, -1, 1, 3),
            u(r, 0.2, 1.5, 3), np.array([1.0, 0.0, 1.0]))


dcase(F.glicko2_rate, SR, "glicko2", _glicko_draw, wrt=range(5), tol=1e-4)
dcase(F.trueskill_1v1, SR, "trueskill", lambda r: (
    u(r, 20, 30), u(r, 5, 8), u(r, 20, 30), u(r, 5, 8)), wrt=range(4))
dcase(F.bradley_terry_nll_np, SR, "choix", lambda r: (nrm(r, 5), HOME8, AWAY8), wrt=(0,),
      jax=True)
dcase(F.massey_ratings_nb, SR, "Massey method", lambda r: (
    nrm(r, 8, s=7.0), HOME8, AWAY8, 5), wrt=(0,))
dcase(F.dixon_coles_nll_nb, SR, "penaltyblog", lambda r: (
    nrm(r, 4, s=0.2), nrm(r, 4, s=0.2), u(r, 0.1, 0.3), u(r, -0.15, -0.05),
    np.array([0, 1, 2, 3, 0, 2, 1, 3]), np.array([1, 2, 3, 0, 2, 0, 3, 1]),
    np.array([0, 1, 2, 1, 0, 3, 1, 0]), np.array([0, 0, 1, 1, 2, 1, 0, 1])), wrt=(0, 1, 2, 3))


# ---- pharmacokinetics --------------------------------------------------------------------------

PK = "pharmacokinetics"
TIMES8 = np.array([0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 24.0])
dcase(F.pk_oral_nll_np, PK, "chi", lambda r: (
    u(r, 0.0, 0.5), u(r, -2.5, -2.0), u(r, 2.8, 3.2), TIMES8, u(r, 0.5, 4.0, 8)),
    wrt=(0, 1, 2), jax=True)
dcase(F.multiple_dose_conc_nb, PK, "PKPD superposition", lambda r: (
    u(r, 1.0, 1.5), u(r, 0.1, 0.2), u(r, 15, 25), u(r, 80, 120, 3),
    np.array([0.0, 12.0, 24.0]) + u(r, -0.5, 0.5, 3), np.array([2.0, 6.0, 14.0, 20.0, 27.0, 34.0])),
    wrt=range(5))
dcase(F.two_compartment_iv_np, PK, "PKPD two-compartment", lambda r: (
    u(r, 2, 4), u(r, 10, 20), u(r, 1, 3), u(r, 20, 40), TIMES8[:6]), wrt=range(4), jax=True)
dcase(F.emax_nll_np, PK, "chi", lambda r: (
    u(r, 1, 2), u(r, 8, 12), u(r, 1, 2), u(r, 1, 3), u(r, 0.5, 20, 8), u(r, 2, 10, 8)),
    wrt=range(4), jax=True)


def _conc_profile(r):
    c = np.array([2.0, 5.0, 8.0, 6.5, 4.0, 2.5, 1.2, 0.4])
    return c * u(r, 0.9, 1.1, 8), TIMES8.copy()


dcase(F.nca_auc_polyfit, PK, "NCA scripts", _conc_profile, wrt=(0, 1))
dcase(F.nca_auc_inf_nb, PK, "NCA scripts", _conc_profile, wrt=(0, 1))
dcase(F.infusion_conc_nb, PK, "PKPD infusion", lambda r: (
    u(r, 2, 4), u(r, 15, 25), u(r, 40, 60), u(r, 2.5, 3.5), TIMES8), wrt=range(4))
dcase(F.population_nll, PK, "chi", lambda r: (
    np.array([1.0, 3.0]) + nrm(r, 2, s=0.1), nrm(r, 3, 2, s=0.2), u(r, 50, 90, 3),
    TIMES8[:4], u(r, 1.0, 4.0, 3, 4)), wrt=(0, 1, 2))


# ---- traffic flow ------------------------------------------------------------------------------

TF = "traffic flow"


def _idm_draw(r):
    v = u(r, 10, 25, 6)
    return v, u(r, 20, 50, 6), v + u(r, -2, 3, 6), u(r, 28, 32)


dcase(F.idm_platoon_np, TF, "flow", _idm_draw, wrt=range(4), jax=True)
dcase(F.ring_road_nb, TF, "flow", lambda r: (
    np.arange(5) * 12.0 + u(r, -1, 1, 5), u(r, 5, 8, 5), u(r, 14, 16)), wrt=(0, 1, 2))


def _ctm_clear(rho0, v_free, w_back, rho_jam, inflow, dx=0.5, dt=0.01, steps=5):
    rho = rho0.copy()
    q_max = v_free * w_back * rho_jam / (v_free + w_back)
    for _ in range(steps):
        demand = v_free * rho
        supply = w_back * (rho_jam - rho)
        if not (gap_ok(demand, q_max, 0.01) and gap_ok(supply, q_max, 0.01)):
            return False
        demand = np.minimum(demand, q_max)
        supply = np.minimum(supply, q_max)
        if not gap_ok(demand[:-1], supply[1:], 0.01) or abs(inflow - supply[0]) < 0.01:
            return False
        flux = np.minimum(demand[:-1], supply[1:])
        fin = np.concatenate(([min(inflow, supply[0])], flux))
        fout = np.concatenate((flux, [demand[-1]]))
        rho = rho + dt / dx * (fin - fout)
    return True


def _ctm_draw(r):
    return (np.array([0.1, 0.2, 0.15, 0.6, 0.7, 0.55]) + u(r, -0.03, 0.03, 6), u(r, 0.95, 1.05),
            u(r, 0.45, 0.55), u(r, 0.95, 1.05), u(r, 0.1, 0.2))


dcase(F.ctm_np, TF, "UXsim", _ctm_draw, wrt=range(5), accept=_ctm_clear)
dcase(F.ctm_nb, TF, "UXsim", _ctm_draw, wrt=range(5), accept=_ctm_clear)
dcase(F.beckmann_objective_np, TF, "aequilibrae", lambda r: (
    u(r, 100, 900, 6), u(r, 500, 1000, 6), u(r, 1, 10, 6)), wrt=range(3), jax=True)
dcase(F.logit_assignment_np, TF, "aequilibrae", lambda r: (
    u(r, 100, 200), np.array([10.0, 12.0, 15.0, 11.0]) + u(r, -0.3, 0.3, 4), u(r, 0.2, 0.5)),
    wrt=range(3), jax=True)


def _gipps_clear(v_lead, v0, gap0, a_max=1.7, b=-3.0, tau=0.7, s_lead=6.5, v_des=25.0):
    v, gap = v0, gap0
    for t in range(len(v_lead)):
        vf = v + 2.5 * a_max * tau * (1 - v / v_des) * math.sqrt(0.025 + v / v_des)
        disc = b * b * tau * tau - b * (2 * (gap - s_lead) - v * tau - v_lead[t] ** 2 / -3.2)
        if disc <= 0.1:
            return False
        vc = b * tau + math.sqrt(disc)
        if abs(vf - vc) < 0.05:
            return False
        vn = min(vf, vc)
        gap += (v_lead[t] - 0.5 * (v + vn)) * tau
        v = vn
    return True


dcase(F.gipps_follow_nb, TF, "Gipps car following", lambda r: (
    u(r, 12, 20, 6), u(r, 12, 18), u(r, 10, 30)), wrt=range(3), accept=_gipps_clear)


# ---- structural mechanics ----------------------------------------------------------------------

SM = "structural mechanics"
TRUSS_COORDS = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
TRUSS_ELEMENTS = np.array([[0, 1], [1, 2], [2, 3], [0, 2], [1, 3]])
TRUSS_FIXED = np.array([0, 1, 6, 7])
TRUSS_FREE = np.array([2, 3, 4, 5])


def _truss_loads(r):
    f = np.zeros(8)
    f[2:6] = u(r, -1000, 1000, 4)
    return f


dcase(F.truss_compliance_np, SM, "anaStruct", lambda r: (
    u(r, 1, 2, 5), TRUSS_COORDS + u(r, -0.05, 0.05, 4, 2), TRUSS_ELEMENTS, TRUSS_FIXED,
    _truss_loads(r)), wrt=(0, 1))
dcase(F.truss_compliance_nb, SM, "PyNite", lambda r: (
    u(r, 1, 2, 5), TRUSS_COORDS + u(r, -0.05, 0.05, 4, 2), TRUSS_ELEMENTS, TRUSS_FREE,
    _truss_loads(r)), wrt=(0, 1, 4))
dcase(F.cantilever_tip_np, SM, "anaStruct", lambda r: (
    u(r, 1.0, 2.0, 4), u(r, 2.0, 3.0), u(r, 1.0, 2.0)), wrt=range(3))
dcase(F.bilinear_energy_np, SM, "OpenSeesPy", lambda r: (
    np.array([0.0005, -0.0007, 0.003, -0.0025, 0.002, -0.004]) * u(r, 0.9, 1.1, 6),
    u(r, 195e3, 205e3), u(r, 240, 260)), wrt=range(3), jax=True)
dcase(F.von_mises_np, SM, "sectionproperties", lambda r: (
    nrm(r, 6, s=100.0), nrm(r, 6, s=100.0), nrm(r, 6, s=50.0)), wrt=range(3), jax=True)
dcase(F.buckling_utilisation, SM, "structural design scripts", lambda r: (
    u(r, 100, 500, 4), u(r, 1e6, 5e6, 4), u(r, 2000, 5000, 4), 210e3, "fixed-pinned"),
    wrt=range(3))
dcase(F.shear_building_fundamental, SM, "anaStruct", lambda r: (
    u(r, 800, 1200, 4), u(r, 8, 12, 4)), wrt=(0, 1))


# ---- computer graphics -------------------------------------------------------------------------

CG = "computer graphics"
dcase(F.lbs_np, CG, "smplx", lambda r: (
    nrm(r, 3, 3, s=0.3), nrm(r, 6, 3), nrm(r, 6, 3), nrm(r, 3, 3), nrm(r, 6, 3)),
    wrt=range(4), jax=True)


def _ray_draw(r):
    origins = np.column_stack([u(r, -1.5, 1.5, 6), u(r, -1.5, 1.5, 6), np.full(6, -5.0)])
    return origins, np.column_stack([nrm(r, 6, 2, s=0.02), np.ones(6)]), \
        np.array([0.2, -0.15, 0.3]) + nrm(r, 3, s=0.05), u(r, 0.9, 1.1)


def _ray_clear(origins, directions, center, radius):
    d = directions / np.linalg.norm(directions, axis=1)[:, None]
    oc = origins - center
    b = np.sum(oc * d, axis=1)
    disc = b ** 2 - (np.sum(oc * oc, axis=1) - radius ** 2)
    return gap_ok(disc, 0.0, 0.1) and 1 < np.sum(disc > 0) < 6


# (no JAX: the rays that miss meet np.sqrt at 0 in the branch np.where leaves out, NaN in JAX)
dcase(F.ray_sphere_np, CG, "trimesh", _ray_draw, wrt=range(4), accept=_ray_clear)
dcase(F.blinn_phong_nb, CG, "tinyrenderer", lambda r: (
    np.column_stack([nrm(r, 8, 2, s=0.3), np.ones(8)]), np.array([0.3, 0.2, 1.0]) + nrm(r, 3, s=0.05),
    u(r, 0.2, 0.9, 8)), wrt=range(3))
dcase(F.soft_raster_np, CG, "SoftRas", lambda r: (
    np.array([[0.1, 0.1], [0.9, 0.2], [0.4, 0.8]]) + nrm(r, 3, 2, s=0.02), u(r, 0, 1, 8, 2)),
    wrt=(0, 1), jax=True)
dcase(F.reprojection_error_np, CG, "pyrender", lambda r: (
    np.array([0.5, 0.3, 5.0]) + nrm(r, 3, s=0.1), nrm(r, 5, 3, s=0.5), nrm(r, 5, 2, s=0.2)),
    wrt=(0, 1))
dcase(F.slerp_path_nb, CG, "trimesh", lambda r: (
    np.array([1.0, 0.0, 0.0, 0.0]) + nrm(r, 4, s=0.1), np.array([0.6, 0.5, 0.4, 0.3]) + nrm(r, 4, s=0.1),
    np.linspace(0.1, 0.9, 5)), wrt=range(3))
dcase(F.bezier_length, CG, "bezier", lambda r: (np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 2.5],
                                                          [4.0, 0.0]]) + nrm(r, 4, 2, s=0.1),),
      wrt=(0,))
dcase(F.tone_map_np, CG, "colour tone mapping", lambda r: (
    np.concatenate([[0.001, 0.002], u(r, 0.1, 5.0, 6)]), u(r, 0.8, 1.2)), wrt=(0, 1),
    jax=True, accept=lambda hdr, e: gap_ok(hdr * e / (1 + hdr * e), 0.0031308, 2e-4))


# ---- population genetics -----------------------------------------------------------------------

PG = "population genetics"
dcase(F.hudson_fst, PG, "scikit-allel", lambda r: (u(r, 5, 20, 5, 2), u(r, 5, 20, 5, 2)),
      wrt=(0, 1))
dcase(F.selection_trajectory_nb, PG, "population-genetics teaching code", lambda r: (
    u(r, 0.1, 0.3), u(r, 0.05, 0.2), u(r, 0.3, 0.7)), wrt=range(3))


def _hap_freqs(r):
    p = r.dirichlet(np.ones(4) * 3, size=5)
    return (p[:, :3],)


dcase(F.ld_r2_np, PG, "scikit-allel", _hap_freqs, wrt=(0,), jax=True)
dcase(F.tajima_d, PG, "scikit-allel", lambda r: (u(r, 3, 6), u(r, 10, 20), 10), wrt=(0, 1),
      jax=True)
dcase(F.hwe_inbreeding_nll_np, PG, "scikit-allel", lambda r: (
    u(r, 0.2, 0.8, 5), u(r, 0.05, 0.2), u(r, 5, 50, 5, 3)), wrt=(0, 1), jax=True)
dcase(F.expected_tmrca_nb, PG, "msprime", lambda r: (
    u(r, 0.5, 2.0, 3), np.array([0.0, 0.5, 1.5]) + np.array([0.0, *u(r, -0.1, 0.1, 2)])),
    wrt=(0, 1))
dcase(F.admixture_nll_np, PG, "fastStructure", lambda r: (
    nrm(r, 6, 2), nrm(r, 2, 5), r.integers(0, 3, size=(6, 5)).astype(float)), wrt=(0, 1),
    jax=True)


# ---- battery models ----------------------------------------------------------------------------

BM = "battery models"
PYBAMM = "PyBaMM"
BATTERY_PARAMS = {
    "Negative electrode exchange-current density reference [A.m-2.m3.mol-1.5]": 2e-5,
    "Negative electrode reaction activation energy [J.mol-1]": 37480.0,
    "Initial concentration in electrolyte [mol.m-3]": 1000.0,
    "a_n": 1.8e5,
    "a_p": 1.5e5,
}
dcase(F.ocv_curve_np, BM, PYBAMM, lambda r: (u(r, 0.1, 0.9, 8), u(r, 0.55, 0.9, 8)),
      wrt=(0, 1), jax=True)
dcase(F.spm_voltage_np, BM, PYBAMM, lambda r: (
    u(r, 10, 30, 4), u(r, 15000, 25000, 4), u(r, 40000, 55000, 4), u(r, 290, 310),
    dict(BATTERY_PARAMS)), wrt=range(4), jax=True)
dcase(F.thevenin_fit_nb, BM, PYBAMM, lambda r: (
    u(r, 0.01, 0.03), u(r, 0.01, 0.03), u(r, 1000, 3000), u(r, 0.5, 2.0, 8), u(r, 3.8, 4.0, 8)),
    wrt=range(5))
dcase(F.sei_capacity_fade_np, BM, PYBAMM, lambda r: (
    u(r, 1e-3, 2e-3), u(r, 3e4, 5e4), np.array([10.0, 50.0, 100.0, 200.0, 400.0, 800.0]),
    u(r, 290, 320, 6)), wrt=range(4), jax=True)
dcase(F.ohmic_drop_np, BM, PYBAMM, lambda r: (u(r, 800, 1200, 4), u(r, 290, 310),
                                              u(r, 10, 30, 4)), wrt=range(3), jax=True)
dcase(F.parallel_pack_nb, BM, "liionpack", lambda r: (
    u(r, 3.6, 3.8, 4), u(r, 0.01, 0.03, 4), u(r, 5, 15)), wrt=range(3))


# ---- astronomy photometry ----------------------------------------------------------------------

AP = "astronomy photometry"


def _transit_clear(rp, u1, u2, ds, n_annuli=6):
    for k in range(1, n_annuli + 1):
        rk = k / n_annuli
        for edge in (rk + rp, rk - rp, rp - rk):
            if not gap_ok(ds, edge, 0.01):
                return False
    return True


dcase(F.transit_flux_nb, AP, "batman", lambda r: (
    u(r, 0.1, 0.15), u(r, 0.3, 0.5), u(r, 0.1, 0.3), u(r, 0.1, 1.2, 6)), wrt=range(4),
    accept=_transit_clear)
dcase(F.calibrate_mags_np, AP, "astropy", lambda r: (
    u(r, 24, 26), u(r, 0.1, 0.3), u(r, -0.1, 0.1), u(r, 100, 1e4, 8), u(r, 1.0, 2.0, 8),
    nrm(r, 8, s=0.5), u(r, 14, 19, 8)), wrt=range(4), jax=True)


def _aperture_clear(image, x0, y0, r_ap, r_in=3.5, r_out=4.5):
    jj, ii = np.mgrid[0:image.shape[0], 0:image.shape[1]]
    rr = np.sqrt((ii - x0) ** 2 + (jj - y0) ** 2)
    return all(gap_ok(rr, e, 0.02) for e in (r_ap - 0.5, r_ap + 0.5, r_in, r_out))


dcase(F.aperture_photometry_nb, AP, "photutils", lambda r: (
    u(r, 0, 1, 9, 9) + 5.0 * np.exp(-((np.arange(9)[:, None] - 4) ** 2
                                      + (np.arange(9)[None, :] - 4) ** 2) / 3.0),
    u(r, 3.7, 4.3), u(r, 3.7, 4.3), u(r, 2.0, 2.4)), wrt=range(4), accept=_aperture_clear)
dcase(F.psf_fit_residual_np, AP, "photutils", lambda r: (
    np.array([u(r, 90, 110), u(r, 3.2, 3.8), u(r, 3.2, 3.8), u(r, 1.0, 1.4)]),
    u(r, 0, 5, 8, 8)), wrt=(0, 1))
dcase(F.sersic_profile_fit, AP, "astropy", lambda r: (
    u(r, 1, 2), u(r, 2, 4), u(r, 1.5, 4), u(r, 0.5, 10, 6), u(r, 0.1, 5, 6)), wrt=range(3))
dcase(F.sersic_profile_approx_np, AP, "astropy", lambda r: (
    u(r, 1, 2), u(r, 2, 4), u(r, 1.5, 4), u(r, 0.5, 10, 6), u(r, 0.1, 5, 6)), wrt=range(3),
    jax=True)
dcase(F.lombscargle_power_np, AP, "astropy", lambda r: (
    np.sort(u(r, 0, 10, 8)), nrm(r, 8), u(r, 0.1, 0.5, 4)), wrt=range(3), jax=True)
dcase(F.blackbody_fit_np, AP, "astropy", lambda r: (
    u(r, 5000, 6000), u(r, -0.5, 0.5), u(r, 0.4, 2.0, 6), u(r, 0.5, 3.0, 6)), wrt=range(3),
    jax=True)
dcase(F.colour_index, AP, "photometry scripts", lambda r: (
    u(r, 14, 19, 5), u(r, 14, 19, 5), u(r, 14, 19, 5)), wrt=range(3))


# ---- the status each case has today ------------------------------------------------------------
# Cases not listed differentiate (agree with finite differences, and with JAX where ``jax``).

EXPECTED = {
    "dc_power_flow_np": "refused",
    "envelope_peak_np": "refused",
    "tmm_stack_R": "not finite",
    "abcd_system_np": "refused",
    "bezier_length": "refused",
    "colour_index": "refused",
}


# "not finite": the gradient holds NaN where the true one is finite, from 0 * inf in an adjoint
# (docs/supported.md, "Infinite values and zero cotangents"; JAX gives the same NaN): tmm's ``delta = kz * d``
# with d = inf in the outer layers, whose entries of ``delta`` the result never reads, so their
# cotangent 0 meets d/dkz = inf.

# Refusals whose message names no file and line (the test expects one, and fails when one
# appears): what is wrong is an argument of the call, not a line: wrt=1 of a function of
# *mags (one argument, a tuple).
NO_LOCATION = {"colour_index"}

BY_NAME = {c.name: c for c in CASES}


def _check_table():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    unknown = set(EXPECTED) - set(names)
    assert not unknown, f"EXPECTED names unknown cases: {sorted(unknown)}"
    assert set(EXPECTED.values()) <= {"differentiates", "refused", "not finite"}
    assert NO_LOCATION <= {n for n, s in EXPECTED.items() if s == "refused"}


_check_table()
