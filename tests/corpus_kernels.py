"""The numerical-kernel corpus table (issue #42 item 3): one ``Case`` per kernel of
``corpus_kernels_fns``, in the style of ``corpus.py``, and the kernels jitgrad refuses with
the refusal each must give.

Points are tiny (5x4x3 ocean grids, 5x5 fields, 8-sample signals, a handful of Monte-Carlo
paths) and one per kernel where one covers the branches: Numba's compile dominates the time.
Kinks are kept clear of the points: velocities away from 0 in upwinding, the superbee
limiter's ratios away from 0, 1/2, 1 and 2, paths clear of barriers and strikes, stores clear
of their capacity, running extremes without ties (``_clear``-style ``accept`` functions replay
the kernel's state to check this). The isoneutral taper is strictly between 0 and 1 at every
wet face (``isoneutral_taper_range`` and ``isoneutral_nb_taper_range``, checked in the test
file).
"""

from __future__ import annotations

import math

import corpus_kernels_fns as F
import numpy as np
from corpus import N, U, away, case, distinct

# ---- ocean grids --------------------------------------------------------------------------------

DEPTH = np.array([5.0, 15.0, 25.0])


def _ocean_mask():
    mask = np.ones((F.NX, F.NY, F.NZ))
    mask[0, 0, :] = 0.0  # a land column
    mask[4, 3, 2] = 0.0  # shallow bottom cells
    mask[2, 1, 2] = 0.0
    return mask


OCEAN_MASK = _ocean_mask()


def _stratified(rng):
    """Warm, fresh water over cold, salty water, with horizontal gradients: stably stratified
    (the vertical density gradient is positive and far above its floor) and isoneutral slopes
    around the taper's midpoint."""
    i, j, k = np.meshgrid(np.arange(F.NX), np.arange(F.NY), np.arange(F.NZ), indexing="ij")
    temp = 18.0 - 3.0 * k + 0.4 * i + 0.3 * j + rng.normal(0.0, 0.1, size=i.shape)
    salt = 34.5 + 0.2 * k - 0.05 * i + rng.normal(0.0, 0.02, size=i.shape)
    return temp, salt


def _eos_points(rng):
    temp, salt = _stratified(rng)
    return [(temp, salt, DEPTH.copy(), OCEAN_MASK.copy())]


def _isoneutral_points(rng):
    temp, salt = _stratified(rng)
    return [(temp, salt, DEPTH.copy(), OCEAN_MASK.copy(), rng.uniform(0.5, 1.5))]


def isoneutral_taper_range(temp, salt, depth, mask, k_iso=None):
    """The taper's values at the wet faces of ``isoneutral_slopes_np`` (and the floor margin),
    recomputed here so the test can check they are neither 0 nor 1."""
    p = depth[None, None, :]
    drdt = F.RHO0 * (-F.EOS_A * (1.0 + F.EOS_P * p) - F.EOS_C * (temp - 10.0)
                     - F.EOS_D * (salt - 35.0)) * mask
    drds = F.RHO0 * (F.EOS_B - F.EOS_D * (temp - 10.0)) * mask
    fmask = mask[1:] * mask[:-1]
    drx = 0.5 * ((drdt[1:] + drdt[:-1]) * np.diff(temp, axis=0)
                 + (drds[1:] + drds[:-1]) * np.diff(salt, axis=0)) / F.DX_O * fmask
    wmask = mask[:, :, 1:] * mask[:, :, :-1]
    drz = (drdt[:, :, :-1] * np.diff(temp, axis=2) + drds[:, :, :-1] * np.diff(salt, axis=2)
           ) / F.DZ_O * wmask
    wet_drz = drz[wmask > 0]
    sx = -drx[:, :, :-1] / (0.5 * (np.maximum(drz, F.DRZ_MIN)[1:]
                                   + np.maximum(drz, F.DRZ_MIN)[:-1]))
    wet = (fmask[:, :, :-1] > 0) & (wmask[1:] > 0) & (wmask[:-1] > 0)
    taper = 0.5 * (1.0 + np.tanh((F.SLOPE_MAX - np.abs(sx[wet])) / F.SLOPE_WIDTH))
    return taper, np.min(np.abs(sx[wet])), float(np.min(wet_drz))


