"""Numerical-kernel corpus (issue #42 item 3): ocean, CFD, finance, signal processing and other
kernels (``corpus_kernels_fns.py``, in NumPy and Numba styles), each differentiated by jitgrad
as users run it (compiled with Numba) and checked against

* plain Python for the value, and for leaving its arguments alone;
* central finite differences at two steps (1e-5 and 1e-7, relative): the gradient must agree
  with both, which also shows no kink lies within the larger step;
* JAX, for the NumPy-style kernels transcribed to ``jax.numpy`` below (skipped without JAX).

The kernels jitgrad refuses must be refused cleanly: a ``JitgradError`` naming the construct,
with the user's file, line and a caret, never a Python exception from inside jitgrad.
"""

import functools
import os
import re
import subprocess
import sys

import corpus_kernels_fns as F
import numpy as np
import pytest
from corpus_check import (
    arg_names,
    call_checked,
    check_value,
    copied,
    point_params,
    reference_value,
    value_and_grad_fn,
)
from corpus_kernels import (
    KERNEL_CASES,
    REFUSED_CASES,
    SUPERBEE_RATIOS,
    _barrier_clear,
    _bucket_clear,
    _burgers_clear,
    _drawdown_clear,
    _heston_clear,
    _lookback_clear,
    _rusanov_clear,
    isoneutral_nb_taper_range,
    isoneutral_taper_range,
)
from fd import numeric_grad

import jitgrad
from jitgrad import JitgradError

FD_STEPS = (1e-5, 1e-7)
FNS_PATH = F.eos_density_np.__code__.co_filename
with open(FNS_PATH, encoding="utf-8") as _f:
    FNS_LINES = _f.read().splitlines()

BY_NAME = {c.name: c for c in KERNEL_CASES}


@functools.cache
def fd_grad(case, idx, k, eps):
    return numeric_grad(case.fn, case.points[idx], k, eps=eps)


def check_grad_two_steps(case, idx, k, g):
    x = case.points[idx][k]
    what = f"{case.name}: gradient w.r.t. argument {k} ({arg_names(case)[k]})"
    if isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray) and g.shape == x.shape and g.dtype == np.float64, what
    else:
        assert isinstance(g, float), f"{what} is {type(g).__name__}, expected float"
    assert np.all(np.isfinite(g)), f"{what} is not finite: {g}"
    refs = [fd_grad(case, idx, k, eps) for eps in FD_STEPS]
    scale = max(1.0, abs(reference_value(case, idx)), *(float(np.max(np.abs(r))) for r in refs))
    for eps, ref in zip(FD_STEPS, refs):
        np.testing.assert_allclose(
            g, ref, rtol=case.tol, atol=1e-2 * case.tol * scale,
            err_msg=f"{what} differs from central differences at step {eps:g}")


# Whole-array kernels whose gradients Numba compiles for 10-50 s each with an empty cache (one
# generated function of hundreds of lines: issue 45 bounds that). The default run checks them
# as plain Python, the generated source run by the interpreter (`test_heavy_kernels_as_plain_
# python`); compiled, with `python -m pytest -m heavy`.
HEAVY = {"isoneutral_slopes_np", "cavity_step_np", "vertical_mixing_np", "shallow_water_np",
         "pressure_redblack_np", "tv_denoise_np", "upwind_advection_np", "vertical_mixing_nb",
         # their functions compiled in tests of their own (np.gradient: test_numpy_surface;
         # eigh: test_linalg_decompositions), here as plain Python: the suite's 15 minutes
         "centred_gradient", "portfolio_pca",
         "iir_lfilter"}  # (lfilter compiled in test_statistics_code)


def _marked(params):
    return [pytest.param(*p.values, marks=pytest.mark.heavy, id=p.id)
            if p.values[0].name in HEAVY else p for p in params]


@pytest.mark.parametrize(("case", "idx"), _marked(point_params(KERNEL_CASES)))
def test_value_and_grad(case, idx):
    value, grads = call_checked(value_and_grad_fn(case, case.wrt), case, idx)
    check_value(case, idx, value)
    assert isinstance(grads, tuple) and len(grads) == len(case.wrt), case.name
    for k, g in zip(case.wrt, grads):
        check_grad_two_steps(case, idx, k, g)
    # a real check: some gradient is nonzero (e.g. not a kernel whose loss ignores its inputs)
    assert any(np.any(np.asarray(g) != 0.0) for g in grads), f"{case.name}: all gradients 0"


def test_heavy_kernels_as_plain_python():
    """The `HEAVY` kernels' value and gradient checks, with the generated source run as plain
    Python (``JITGRAD_DISABLE_JIT=1``, read when jitgrad is imported: a process of its own)."""
    env = dict(os.environ, JITGRAD_DISABLE_JIT="1")
    run = subprocess.run([sys.executable, "-m", "pytest", __file__, "-m", "heavy", "-q", "-n",
                          "0", "-p", "no:cacheprovider"], env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    passed = re.search(r"(\d+) passed", run.stdout)  # (and JAX's, where it is installed)
    assert passed and int(passed.group(1)) >= len(HEAVY), run.stdout[-2000:]


@pytest.mark.parametrize(("case", "idx"), point_params(KERNEL_CASES))
def test_plain_kernel_leaves_arguments_alone(case, idx):
    args = copied(case.points[idx])
    case.fn(*args)
    for a, orig in zip(args, case.points[idx]):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, orig, err_msg=f"{case.name} wrote into an argument")


# ---- the points keep clear of kinks and take every branch ------------------------------------

CLEAR = {
    "burgers_np": _burgers_clear, "burgers_nb": _burgers_clear,
    "shallow_water_nb": _rusanov_clear,
    "heston_call_nb": _heston_clear, "heston_call_np": _heston_clear,
    "barrier_call_nb": _barrier_clear, "barrier_call_np": _barrier_clear,
    "lookback_nb": _lookback_clear, "max_drawdown_nb": _drawdown_clear,
    "bucket_nb": _bucket_clear, "bucket_np": _bucket_clear,
}


@pytest.mark.parametrize("name", sorted(CLEAR))
def test_points_clear_of_kinks(name):
    for point in BY_NAME[name].points:
        assert CLEAR[name](*point), f"{name}: a point is near a kink or misses a branch"


@pytest.mark.parametrize(("name", "tapers"), [
    ("isoneutral_slopes_np", isoneutral_taper_range),
    ("isoneutral_slopes_nb", isoneutral_nb_taper_range)])
def test_isoneutral_taper_strictly_inside(name, tapers):
    """The tanh taper is neither 0 nor 1 at any wet face (both of its sides matter), the
    slopes are clear of abs()'s kink at 0, and the vertical gradients far above their floor."""
    for point in BY_NAME[name].points:
        taper, min_abs_slope, min_drz = tapers(*point)
        assert taper.size > 10
        assert 0.02 < taper.min() and taper.max() < 0.98, (taper.min(), taper.max())
        assert taper.max() - taper.min() > 0.5  # the points span the taper
        assert min_abs_slope > 1e-3 and min_drz > 100 * F.DRZ_MIN


def test_superbee_ratios_span_every_regime():
    q, _ = BY_NAME["limited_advection_nb"].points[0]
    d = np.diff(q)
    r = d[:-1] / d[1:]
    regimes = {int(np.searchsorted([0.0, 0.5, 1.0, 2.0], v)) for v in r}
    assert regimes == {0, 1, 2, 3, 4}, r
    assert min(min(abs(r - c)) for c in (0.0, 0.5, 1.0, 2.0)) > 0.04, r
    assert len(r) == len(SUPERBEE_RATIOS)


# ---- JAX as a second, independent reverse mode ---------------------------------------------------


@pytest.fixture(scope="module")
def jax_env():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return jax, jnp, _jax_kernels(jnp)