def isoneutral_nb_taper_range(temp, salt, depth, mask, k_iso=None):
    """The same for ``isoneutral_slopes_nb``'s slopes (each from its own column's vertical
    gradient at the four (column, level) pairs around a face), at wet faces and w-points."""
    nx, ny, nz = temp.shape
    p = depth[None, None, :]
    drdt = F.RHO0 * (-F.EOS_A * (1.0 + F.EOS_P * p) - F.EOS_C * (temp - 10.0)
                     - F.EOS_D * (salt - 35.0)) * mask
    drds = F.RHO0 * (F.EOS_B - F.EOS_D * (temp - 10.0)) * mask
    slopes, drzs = [], []
    for i in range(nx - 1):
        for j in range(ny):
            for k in range(nz):
                if mask[i, j, k] * mask[i + 1, j, k] == 0.0:
                    continue
                drx = 0.5 * ((drdt[i, j, k] + drdt[i + 1, j, k]) * (temp[i + 1, j, k]
                                                                    - temp[i, j, k])
                             + (drds[i, j, k] + drds[i + 1, j, k]) * (salt[i + 1, j, k]
                                                                      - salt[i, j, k])) / F.DX_O
                for ii in (i, i + 1):
                    for kw in (k - 1, k):
                        if 0 <= kw < nz - 1 and mask[ii, j, kw] * mask[ii, j, kw + 1] > 0.0:
                            drz = (drdt[ii, j, k] * (temp[ii, j, kw + 1] - temp[ii, j, kw])
                                   + drds[ii, j, k] * (salt[ii, j, kw + 1] - salt[ii, j, kw])
                                   ) / F.DZ_O
                            drzs.append(drz)
                            slopes.append(-drx / drz)
    slopes = np.array(slopes)
    taper = 0.5 * (1.0 + np.tanh((F.SLOPE_MAX - np.abs(slopes)) / F.SLOPE_WIDTH))
    return taper, np.min(np.abs(slopes)), float(np.min(drzs))


def _vmix_points(rng):
    temp, _ = _stratified(rng)
    return [(temp, rng.uniform(0.5, 2.0, size=(F.NX, F.NY, F.NZ - 1)),
             rng.normal(size=(F.NX, F.NY)), rng.uniform(0.2, 0.5))]


def _coast_mask():
    wet = np.ones((5, 5), dtype=bool)
    wet[0, :2] = False
    wet[3, 4] = False
    return wet


def _upwind_points(rng):
    return [(rng.normal(size=(5, 5)), away(0.2, 1.0, 4, 5)(rng), away(0.2, 1.0, 5, 4)(rng),
             _coast_mask())]


# ratios of consecutive differences, one in each regime of the superbee limiter:
# r < 0 (phi = 0), 0 < r < 1/2 (2r), 1/2 < r < 1 (1), 1 < r < 2 (r), r > 2 (2)
SUPERBEE_RATIOS = (-0.6, 0.3, 0.75, 1.5, 3.0, 0.7)


def _limiter_points(rng):
    r = np.array(SUPERBEE_RATIOS) + rng.uniform(-0.05, 0.05, size=len(SUPERBEE_RATIOS))
    d = np.empty(7)
    d[0] = rng.uniform(0.8, 1.2)
    for i in range(1, 7):
        d[i] = d[i - 1] / r[i - 1]
    q = np.concatenate(([rng.normal()], d)).cumsum() * 0.2
    return [(q, rng.uniform(0.3, 0.7))]


# ---- CFD ----------------------------------------------------------------------------------------


def _burgers_clear(u0, nu):
    """Every state of the four steps keeps its sign and |u| > 0.1 (the upwind switch)."""
    u = u0.copy()
    for _ in range(4):
        if np.min(np.abs(u)) < 0.1 or np.any(np.sign(u) != np.sign(u0)):
            return False
        up, um = np.maximum(u, 0.0), np.minimum(u, 0.0)
        back = (u - np.roll(u, 1)) / F.B_DX
        fwd = (np.roll(u, -1) - u) / F.B_DX
        lap = (np.roll(u, -1) - 2.0 * u + np.roll(u, 1)) / F.B_DX ** 2
        u = u - F.B_DT * (up * back + um * fwd) + F.B_DT * nu * lap
    return np.min(np.abs(u)) > 0.1


def _rusanov_clear(h0, hu0):
    """The two speeds compared by max() differ by 0.02 or more at every face and step."""
    h, hu = h0.copy(), hu0.copy()
    for _ in range(2):
        speed = np.abs(hu / h) + np.sqrt(F.SW_G * h)
        if np.min(np.abs(speed - np.roll(speed, -1))) < 0.02:
            return False
        a = np.maximum(speed, np.roll(speed, -1))
        hr, hur = np.roll(h, -1), np.roll(hu, -1)
        fh = 0.5 * (hu + hur) - 0.5 * a * (hr - h)
        fm = 0.5 * (hu * hu / h + 0.5 * F.SW_G * h * h + hur * hur / hr
                    + 0.5 * F.SW_G * hr * hr) - 0.5 * a * (hur - hu)
        h = h - F.SW_DT / F.SW_DX * (fh - np.roll(fh, 1))
        hu = hu - F.SW_DT / F.SW_DX * (fm - np.roll(fm, 1))
    return True


# ---- finance ------------------------------------------------------------------------------------


def _heston_clear(s0, v0, kappa, theta, xi, rho, z1, z2):
    """The variance stays 1e-3 or more away from 0 (the truncation); every terminal price is
    0.5 or more away from the strike; some paths end in the money after a truncated step, some
    in the money with none, some out of the money."""
    npaths, nsteps = z1.shape
    dt = F.MATURITY / nsteps
    logs = np.full(npaths, math.log(s0))
    v = np.full(npaths, v0)
    negative = np.zeros(npaths, dtype=bool)
    for t in range(nsteps):
        if np.min(np.abs(v)) < 1e-3:
            return False
        negative |= v < 0.0
        vp = np.maximum(v, 0.0)
        zv = rho * z1[:, t] + math.sqrt(1.0 - rho ** 2) * z2[:, t]
        logs = logs + (F.RATE - 0.5 * vp) * dt + np.sqrt(vp * dt) * z1[:, t]
        v = v + kappa * (theta - vp) * dt + xi * np.sqrt(vp * dt) * zv
    st = np.exp(logs)
    itm = st > F.STRIKE
    return (np.min(np.abs(st - F.STRIKE)) > 0.5 and np.any(itm & negative)
            and np.any(itm & ~negative) and np.any(~itm))


def _gbm_paths(s0, sigma, z):
    dt = F.MATURITY / z.shape[1]
    incr = (F.RATE - 0.5 * sigma ** 2) * dt + sigma * math.sqrt(dt) * z
    return s0 * np.exp(np.cumsum(incr, axis=1))


def _barrier_clear(s0, sigma, barrier, z):
    """Paths 0.5 or more from the barrier at every step and from the strike at the end; some
    knocked out, some alive in the money."""
    paths = _gbm_paths(s0, sigma, z)
    alive = np.all(paths < barrier, axis=1)
    return (np.min(np.abs(paths - barrier)) > 0.5 and np.min(np.abs(paths[:, -1] - F.STRIKE))
            > 0.5 and not np.all(alive) and np.any(alive & (paths[:, -1] > F.STRIKE)))


def _lookback_clear(s0, sigma, z):
    """No ties in the running extremes (every path's values, s0 included, 0.05 apart); the
    largest values 0.5 or more from the strike."""
    paths = _gbm_paths(s0, sigma, z)
    full = np.hstack((np.full((paths.shape[0], 1), s0), paths))
    return (all(distinct(row) for row in full)
            and np.min(np.abs(np.max(full, axis=1) - F.STRIKE)) > 0.5)