def _jax_kernels(jnp):
    """Transcriptions of some NumPy-style kernels to jax.numpy (in-place writes become
    ``.at[...]``); same constants, same arithmetic."""

    def eos_density_np(temp, salt, depth, mask):
        dt = temp - 10.0
        ds = salt - 35.0
        p = depth[None, None, :]
        rho = F.RHO0 * (-F.EOS_A * (1.0 + F.EOS_P * p) * dt - 0.5 * F.EOS_C * dt ** 2
                        + F.EOS_B * ds - F.EOS_D * dt * ds) * mask
        n2 = (rho[:, :, 1:] - rho[:, :, :-1]) / F.DZ_O * mask[:, :, 1:]
        return jnp.sum(F.W3 * rho) + 0.1 * jnp.sum(n2 * n2)

    def upwind_advection_np(q, u, v, wet):
        open_x = wet[1:, :] & wet[:-1, :]
        open_y = wet[:, 1:] & wet[:, :-1]
        for _ in range(3):
            fx = jnp.where(open_x, jnp.maximum(u, 0.0) * q[:-1] + jnp.minimum(u, 0.0) * q[1:],
                           0.0)
            fy = jnp.where(open_y, jnp.maximum(v, 0.0) * q[:, :-1]
                           + jnp.minimum(v, 0.0) * q[:, 1:], 0.0)
            div = (jnp.zeros_like(q).at[:-1].add(fx).at[1:].add(-fx)
                   .at[:, :-1].add(fy).at[:, 1:].add(-fy))
            q = q - F.ADV_DT * jnp.where(wet, div, 0.0)
        return jnp.sum(F.W2 * q) + 0.5 * jnp.sum(q * q)

    def leapfrog_levels_np(q0):
        q = jnp.stack([q0, q0 - 0.5 * F.LF_C * (jnp.roll(q0, -1) - jnp.roll(q0, 1)),
                       jnp.zeros_like(q0)])
        taum1, tau, taup1 = 0, 1, 2
        for _ in range(4):
            q = q.at[taup1].set(q[taum1] - F.LF_C * (jnp.roll(q[tau], -1)
                                                     - jnp.roll(q[tau], 1)))
            q = q.at[tau].add(F.LF_NU * (q[taup1] - 2.0 * q[tau] + q[taum1]))
            taum1, tau, taup1 = tau, taup1, taum1
        return jnp.sum(F.W8 * q[tau]) + jnp.sum(q[taum1] ** 2)

    def burgers_np(u, nu):
        for _ in range(4):
            back = (u - jnp.roll(u, 1)) / F.B_DX
            fwd = (jnp.roll(u, -1) - u) / F.B_DX
            lap = (jnp.roll(u, -1) - 2.0 * u + jnp.roll(u, 1)) / F.B_DX ** 2
            u = (u - F.B_DT * (jnp.maximum(u, 0.0) * back + jnp.minimum(u, 0.0) * fwd)
                 + F.B_DT * nu * lap)
        return jnp.sum(F.W8 * u) + 0.5 * jnp.sum(u ** 3)

    def heston_call_np(s0, v0, kappa, theta, xi, rho, z1, z2):
        npaths, nsteps = z1.shape
        dt = F.MATURITY / nsteps
        logs = jnp.full(npaths, jnp.log(s0))
        v = jnp.full(npaths, v0)
        for t in range(nsteps):
            vp = jnp.maximum(v, 0.0)
            zv = rho * z1[:, t] + jnp.sqrt(1.0 - rho ** 2) * z2[:, t]
            # sqrt(vp * dt) where vp > 0: the truncated paths take no gradient through it
            # (jnp.sqrt's derivative at 0 is inf, jitgrad's 0; its factor d vp is 0 there)
            root = jnp.where(vp > 0.0, jnp.sqrt(jnp.where(vp > 0.0, vp, 1.0) * dt), 0.0)
            logs = logs + (F.RATE - 0.5 * vp) * dt + root * z1[:, t]
            v = v + kappa * (theta - vp) * dt + xi * root * zv
        payoff = jnp.maximum(jnp.exp(logs) - F.STRIKE, 0.0)
        return jnp.exp(-F.RATE * F.MATURITY) * jnp.mean(payoff)

    def sabr_vol_np(strikes, fwd, alpha, rho, nu):
        omb = 1.0 - F.SABR_BETA
        fk = fwd * strikes
        logfk = jnp.log(fwd / strikes)
        fkb = fk ** (0.5 * omb)
        z = nu / alpha * fkb * logfk
        xz = jnp.log((jnp.sqrt(1.0 - 2.0 * rho * z + z * z) + z - rho) / (1.0 - rho))
        denom = fkb * (1.0 + omb ** 2 / 24.0 * logfk ** 2 + omb ** 4 / 1920.0 * logfk ** 4)
        corr = 1.0 + (omb ** 2 / 24.0 * alpha ** 2 / fk ** omb
                      + 0.25 * rho * F.SABR_BETA * nu * alpha / fkb
                      + (2.0 - 3.0 * rho ** 2) / 24.0 * nu ** 2) * F.MATURITY
        vols = alpha / denom * (z / xz) * corr
        return jnp.sum((vols - F.MARKET_VOLS) ** 2) * 100.0

    def portfolio_risk_np(logits, rets):
        w = jnp.exp(logits - jnp.max(logits))
        w = w / jnp.sum(w)
        mu = rets.mean(axis=0)
        dev = rets - mu
        cov = dev.T @ dev / (rets.shape[0] - 1)
        return jnp.sqrt(w @ cov @ w) - 0.5 * (w @ mu)

    def windowed_power_np(x):
        n = x.shape[0]
        t = jnp.arange(n)
        xw = x * (0.5 - 0.5 * jnp.cos(2.0 * jnp.pi * t / n))
        k = jnp.arange(n // 2 + 1)
        ang = 2.0 * jnp.pi * jnp.outer(k, t) / n
        power = (jnp.cos(ang) @ xw) ** 2 + (jnp.sin(ang) @ xw) ** 2
        return jnp.sum(F.W8[:k.shape[0]] * jnp.log(power + 1e-2))

    def planar_arm_np(q, target):
        phi = jnp.cumsum(q)
        x = jnp.sum(F.LINKS * jnp.cos(phi))
        y = jnp.sum(F.LINKS * jnp.sin(phi))
        return (x - target[0]) ** 2 + (y - target[1]) ** 2 + 0.01 * jnp.sum(q ** 2)

    def kepler_np(mean_anom, ecc, semi_major):
        e_anom = mean_anom + ecc * jnp.sin(mean_anom)
        for _ in range(8):
            e_anom = e_anom - (e_anom - ecc * jnp.sin(e_anom) - mean_anom) / (
                1.0 - ecc * jnp.cos(e_anom))
        x = semi_major * (jnp.cos(e_anom) - ecc)
        y = semi_major * jnp.sqrt(1.0 - ecc ** 2) * jnp.sin(e_anom)
        r = semi_major * (1.0 - ecc * jnp.cos(e_anom))
        return jnp.sum(F.W8[:x.shape[0]] * x) + jnp.sum(y) + jnp.sum(1.0 / r)

    def tv_denoise_np(f, lam):
        def diffs(u):
            dx = jnp.zeros_like(u).at[:-1, :].set(u[1:, :] - u[:-1, :])
            dy = jnp.zeros_like(u).at[:, :-1].set(u[:, 1:] - u[:, :-1])
            return dx, dy

        u = f
        for _ in range(3):
            dx, dy = diffs(u)
            mag = jnp.sqrt(F.TV_EPS + dx ** 2 + dy ** 2)
            px, py = dx / mag, dy / mag
            div = px.at[1:, :].add(-px[:-1, :]) + py.at[:, 1:].add(-py[:, :-1])
            u = u - F.TV_TAU * ((u - f) - lam * div)
        dx, dy = diffs(u)
        return 0.5 * jnp.sum((u - f) ** 2) + lam * jnp.sum(jnp.sqrt(F.TV_EPS + dx ** 2 + dy ** 2))

    def kalman_update_np(x, chol, y, log_q):
        p = chol @ chol.T + 0.1 * jnp.eye(4)
        xp = F.KF_F @ x
        pp = F.KF_F @ p @ F.KF_F.T + jnp.exp(log_q) * jnp.eye(4)
        innov = y - F.KF_H @ xp
        s = F.KF_H @ pp @ F.KF_H.T + 0.5 * jnp.eye(2)
        gain = jnp.linalg.solve(s, F.KF_H @ pp).T
        x_new = xp + gain @ innov
        p_new = (jnp.eye(4) - gain @ F.KF_H) @ pp
        _, logdet = jnp.linalg.slogdet(s)
        nll = 0.5 * (innov @ jnp.linalg.solve(s, innov) + logdet)
        return nll + jnp.sum(F.W8[:4] * x_new) + jnp.trace(p_new)

    return {f.__name__: f for f in (
        eos_density_np, upwind_advection_np, leapfrog_levels_np, burgers_np, heston_call_np,
        sabr_vol_np, portfolio_risk_np, windowed_power_np, planar_arm_np, kepler_np,
        tv_denoise_np, kalman_update_np)}


JAX_CASES = ["eos_density_np", "upwind_advection_np", "leapfrog_levels_np", "burgers_np",
             "heston_call_np", "sabr_vol_np", "portfolio_risk_np", "windowed_power_np",
             "planar_arm_np", "kepler_np", "tv_denoise_np", "kalman_update_np"]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.heavy) if n in HEAVY else n
                                  for n in JAX_CASES])