def _drawdown_clear(returns):
    """New peaks clear of the old ones, the worst drawdown clear of the others (1e-3)."""
    for row in returns:
        equity = np.cumprod(1.0 + row)
        prev_peak = np.maximum.accumulate(np.concatenate(([1.0], equity)))[:-1]
        if np.min(np.abs(equity - prev_peak)) < 1e-3:
            return False
        peak = np.maximum(prev_peak, equity)
        dd = np.concatenate(([0.0], (peak - equity) / peak))
        top = np.sort(dd)
        if top[-1] - top[-2] < 1e-3:
            return False
    return True


def _heston_points(rng):
    while True:
        p = (rng.uniform(95.0, 105.0), rng.uniform(0.03, 0.05), rng.uniform(1.0, 2.0),
             rng.uniform(0.03, 0.06), rng.uniform(0.6, 0.9), rng.uniform(-0.7, -0.3),
             rng.normal(size=(8, 4)), rng.normal(size=(8, 4)))
        if _heston_clear(*p):
            return [p]


SABR_STRIKES = np.array([80.0, 90.0, 95.0, 105.0, 110.0, 120.0])


def _sabr_points(rng):
    return [(SABR_STRIKES + rng.uniform(-1.0, 1.0, size=6), rng.uniform(99.0, 101.0),
             rng.uniform(2.0, 3.0), rng.uniform(-0.5, -0.2), rng.uniform(0.3, 0.6))]


# ---- hydrology ----------------------------------------------------------------------------------


def _bucket_clear(smax, k, s0):
    """The store is 0.5 or more from its capacity after every day's rain; it spills on some
    day and not on others (per catchment)."""
    s = np.atleast_1d(np.asarray(s0, dtype=float)).copy()
    smax = np.atleast_1d(smax)
    k = np.atleast_1d(k)
    spilled = np.zeros(s.shape, dtype=bool)
    for t in range(F.PRECIP.shape[0]):
        s = s + F.PRECIP[t]
        if np.min(np.abs(s - smax)) < 0.5:
            return False
        spilled |= s > smax
        s = np.minimum(s, smax)
        s = s - np.minimum(F.PET[t] * s / smax, s)
        s = s - k * s
    return bool(np.all(spilled))


def _chain_points(rng):
    x0 = np.cumsum(1.0 + rng.normal(0.0, 0.1, size=5))
    return [(x0, rng.normal(0.0, 0.1, size=5), rng.uniform(5.0, 15.0, size=5))]


def _biquad_points(rng):
    sos = np.empty((2, 6))
    sos[:, :3] = rng.normal(0.0, 0.5, size=(2, 3))
    sos[:, 3] = rng.uniform(0.8, 1.2, size=2)
    sos[:, 4] = rng.uniform(-0.5, 0.5, size=2)
    sos[:, 5] = rng.uniform(0.1, 0.4, size=2)
    return [(rng.normal(size=8), sos)]


def _kepler_times_clear(times, ecc, period):
    """Mean anomalies 0.1 or more from the multiples of 2 pi (where the true anomaly's atan2
    wraps)."""
    d = np.remainder(2.0 * np.pi * times / period, 2.0 * np.pi)
    return np.min(np.minimum(d, 2.0 * np.pi - d)) > 0.1


# ---- the table ----------------------------------------------------------------------------------

KERNEL_CASES = [
    # ocean and climate
    case(F.eos_density_np, points=_eos_points, wrt=(0, 1, 2)),
    case(F.eos_density_nb, points=_eos_points, wrt=(0, 1, 2)),
    # tol 1e-4: at the larger FD step (1e-5 relative, so 3.5e-4 in a salinity of 35) the
    # taper's curvature leaves a truncation error of ~8e-5; the 1e-7 step agrees to 1e-6
    case(F.isoneutral_slopes_nb, points=_isoneutral_points, wrt=(0, 1, 2, 4), tol=1e-4),
    case(F.isoneutral_slopes_np, points=_isoneutral_points, wrt=(0, 1, 2, 4), tol=1e-4),
    case(F.vertical_mixing_nb, points=_vmix_points),
    case(F.vertical_mixing_np, points=_vmix_points),
    case(F.upwind_advection_np, points=_upwind_points, wrt=(0, 1, 2)),
    case(F.upwind_advection_nb, points=_upwind_points, wrt=(0, 1, 2)),
    case(F.limited_advection_nb, points=_limiter_points),
    case(F.leapfrog_levels_np, N(8), n=1),
    case(F.leapfrog_levels_nb, N(8), n=1),
    case(F.time_levels_nb, N(8), U(0.2, 0.6), n=1),
    # CFD
    case(F.burgers_np, away(0.4, 1.5, 8), U(0.05, 0.2), n=1, accept=_burgers_clear),
    case(F.burgers_nb, away(0.4, 1.5, 8), U(0.05, 0.2), n=1, accept=_burgers_clear),
    case(F.shallow_water_np, N(5, 4, s=0.1), N(6, 4, s=0.1), N(5, 5, s=0.1), n=1),
    case(F.shallow_water_nb, U(0.8, 1.2, 8), U(0.1, 0.5, 8), n=1, accept=_rusanov_clear),
    case(F.cavity_step_np, N(5, 5, s=0.3), N(5, 5, s=0.3), N(5, 5, s=0.1), n=1),
    case(F.cavity_step_nb, N(5, 5, s=0.3), N(5, 5, s=0.3), N(5, 5, s=0.1), n=1),
    case(F.pressure_sor_nb, N(5, 5), U(1.2, 1.8), n=1),
    case(F.pressure_redblack_np, N(5, 5), U(1.2, 1.8), n=1),
    case(F.fv_diffusion_nb, N(5, 5), U(0.5, 2.0, 5, 5), n=1),
    # np.add.at of the fluxes at the faces' two cells (refused until hb6b: a loop of adds)
    case(F.fv_scatter_add, N(5), np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4]), n=1),
    # finance
    case(F.heston_call_nb, points=_heston_points),
    case(F.heston_call_np, points=_heston_points),
    case(F.sabr_vol_np, points=_sabr_points),
    case(F.sabr_vol_nb, points=_sabr_points),
    case(F.barrier_call_nb, U(95.0, 105.0), U(0.2, 0.3), U(115.0, 125.0), N(8, 6), n=1,
         accept=_barrier_clear),
    case(F.barrier_call_np, U(95.0, 105.0), U(0.2, 0.3), U(115.0, 125.0), N(8, 6), n=1,
         accept=_barrier_clear),
    case(F.lookback_nb, U(95.0, 105.0), U(0.15, 0.3), N(6, 6), n=1, accept=_lookback_clear),
    case(F.max_drawdown_nb, N(3, 8, s=0.05), n=1, accept=_drawdown_clear),
    case(F.bootstrap_curve_np, U(0.01, 0.05, 6), n=1),
    case(F.bootstrap_curve_nb, U(0.01, 0.05, 6), n=1),
    case(F.portfolio_risk_np, N(4), N(10, 4, s=0.2, m=0.05), n=1,
         accept=lambda lg, r: distinct(lg)),
    case(F.portfolio_risk_nb, N(4), N(10, 4, s=0.2, m=0.05), n=1,
         accept=lambda lg, r: distinct(lg)),
    # signal processing
    case(F.fir_filter_np, N(8), N(3), n=1),
    case(F.fir_filter_nb, N(8), N(3), n=1),
    case(F.biquad_cascade_nb, points=_biquad_points),
    case(F.windowed_power_np, N(8), n=1),
    case(F.windowed_power_nb, N(8), n=1),
    case(F.autocorr_np, N(8), n=1),
    case(F.autocorr_nb, N(8), n=1),
    case(F.savgol_np, N(8), n=1),
    case(F.savgol_nb, N(8), n=1),
    # robotics, orbits, chemistry, epidemics, hydrology, images, springs, filters
    case(F.planar_arm_np, N(4), N(2), n=1),
    case(F.dh_chain_nb, N(4), N(3, s=0.3), n=1),
    case(F.kepler_np, U(0.0, 2.0 * np.pi, 6), U(0.1, 0.5), U(1.0, 2.0), n=1),
    case(F.kepler_nb, U(0.0, 3.0, 6), U(0.1, 0.6), U(2.0, 4.0), n=1,
         accept=_kepler_times_clear),
    case(F.kinetics_np, U(0.5, 1.5, 3), U(0.2, 1.0, 3), n=1),
    case(F.kinetics_nb, U(0.5, 1.5, 3), U(0.2, 1.0, 3), n=1),
    case(F.sir_np, U(0.2, 0.4), U(0.05, 0.15), U(2.0, 6.0, 3), n=1),
    case(F.sir_nb, U(0.3, 0.5), U(0.05, 0.15), U(5.0, 15.0), n=1),
    case(F.bucket_nb, U(20.0, 40.0), U(0.05, 0.2), U(5.0, 15.0), n=1, accept=_bucket_clear),
    case(F.bucket_np, U(20.0, 40.0, 3), U(0.05, 0.2, 3), U(5.0, 15.0, 3), n=1,
         accept=_bucket_clear),
    case(F.tv_denoise_np, N(5, 5), U(0.1, 0.3), n=1),
    case(F.tv_denoise_nb, N(5, 5), U(0.1, 0.3), n=1),
    case(F.spring_chain_np, points=_chain_points),
    case(F.spring_chain_nb, points=_chain_points),
    # a helper that zero-fills its output argument, then adds into it under an `if` in a loop
    # (refused before: a branch's merge of the array's versions lost the loop's lent version)
    case(F.spring_chain_zeroed_nb, points=_chain_points),
    case(F.kalman_update_np, N(4), N(4, 4, s=0.5), N(2), N(m=-1.0, s=0.3), n=1),
    case(F.kalman_level_nb, N(8), N(m=-1.0, s=0.3), N(m=-1.0, s=0.3), n=1),
    # refused until np.correlate and np.interp were written as compositions (issue #43)
    case(F.autocorr_correlate, N(8), n=1),
    case(F.curve_interp, U(0.01, 0.05, 4), n=1),
    case(F.ghost_cells_pad, N(5, 5), n=1),  # refused until np.pad was a composition
    case(F.spectrum_rfft, N(8), n=1),  # refused until np.fft (complex numbers as pairs)
    case(F.centred_gradient, N(5, 5), n=1),  # refused until np.gradient was written in Python
    case(F.portfolio_pca, N(10, 4), n=1),  # refused until np.linalg.eigh had its rules
    # refused until scipy.signal.lfilter was written as a loop (issue #43)
    case(F.iir_lfilter, N(8), N(3), np.array([1.0, -0.5, 0.2]), n=1, wrt=(0, 1)),
]