def test_agrees_with_jax(name, jax_env):
    jax, jnp, kernels = jax_env
    case = BY_NAME[name]
    args = case.points[0]
    jargs = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a
                  for a in args)
    jvalue, jgrads = jax.value_and_grad(kernels[name], argnums=case.wrt)(*jargs)
    np.testing.assert_allclose(float(jvalue), reference_value(case, 0), rtol=1e-12,
                               err_msg=f"{name}: the JAX transcription computes another value")
    _, grads = call_checked(value_and_grad_fn(case, case.wrt), case, 0)
    for k, g, jg in zip(case.wrt, grads, jgrads):
        jg = np.asarray(jg)
        scale = max(1.0, float(np.max(np.abs(jg))))
        np.testing.assert_allclose(g, jg, rtol=1e-9, atol=1e-11 * scale,
                                   err_msg=f"{name}: jitgrad and JAX differ (argument {k})")


# ---- refusals -----------------------------------------------------------------------------------


def _marked_line(text):
    hits = [k + 1 for k, line in enumerate(FNS_LINES) if line.strip() == text]
    assert len(hits) == 1, f"{text!r} found on lines {hits} of {FNS_PATH}"
    return hits[0]


@pytest.mark.parametrize(("case", "construct", "line"),
                         [pytest.param(c, w, t, id=c.name) for c, w, t in REFUSED_CASES])
def test_refused_cleanly(case, construct, line):
    args = copied(case.points[0])
    assert np.isfinite(case.fn(*copied(args)))  # a working NumPy program
    try:
        jitgrad.value_and_grad(case.fn, wrt=case.wrt)(*args)
    except JitgradError as e:
        err = e
    except Exception as e:  # noqa: BLE001 (a crash inside jitgrad, not a refusal)
        pytest.fail(f"{case.name}: {type(e).__name__} instead of a jitgrad refusal: {e}")
    else:
        pytest.fail(f"{case.name}: not refused (move it to KERNEL_CASES)")
    text = str(err)
    assert construct in text, text
    lines = text.splitlines()
    header = f'File "{FNS_PATH}", line {_marked_line(line)}:'
    assert header in lines, text
    k = lines.index(header)
    assert lines[k + 1] == "    " + line, text
    assert lines[k + 2].strip() == "^", text