# ---- refused: (case, words the message must hold, the text of the line it must point at) -----
# Each refusal must be a jitgrad error naming the construct, with the user's file, line and a
# caret (test_corpus_kernels.test_refused_cleanly).

REFUSED_CASES = [
    # Views of the time levels named in the loop, then given to a helper that writes through
    # one: refused at the loop, though passing levels[t % 2] straight (time_levels_nb) works.
    (case(F.time_levels_views_nb, N(8), U(0.2, 0.6), n=1),
     "`levels` is read in this loop and shares memory with an array the loop writes into",
     "for step in range(4):"),
    (case(F.drawdown_accumulate, N(8, s=0.05), n=1), "np.maximum.accumulate is not supported",
     "peak = np.maximum.accumulate(equity)"),
]


def _check_table():
    names = [c.name for c in KERNEL_CASES] + [c.name for c, _, _ in REFUSED_CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    covered = {c.fn for c in KERNEL_CASES}
    missing = [f.__name__ for f in F.KERNELS if f not in covered]
    assert not missing, f"kernels without a case: {missing}"
    refused = {c.fn for c, _, _ in REFUSED_CASES}
    missing = [f.__name__ for f in F.REFUSED if f not in refused]
    assert not missing, f"refused kernels without a case: {missing}"


_check_table()
