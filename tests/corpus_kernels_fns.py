"""Kernels for the numerical-kernel corpus (``corpus_kernels.py``, issue #42 item 3).

Small programs of the kinds public numerical projects are made of, in the forms those projects
write them, for the domains the other corpora do not cover: ocean and climate models
(equation of state, isoneutral slopes with a tanh taper on a masked grid, implicit vertical
mixing by a tridiagonal solve, upwind and flux-limited advection, leapfrog with rotating time
levels), CFD (Burgers, shallow water on a staggered grid, a lid-driven cavity's pressure
Poisson step, SOR and red-black relaxation, finite-volume diffusion), finance (Heston and
SABR, barrier and lookback payoffs, drawdown, yield-curve bootstrapping, portfolio risk),
signal processing (FIR and biquad filters as loops, a windowed DFT as explicit sums,
autocorrelation, Savitzky-Golay smoothing) and others (forward kinematics, Kepler's equation,
chemical kinetics by RK4, an SIR epidemic, a hydrological bucket model, total variation
denoising, a spring-mass chain, Kalman filters).

Most kernels come twice: ``*_np`` in NumPy's whole-array style, ``*_nb`` in the style of Numba
code (explicit loops writing into preallocated arrays, small ``@numba.njit`` helpers, a few
``@numba.njit`` entries and a ``numba.prange``, loops over literal tuples with ``continue``,
the ``min``/``max`` builtins, negative indices such as ``a[:, -1] = 0.0``). The forms are those
such projects use (benchmark suites of ocean-model kernels, CFD teaching codes, pricing
libraries, DSP code); every line was written for this corpus, none copied from any project.
Coefficients are made up: the programs are realistic in form, not calibrated models.

Every entry function returns a scalar (a weighted sum of what the kernel computes, with fixed
weights from ``np.arange``) and leaves its arguments alone. The ``REFUSED`` group holds what
jitgrad refuses: the same kinds of programs written with a NumPy/SciPy function it does not
support, and two Numba-style forms it refuses although it supports each of their parts
(``corpus_kernels.py`` lists the expected refusals).
"""

import math

import numba
import numpy as np
import scipy.signal

# ---- shared constants ---------------------------------------------------------------------------

NX, NY, NZ = 5, 4, 3
W3 = (1.0 + np.arange(NX * NY * NZ).reshape(NX, NY, NZ) % 7) / 7.0  # weights on the 3-D grid
W2 = (1.0 + np.arange(25.0).reshape(5, 5) % 4) / 4.0
W8 = np.arange(1.0, 9.0) / 8.0

# a made-up nonlinear equation of state (reference state T=10, S=35), in density anomaly form
RHO0 = 1025.0
EOS_A = 1.7e-4  # thermal expansion
EOS_B = 7.6e-4  # haline contraction
EOS_C = 1.0e-5  # cabbeling (quadratic in T)
EOS_D = 2.0e-6  # T-S cross term
EOS_P = 2.5e-3  # thermobaric: expansion grows with depth (per level unit)

DX_O, DZ_O = 5.0, 1.0  # ocean grid spacings (nondimensional)
SLOPE_MAX, SLOPE_WIDTH = 0.03, 0.02  # taper: 1/2 at |slope| = SLOPE_MAX
DRZ_MIN = 1e-4  # floor on the vertical density gradient


# ---- ocean and climate --------------------------------------------------------------------------


def eos_density_np(temp, salt, depth, mask):
    """Density anomaly of a masked 3-D ocean from T, S and the depth of each level."""
    dt = temp - 10.0
    ds = salt - 35.0
    p = depth[np.newaxis, np.newaxis, :]
    rho = RHO0 * (-EOS_A * (1.0 + EOS_P * p) * dt - 0.5 * EOS_C * dt ** 2
                  + EOS_B * ds - EOS_D * dt * ds)
    rho = rho * mask
    # buoyancy frequency squared between levels, a typical diagnostic
    n2 = (rho[:, :, 1:] - rho[:, :, :-1]) / DZ_O * mask[:, :, 1:]
    return np.sum(W3 * rho) + 0.1 * np.sum(n2 * n2)


@numba.njit
def _rho_anomaly(t, s, p):
    dt = t - 10.0
    ds = s - 35.0
    return RHO0 * (-EOS_A * (1.0 + EOS_P * p) * dt - 0.5 * EOS_C * dt * dt
                   + EOS_B * ds - EOS_D * dt * ds)


def eos_density_nb(temp, salt, depth, mask):
    nx, ny, nz = temp.shape
    rho = np.zeros_like(temp)
    for i in numba.prange(nx):
        for j in range(ny):
            for k in range(nz):
                if mask[i, j, k] == 0.0:
                    continue
                rho[i, j, k] = _rho_anomaly(temp[i, j, k], salt[i, j, k], depth[k])
    total = 0.0
    for i in range(nx):
        for j in range(ny):
            for k in range(1, nz):
                n2 = (rho[i, j, k] - rho[i, j, k - 1]) / DZ_O * mask[i, j, k]
                total += 0.1 * n2 * n2
    return np.sum(W3 * rho) + total


@numba.njit
def _drho_dt(t, s, p):
    return RHO0 * (-EOS_A * (1.0 + EOS_P * p) - EOS_C * (t - 10.0) - EOS_D * (s - 35.0))


@numba.njit
def _drho_ds(t):
    return RHO0 * (EOS_B - EOS_D * (t - 10.0))


@numba.njit
def _taper(slope):
    return 0.5 * (1.0 + math.tanh((SLOPE_MAX - abs(slope)) / SLOPE_WIDTH))


def isoneutral_slopes_nb(temp, salt, depth, mask, k_iso):
    """Isoneutral diffusivity on the east faces of a masked grid: the slope of the neutral
    surface from the linearised density gradients, tapered where it is steep; the four
    (column, level) pairs around each face visited by loops over literal tuples."""
    nx, ny, nz = temp.shape
    drdt = np.zeros_like(temp)
    drds = np.zeros_like(temp)
    for i in range(nx):
        for j in range(ny):
            for k in range(nz):
                drdt[i, j, k] = mask[i, j, k] * _drho_dt(temp[i, j, k], salt[i, j, k], depth[k])
                drds[i, j, k] = mask[i, j, k] * _drho_ds(temp[i, j, k])
    k11 = np.zeros((nx, ny, nz))
    for i in range(nx - 1):
        for j in range(ny):
            for k in range(nz):
                fmask = mask[i, j, k] * mask[i + 1, j, k]
                if fmask == 0.0:
                    continue
                drx = 0.5 * ((drdt[i, j, k] + drdt[i + 1, j, k])
                             * (temp[i + 1, j, k] - temp[i, j, k])
                             + (drds[i, j, k] + drds[i + 1, j, k])
                             * (salt[i + 1, j, k] - salt[i, j, k])) / DX_O
                acc = 0.0
                for ip in (0, 1):
                    for kr in (0, 1):
                        kw = k - 1 + kr
                        if kw < 0 or kw >= nz - 1:
                            continue
                        ii = i + ip
                        wmask = mask[ii, j, kw] * mask[ii, j, kw + 1]
                        drz = wmask * (drdt[ii, j, k] * (temp[ii, j, kw + 1] - temp[ii, j, kw])
                                       + drds[ii, j, k] * (salt[ii, j, kw + 1] - salt[ii, j, kw])
                                       ) / DZ_O
                        slope = -drx / max(drz, DRZ_MIN)
                        acc += 0.25 * _taper(slope) * slope * slope
                k11[i, j, k] = k_iso * acc * fmask
    k11[-1, :, :] = 0.0
    return 1e3 * np.sum(W3 * k11)


def isoneutral_slopes_np(temp, salt, depth, mask, k_iso):
    """The same diagnostic in whole-array form: gradients on faces and w-points by slicing,
    the taper with np.tanh/np.abs, the floor with np.maximum."""
    p = depth[None, None, :]
    drdt = RHO0 * (-EOS_A * (1.0 + EOS_P * p) - EOS_C * (temp - 10.0)
                   - EOS_D * (salt - 35.0)) * mask
    drds = RHO0 * (EOS_B - EOS_D * (temp - 10.0)) * mask
    fmask = mask[1:] * mask[:-1]
    drx = 0.5 * ((drdt[1:] + drdt[:-1]) * np.diff(temp, axis=0)
                 + (drds[1:] + drds[:-1]) * np.diff(salt, axis=0)) / DX_O * fmask
    wmask = mask[:, :, 1:] * mask[:, :, :-1]
    drz = (drdt[:, :, :-1] * np.diff(temp, axis=2)
           + drds[:, :, :-1] * np.diff(salt, axis=2)) / DZ_O * wmask
    drz = np.maximum(drz, DRZ_MIN)
    sx = -drx[:, :, :-1] / (0.5 * (drz[1:] + drz[:-1]))
    taper = 0.5 * (1.0 + np.tanh((SLOPE_MAX - np.abs(sx)) / SLOPE_WIDTH))
    k11 = k_iso * taper * sx ** 2
    return 1e3 * np.sum(W3[:-1, :, :-1] * k11)


@numba.njit
def _thomas(a, b, c, d, out):
    """Solve the tridiagonal system (sub a, diagonal b, super c) for d into out."""
    n = d.shape[0]
    cp = np.empty(n)
    dp = np.empty(n)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for k in range(1, n):
        den = b[k] - a[k] * cp[k - 1]
        cp[k] = c[k] / den
        dp[k] = (d[k] - a[k] * dp[k - 1]) / den
    out[n - 1] = dp[n - 1]
    for k in range(n - 2, -1, -1):
        out[k] = dp[k] - cp[k] * out[k + 1]


def vertical_mixing_nb(temp, kappa, surface_flux, dt):
    """Implicit vertical diffusion, one tridiagonal solve per water column; kappa lives on the
    w-points between levels, the surface flux enters the top cell."""
    nx, ny, nz = temp.shape
    new = np.empty_like(temp)
    a = np.zeros(nz)
    b = np.zeros(nz)
    c = np.zeros(nz)
    rhs = np.zeros(nz)
    col = np.zeros(nz)
    for i in range(nx):
        for j in range(ny):
            for k in range(nz):
                above = dt * kappa[i, j, k - 1] / DZ_O ** 2 if k > 0 else 0.0
                below = dt * kappa[i, j, k] / DZ_O ** 2 if k < nz - 1 else 0.0
                a[k] = -above
                c[k] = -below
                b[k] = 1.0 + above + below
                rhs[k] = temp[i, j, k]
            rhs[0] += dt * surface_flux[i, j] / DZ_O
            _thomas(a, b, c, rhs, col)
            new[i, j, :] = col
    return np.sum(W3 * new) + 0.05 * np.sum(new * new)


def vertical_mixing_np(temp, kappa, surface_flux, dt):
    """The same solve vectorised over the columns: a forward sweep and a back substitution
    over levels, each on whole (nx, ny) slabs."""
    nz = temp.shape[2]
    coef = dt * kappa / DZ_O ** 2
    a = np.zeros_like(temp)
    c = np.zeros_like(temp)
    a[:, :, 1:] = -coef
    c[:, :, :-1] = -coef
    b = 1.0 - a - c
    d = temp.copy()
    d[:, :, 0] += dt * surface_flux / DZ_O
    cp = np.zeros_like(temp)
    dp = np.zeros_like(temp)
    cp[:, :, 0] = c[:, :, 0] / b[:, :, 0]
    dp[:, :, 0] = d[:, :, 0] / b[:, :, 0]
    for k in range(1, nz):
        den = b[:, :, k] - a[:, :, k] * cp[:, :, k - 1]
        cp[:, :, k] = c[:, :, k] / den
        dp[:, :, k] = (d[:, :, k] - a[:, :, k] * dp[:, :, k - 1]) / den
    out = np.zeros_like(temp)
    out[:, :, -1] = dp[:, :, -1]
    for k in range(nz - 2, -1, -1):
        out[:, :, k] = dp[:, :, k] - cp[:, :, k] * out[:, :, k + 1]
    return np.sum(W3 * out) + 0.05 * np.sum(out * out)


ADV_DT = 0.1


def upwind_advection_np(q, u, v, wet):
    """First-order upwind transport of a tracer on a C-grid with land (``wet``, a boolean
    mask): u on the interior east faces (nx-1, ny), v on the interior north faces (nx, ny-1),
    no flux through a face that touches land."""
    q = q.copy()
    open_x = wet[1:, :] & wet[:-1, :]
    open_y = wet[:, 1:] & wet[:, :-1]
    for _ in range(3):
        fx = np.where(open_x, np.maximum(u, 0.0) * q[:-1, :] + np.minimum(u, 0.0) * q[1:, :],
                      0.0)
        fy = np.where(open_y, np.maximum(v, 0.0) * q[:, :-1] + np.minimum(v, 0.0) * q[:, 1:],
                      0.0)
        div = np.zeros_like(q)
        div[:-1, :] += fx
        div[1:, :] -= fx
        div[:, :-1] += fy
        div[:, 1:] -= fy
        q = q - ADV_DT * np.where(wet, div, 0.0)
    return np.sum(W2 * q) + 0.5 * np.sum(q * q)


def upwind_advection_nb(q, u, v, wet):
    nx, ny = q.shape
    q = q.copy()
    fx = np.zeros((nx + 1, ny))
    fy = np.zeros((nx, ny + 1))
    for _ in range(3):
        for i in range(1, nx):
            for j in range(ny):
                vel = u[i - 1, j]
                if vel > 0.0:
                    fx[i, j] = vel * q[i - 1, j]
                else:
                    fx[i, j] = vel * q[i, j]
                if not (wet[i - 1, j] and wet[i, j]):
                    fx[i, j] = 0.0
        for i in range(nx):
            for j in range(1, ny):
                vel = v[i, j - 1]
                fy[i, j] = vel * q[i, j - 1] if vel > 0.0 else vel * q[i, j]
                if not wet[i, j - 1] or not wet[i, j]:
                    fy[i, j] = 0.0
        fx[0, :] = 0.0
        fx[-1, :] = 0.0
        fy[:, 0] = 0.0
        fy[:, -1] = 0.0
        for i in range(nx):
            for j in range(ny):
                if wet[i, j]:
                    q[i, j] -= ADV_DT * (fx[i + 1, j] - fx[i, j] + fy[i, j + 1] - fy[i, j])
    return np.sum(W2 * q) + 0.5 * np.sum(q * q)


@numba.njit
def _superbee(r):
    return max(0.0, min(1.0, 2.0 * r), min(2.0, r))


def limited_advection_nb(q, courant):
    """One step of flux-limited (superbee) advection at a positive Courant number, outflow
    boundaries: the limiter takes the ratio of consecutive differences."""
    n = q.shape[0]
    flux = np.zeros(n + 1)
    flux[1] = courant * q[0]
    for i in range(1, n - 1):
        dq_up = q[i] - q[i - 1]
        dq_dn = q[i + 1] - q[i]
        phi = _superbee(dq_up / dq_dn)
        flux[i + 1] = courant * (q[i] + 0.5 * (1.0 - courant) * phi * dq_dn)
    flux[-1] = courant * q[-1]
    new = q - (flux[1:] - flux[:-1])
    return np.sum(W8 * new) + np.sum(new * new)


LF_C, LF_NU = 0.3, 0.1  # Courant number, Robert-Asselin coefficient


def leapfrog_levels_np(q0):
    """Leapfrog advection with three time levels kept in one array and the indices
    taum1/tau/taup1 rotated each step, as ocean models keep them; a Robert-Asselin filter damps
    the computational mode."""
    n = q0.shape[0]
    q = np.zeros((3, n))
    q[0] = q0
    q[1] = q0 - 0.5 * LF_C * (np.roll(q0, -1) - np.roll(q0, 1))
    taum1, tau, taup1 = 0, 1, 2
    for _ in range(4):
        q[taup1] = q[taum1] - LF_C * (np.roll(q[tau], -1) - np.roll(q[tau], 1))
        q[tau] += LF_NU * (q[taup1] - 2.0 * q[tau] + q[taum1])
        taum1, tau, taup1 = tau, taup1, taum1
    return np.sum(W8 * q[tau]) + np.sum(q[taum1] ** 2)


def leapfrog_levels_nb(q0):
    n = q0.shape[0]
    q = np.zeros((3, n))
    for i in range(n):
        q[0, i] = q0[i]
        q[1, i] = q0[i] - 0.5 * LF_C * (q0[(i + 1) % n] - q0[i - 1])
    taum1, tau, taup1 = 0, 1, 2
    for _ in range(4):
        for i in range(n):
            q[taup1, i] = q[taum1, i] - LF_C * (q[tau, (i + 1) % n] - q[tau, i - 1])
        for i in range(n):
            q[tau, i] += LF_NU * (q[taup1, i] - 2.0 * q[tau, i] + q[taum1, i])
        taum1, tau, taup1 = tau, taup1, taum1
    return np.sum(W8 * q[tau, :]) + np.sum(q[taum1, :] ** 2)


@numba.njit
def _upwind_step(now, nxt, courant):
    n = now.shape[0]
    for i in range(n):
        nxt[i] = now[i] - courant * (now[i] - now[i - 1]) + 0.05 * now[i] * now[(i + 1) % n]


def time_levels_nb(q0, courant):
    """Two time levels in one array, the helper reading one level and writing the other in
    place, the levels alternating (views passed straight to the helper)."""
    n = q0.shape[0]
    levels = np.zeros((2, n))
    levels[0, :] = q0
    for t in range(4):
        _upwind_step(levels[t % 2], levels[(t + 1) % 2], courant)
    return np.sum(W8 * levels[0]) + np.sum(levels[1] ** 2)


# ---- CFD ----------------------------------------------------------------------------------------

B_DX, B_DT = 1.0, 0.02


def burgers_np(u0, nu):
    """Viscous Burgers on a periodic line: upwinded advection (split by the sign of u),
    centred diffusion, a few explicit steps with np.roll."""
    u = u0.copy()
    for _ in range(4):
        up = np.maximum(u, 0.0)
        um = np.minimum(u, 0.0)
        back = (u - np.roll(u, 1)) / B_DX
        fwd = (np.roll(u, -1) - u) / B_DX
        lap = (np.roll(u, -1) - 2.0 * u + np.roll(u, 1)) / B_DX ** 2
        u = u - B_DT * (up * back + um * fwd) + B_DT * nu * lap
    return np.sum(W8 * u) + 0.5 * np.sum(u ** 3)


def burgers_nb(u0, nu):
    n = u0.shape[0]
    u = u0.copy()
    new = np.empty(n)
    for _ in range(4):
        for i in range(n):
            left = u[i - 1]  # i = 0 reads u[-1]: the periodic neighbour
            right = u[(i + 1) % n]
            if u[i] > 0.0:
                adv = u[i] * (u[i] - left) / B_DX
            else:
                adv = u[i] * (right - u[i]) / B_DX
            new[i] = u[i] - B_DT * adv + B_DT * nu * (right - 2.0 * u[i] + left) / B_DX ** 2
        u[:] = new
    return np.sum(W8 * u) + 0.5 * np.sum(u ** 3)


SW_G, SW_H, SW_DT, SW_DX = 9.81, 1.0, 0.02, 1.0


def shallow_water_np(h0, u0, v0):
    """Shallow water on an Arakawa C-grid in a closed basin: h at centres (nx, ny), u on east
    faces (nx+1, ny), v on north faces (nx, ny+1); forward-backward steps, flux form."""
    h = h0.copy()
    u = u0.copy()
    v = v0.copy()
    u[0, :] = 0.0
    u[-1, :] = 0.0
    v[:, 0] = 0.0
    v[:, -1] = 0.0
    for _ in range(3):
        u[1:-1, :] -= SW_DT * SW_G * (h[1:, :] - h[:-1, :]) / SW_DX
        v[:, 1:-1] -= SW_DT * SW_G * (h[:, 1:] - h[:, :-1]) / SW_DX
        hu = np.zeros_like(u)
        hv = np.zeros_like(v)
        hu[1:-1, :] = (SW_H + 0.5 * (h[1:, :] + h[:-1, :])) * u[1:-1, :]
        hv[:, 1:-1] = (SW_H + 0.5 * (h[:, 1:] + h[:, :-1])) * v[:, 1:-1]
        h = h - SW_DT * (hu[1:, :] - hu[:-1, :] + hv[:, 1:] - hv[:, :-1]) / SW_DX
    energy = 0.5 * SW_G * np.sum(h * h) + 0.5 * np.sum(u * u) + 0.5 * np.sum(v * v)
    return energy + np.sum(W2[:, :4] * h)


@numba.njit
def _swe_flux(h, hu):
    vel = hu / h
    return hu, hu * vel + 0.5 * SW_G * h * h


def shallow_water_nb(h0, hu0):
    """1-D nonlinear shallow water with the Rusanov flux (the local wave speed is the larger
    of the two sides' |u| + sqrt(g h)), periodic, a few steps."""
    n = h0.shape[0]
    h = h0.copy()
    hu = hu0.copy()
    fh = np.zeros(n)
    fm = np.zeros(n)
    for _ in range(2):
        for i in range(n):
            r = (i + 1) % n
            fl_h, fl_m = _swe_flux(h[i], hu[i])
            fr_h, fr_m = _swe_flux(h[r], hu[r])
            sl = abs(hu[i] / h[i]) + math.sqrt(SW_G * h[i])
            sr = abs(hu[r] / h[r]) + math.sqrt(SW_G * h[r])
            a = max(sl, sr)
            fh[i] = 0.5 * (fl_h + fr_h) - 0.5 * a * (h[r] - h[i])
            fm[i] = 0.5 * (fl_m + fr_m) - 0.5 * a * (hu[r] - hu[i])
        for i in range(n):
            h[i] -= SW_DT / SW_DX * (fh[i] - fh[i - 1])
            hu[i] -= SW_DT / SW_DX * (fm[i] - fm[i - 1])
    return np.sum(W8 * h) + np.sum(hu * hu)


CAV_RHO, CAV_NU, CAV_DT, CAV_DX = 1.0, 0.1, 0.01, 0.25


def cavity_step_np(u0, v0, p0):
    """One step of the lid-driven cavity: the pressure Poisson source from the velocity
    field, Jacobi sweeps with Neumann walls and p = 0 on the lid, and the u update."""
    h = CAV_DX
    u = u0.copy()
    v = v0.copy()
    dudx = (u[1:-1, 2:] - u[1:-1, :-2]) / (2 * h)
    dudy = (u[2:, 1:-1] - u[:-2, 1:-1]) / (2 * h)
    dvdx = (v[1:-1, 2:] - v[1:-1, :-2]) / (2 * h)
    dvdy = (v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * h)
    src = np.zeros_like(p0)
    src[1:-1, 1:-1] = CAV_RHO * ((dudx + dvdy) / CAV_DT - dudx ** 2 - 2.0 * dudy * dvdx
                                 - dvdy ** 2)
    p = p0.copy()
    for _ in range(4):
        old = p.copy()
        p[1:-1, 1:-1] = 0.25 * (old[1:-1, 2:] + old[1:-1, :-2] + old[2:, 1:-1]
                                + old[:-2, 1:-1]) - 0.25 * h * h * src[1:-1, 1:-1]
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0.0
    un = u.copy()
    u[1:-1, 1:-1] = (un[1:-1, 1:-1]
                     - un[1:-1, 1:-1] * CAV_DT / h * (un[1:-1, 1:-1] - un[1:-1, :-2])
                     - v[1:-1, 1:-1] * CAV_DT / h * (un[1:-1, 1:-1] - un[:-2, 1:-1])
                     - CAV_DT / (2 * CAV_RHO * h) * (p[1:-1, 2:] - p[1:-1, :-2])
                     + CAV_NU * CAV_DT / h ** 2 * (un[1:-1, 2:] - 4.0 * un[1:-1, 1:-1]
                                                   + un[1:-1, :-2] + un[2:, 1:-1]
                                                   + un[:-2, 1:-1]))
    u[0, :] = 0.0
    u[:, 0] = 0.0
    u[:, -1] = 0.0
    u[-1, :] = 1.0  # the lid
    return np.sum(W2 * p) + np.sum(W2 * u * u)


@numba.njit
def _pressure_sweeps(p, src, h, sweeps):
    ny, nx = p.shape
    for _ in range(sweeps):
        old = p.copy()
        for j in range(1, ny - 1):
            for i in range(1, nx - 1):
                p[j, i] = 0.25 * (old[j, i + 1] + old[j, i - 1] + old[j + 1, i]
                                  + old[j - 1, i]) - 0.25 * h * h * src[j, i]
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0.0


def cavity_step_nb(u0, v0, p0):
    ny, nx = p0.shape
    h = CAV_DX
    src = np.zeros((ny, nx))
    for j in range(1, ny - 1):
        for i in range(1, nx - 1):
            dudx = (u0[j, i + 1] - u0[j, i - 1]) / (2 * h)
            dudy = (u0[j + 1, i] - u0[j - 1, i]) / (2 * h)
            dvdx = (v0[j, i + 1] - v0[j, i - 1]) / (2 * h)
            dvdy = (v0[j + 1, i] - v0[j - 1, i]) / (2 * h)
            src[j, i] = CAV_RHO * ((dudx + dvdy) / CAV_DT - dudx * dudx - 2.0 * dudy * dvdx
                                   - dvdy * dvdy)
    p = p0.copy()
    _pressure_sweeps(p, src, h, 4)
    u = np.zeros((ny, nx))
    for j in range(1, ny - 1):
        for i in range(1, nx - 1):
            uc = u0[j, i]
            u[j, i] = (uc - uc * CAV_DT / h * (uc - u0[j, i - 1])
                       - v0[j, i] * CAV_DT / h * (uc - u0[j - 1, i])
                       - CAV_DT / (2 * CAV_RHO * h) * (p[j, i + 1] - p[j, i - 1])
                       + CAV_NU * CAV_DT / h ** 2 * (u0[j, i + 1] + u0[j, i - 1] + u0[j + 1, i]
                                                     + u0[j - 1, i] - 4.0 * uc))
    u[-1, :] = 1.0
    return np.sum(W2 * p) + np.sum(W2 * u * u)


@numba.njit
def _sor_sweeps(p, rhs, omega, sweeps):
    """In-place successive over-relaxation: each point reads neighbours already updated in
    the same sweep; Neumann walls, p = 0 on the top row."""
    ny, nx = p.shape
    for _ in range(sweeps):
        for j in range(1, ny - 1):
            for i in range(1, nx - 1):
                gs = 0.25 * (p[j, i + 1] + p[j, i - 1] + p[j + 1, i] + p[j - 1, i] - rhs[j, i])
                p[j, i] += omega * (gs - p[j, i])
        p[:, 0] = p[:, 1]
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[-1, :] = 0.0


def pressure_sor_nb(rhs, omega):
    p = np.zeros_like(rhs)
    _sor_sweeps(p, rhs, omega, 3)
    return np.sum(W2 * p) + np.sum(p ** 2)


def pressure_redblack_np(rhs, omega):
    """The same relaxation vectorised by colouring the grid as a checkerboard: all red
    interior points at once, then all black ones, each from the latest values."""
    ny, nx = rhs.shape
    red = (np.arange(ny)[:, None] + np.arange(nx)[None, :]) % 2 == 0
    inner = np.zeros((ny, nx), dtype=bool)
    inner[1:-1, 1:-1] = True
    p = np.zeros_like(rhs)
    for _ in range(3):
        for colour in (red & inner, ~red & inner):
            gs = np.zeros_like(p)
            gs[1:-1, 1:-1] = 0.25 * (p[1:-1, 2:] + p[1:-1, :-2] + p[2:, 1:-1] + p[:-2, 1:-1]
                                     - rhs[1:-1, 1:-1])
            p = np.where(colour, p + omega * (gs - p), p)
        p[:, 0] = p[:, 1]
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[-1, :] = 0.0
    return np.sum(W2 * p) + np.sum(p ** 2)


@numba.njit
def _harmonic(a, b):
    return 2.0 * a * b / (a + b)


def fv_diffusion_nb(temp0, cond):
    """Finite-volume diffusion with a variable conductivity (harmonic means on the faces),
    no-flux walls, explicit steps writing face fluxes into preallocated arrays."""
    nx, ny = temp0.shape
    t = temp0.copy()
    fx = np.zeros((nx + 1, ny))
    fy = np.zeros((nx, ny + 1))
    for _ in range(3):
        for i in range(1, nx):
            for j in range(ny):
                fx[i, j] = -_harmonic(cond[i - 1, j], cond[i, j]) * (t[i, j] - t[i - 1, j])
        for i in range(nx):
            for j in range(1, ny):
                fy[i, j] = -_harmonic(cond[i, j - 1], cond[i, j]) * (t[i, j] - t[i, j - 1])
        for i in range(nx):
            for j in range(ny):
                t[i, j] -= 0.05 * (fx[i + 1, j] - fx[i, j] + fy[i, j + 1] - fy[i, j])
    return np.sum(W2 * t) + np.sum(t ** 2)


# ---- finance ------------------------------------------------------------------------------------

RATE, MATURITY, STRIKE = 0.02, 1.0, 100.0


def heston_call_nb(s0, v0, kappa, theta, xi, rho, z1, z2):
    """Monte-Carlo Heston call: log-Euler for the price, full truncation (max(v, 0)) for the
    variance, the normal draws passed in."""
    npaths, nsteps = z1.shape
    dt = MATURITY / nsteps
    sq = math.sqrt(dt)
    total = 0.0
    for p in range(npaths):
        s = s0
        v = v0
        for t in range(nsteps):
            vp = max(v, 0.0)
            w2 = rho * z1[p, t] + math.sqrt(1.0 - rho * rho) * z2[p, t]
            s = s * math.exp((RATE - 0.5 * vp) * dt + math.sqrt(vp) * sq * z1[p, t])
            v = v + kappa * (theta - vp) * dt + xi * math.sqrt(vp) * sq * w2
        total += max(s - STRIKE, 0.0)
    return math.exp(-RATE * MATURITY) * total / npaths


def heston_call_np(s0, v0, kappa, theta, xi, rho, z1, z2):
    npaths, nsteps = z1.shape
    dt = MATURITY / nsteps
    logs = np.full(npaths, np.log(s0))
    v = np.full(npaths, v0)
    for t in range(nsteps):
        vp = np.maximum(v, 0.0)
        zv = rho * z1[:, t] + np.sqrt(1.0 - rho ** 2) * z2[:, t]
        logs = logs + (RATE - 0.5 * vp) * dt + np.sqrt(vp * dt) * z1[:, t]
        v = v + kappa * (theta - vp) * dt + xi * np.sqrt(vp * dt) * zv
    payoff = np.maximum(np.exp(logs) - STRIKE, 0.0)
    return np.exp(-RATE * MATURITY) * np.mean(payoff)


SABR_BETA = 0.5
MARKET_VOLS = np.array([0.32, 0.27, 0.23, 0.21, 0.22, 0.24])


def sabr_vol_np(strikes, fwd, alpha, rho, nu):
    """Hagan's lognormal SABR volatility over a strip of strikes (none at the money), and a
    calibration objective against fixed market quotes."""
    t = MATURITY
    omb = 1.0 - SABR_BETA
    fk = fwd * strikes
    logfk = np.log(fwd / strikes)
    fkb = fk ** (0.5 * omb)
    z = nu / alpha * fkb * logfk
    xz = np.log((np.sqrt(1.0 - 2.0 * rho * z + z * z) + z - rho) / (1.0 - rho))
    denom = fkb * (1.0 + omb ** 2 / 24.0 * logfk ** 2 + omb ** 4 / 1920.0 * logfk ** 4)
    corr = 1.0 + (omb ** 2 / 24.0 * alpha ** 2 / fk ** omb
                  + 0.25 * rho * SABR_BETA * nu * alpha / fkb
                  + (2.0 - 3.0 * rho ** 2) / 24.0 * nu ** 2) * t
    vols = alpha / denom * (z / xz) * corr
    return np.sum((vols - MARKET_VOLS) ** 2) * 100.0


@numba.njit
def _hagan(f, k, t, alpha, beta, rho, nu):
    omb = 1.0 - beta
    logfk = math.log(f / k)
    fkb = (f * k) ** (0.5 * omb)
    z = nu / alpha * fkb * logfk
    if abs(z) < 1e-8:
        zx = 1.0
    else:
        zx = z / math.log((math.sqrt(1.0 - 2.0 * rho * z + z * z) + z - rho) / (1.0 - rho))
    denom = fkb * (1.0 + omb * omb / 24.0 * logfk ** 2 + omb ** 4 / 1920.0 * logfk ** 4)
    corr = 1.0 + (omb * omb / 24.0 * alpha * alpha / fkb ** 2
                  + 0.25 * rho * beta * nu * alpha / fkb
                  + (2.0 - 3.0 * rho * rho) / 24.0 * nu * nu) * t
    return alpha / denom * zx * corr


def sabr_vol_nb(strikes, fwd, alpha, rho, nu):
    n = strikes.shape[0]
    err = np.empty(n)
    for i in range(n):
        err[i] = _hagan(fwd, strikes[i], MATURITY, alpha, SABR_BETA, rho, nu) - MARKET_VOLS[i]
    return 100.0 * np.sum(err * err)


def barrier_call_nb(s0, sigma, barrier, z):
    """Up-and-out call on given normal draws: a path is dropped at its first step at or above
    the barrier (a flag and a break), the rest pay max(S_T - K, 0)."""
    npaths, nsteps = z.shape
    dt = MATURITY / nsteps
    drift = (RATE - 0.5 * sigma * sigma) * dt
    vol = sigma * math.sqrt(dt)
    total = 0.0
    for p in range(npaths):
        s = s0
        alive = True
        for t in range(nsteps):
            s = s * math.exp(drift + vol * z[p, t])
            if s >= barrier:
                alive = False
                break
        if alive:
            total += max(s - STRIKE, 0.0)
    return math.exp(-RATE * MATURITY) * total / npaths


def barrier_call_np(s0, sigma, barrier, z):
    nsteps = z.shape[1]
    dt = MATURITY / nsteps
    incr = (RATE - 0.5 * sigma ** 2) * dt + sigma * np.sqrt(dt) * z
    paths = s0 * np.exp(np.cumsum(incr, axis=1))
    alive = np.all(paths < barrier, axis=1)
    payoff = np.where(alive, np.maximum(paths[:, -1] - STRIKE, 0.0), 0.0)
    return np.exp(-RATE * MATURITY) * np.mean(payoff)


def lookback_nb(s0, sigma, z):
    """Floating-strike lookback put and fixed-strike lookback call on the same paths, the
    running extremes kept with the min/max builtins."""
    npaths, nsteps = z.shape
    dt = MATURITY / nsteps
    total = 0.0
    for p in range(npaths):
        s = s0
        smax = s0
        smin = s0
        for t in range(nsteps):
            s *= math.exp((RATE - 0.5 * sigma * sigma) * dt + sigma * math.sqrt(dt) * z[p, t])
            smax = max(smax, s)
            smin = min(smin, s)
        total += (smax - s) + max(smax - STRIKE, 0.0) + 0.5 * (s - smin)
    return math.exp(-RATE * MATURITY) * total / npaths


def max_drawdown_nb(returns):
    """Largest peak-to-trough loss of the equity curves made from per-period returns."""
    nseries, n = returns.shape
    total = 0.0
    for k in range(nseries):
        equity = 1.0
        peak = 1.0
        worst = 0.0
        for t in range(n):
            equity *= 1.0 + returns[k, t]
            if equity > peak:  # noqa: PLR1730 (a branch, as such loops write it)
                peak = equity
            worst = max(worst, (peak - equity) / peak)
        total += worst
    return total


TAU = 0.5  # semi-annual periods
PERIODS = TAU * np.arange(1.0, 7.0)


def bootstrap_curve_np(par):
    """Discount factors from par swap rates (semi-annual), then zero and forward rates."""
    n = par.shape[0]
    df = np.zeros(n)
    for i in range(n):
        df[i] = (1.0 - par[i] * TAU * np.sum(df[:i])) / (1.0 + par[i] * TAU)
    zero = -np.log(df) / PERIODS
    fwd = -np.diff(np.log(df)) / TAU
    return 100.0 * (np.sum(W8[:n] * zero) + np.sum(fwd ** 2))


def bootstrap_curve_nb(par):
    n = par.shape[0]
    df = np.empty(n)
    annuity = 0.0
    for i in range(n):
        df[i] = (1.0 - par[i] * TAU * annuity) / (1.0 + par[i] * TAU)
        annuity += df[i]
    total = 0.0
    for i in range(n):
        zero = -math.log(df[i]) / (TAU * (i + 1))
        total += W8[i] * zero
        if i > 0:
            fwd = math.log(df[i - 1] / df[i]) / TAU
            total += fwd * fwd
    return 100.0 * total


def portfolio_risk_np(logits, rets):
    """Mean-variance objective of a long-only portfolio (softmax weights) from a sample of
    asset returns: volatility minus a multiple of the expected return."""
    w = np.exp(logits - np.max(logits))
    w = w / np.sum(w)
    mu = rets.mean(axis=0)
    dev = rets - mu
    cov = dev.T @ dev / (rets.shape[0] - 1)
    var = w @ cov @ w
    return np.sqrt(var) - 0.5 * (w @ mu)


def portfolio_risk_nb(logits, rets):
    nobs, nassets = rets.shape
    top = logits.max()
    w = np.empty(nassets)
    for a in range(nassets):
        w[a] = math.exp(logits[a] - top)
    w /= w.sum()
    mu = np.zeros(nassets)
    for t in range(nobs):
        for a in range(nassets):
            mu[a] += rets[t, a] / nobs
    var = 0.0
    for a in range(nassets):
        for b in range(nassets):
            cov = 0.0
            for t in range(nobs):
                cov += (rets[t, a] - mu[a]) * (rets[t, b] - mu[b])
            var += w[a] * w[b] * cov / (nobs - 1)
    ret = 0.0
    for a in range(nassets):
        ret += w[a] * mu[a]
    return math.sqrt(var) - 0.5 * ret


# ---- signal processing --------------------------------------------------------------------------

TARGET8 = np.sin(np.arange(8.0))


def fir_filter_np(x, taps):
    y = np.convolve(x, taps, mode="valid")
    return np.sum((y - TARGET8[:y.shape[0]]) ** 2)


@numba.njit
def fir_filter_nb(x, taps):
    """Causal FIR filter into a preallocated output, samples before the start skipped."""
    n = x.shape[0]
    m = taps.shape[0]
    y = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for k in range(m):
            if i - k < 0:
                continue
            acc += taps[k] * x[i - k]
        y[i] = acc
    return np.sum((y - TARGET8) ** 2)


def biquad_cascade_nb(x, sos):
    """A cascade of biquads in transposed direct form II, second-order sections as rows of
    (b0, b1, b2, a0, a1, a2), each normalised by its a0."""
    y = x.copy()
    for s in range(sos.shape[0]):
        a0 = sos[s, 3]
        b0 = sos[s, 0] / a0
        b1 = sos[s, 1] / a0
        b2 = sos[s, 2] / a0
        a1 = sos[s, 4] / a0
        a2 = sos[s, 5] / a0
        z1 = 0.0
        z2 = 0.0
        for n in range(y.shape[0]):
            xn = y[n]
            yn = b0 * xn + z1
            z1 = b1 * xn - a1 * yn + z2
            z2 = b2 * xn - a2 * yn
            y[n] = yn
    return np.sum(W8 * y) + np.sum(y * y)


def windowed_power_np(x):
    """Hann-windowed DFT power spectrum as explicit sums (a cosine and a sine matrix), and a
    log-spectral loss."""
    n = x.shape[0]
    t = np.arange(n)
    win = 0.5 - 0.5 * np.cos(2.0 * np.pi * t / n)
    xw = x * win
    k = np.arange(n // 2 + 1)
    ang = 2.0 * np.pi * np.outer(k, t) / n
    re = np.cos(ang) @ xw
    im = -np.sin(ang) @ xw
    power = re ** 2 + im ** 2
    return np.sum(W8[:k.shape[0]] * np.log(power + 1e-2))


def windowed_power_nb(x):
    """The same spectrum with loops, and its spectral centroid."""
    n = x.shape[0]
    nf = n // 2 + 1
    xw = np.empty(n)
    for j in range(n):
        xw[j] = x[j] * (0.5 - 0.5 * math.cos(2.0 * math.pi * j / n))
    power = np.zeros(nf)
    for k in range(nf):
        re = 0.0
        im = 0.0
        for j in range(n):
            ang = 2.0 * math.pi * k * j / n
            re += xw[j] * math.cos(ang)
            im -= xw[j] * math.sin(ang)
        power[k] = re * re + im * im
    centroid = 0.0
    for k in range(nf):
        centroid += k * power[k]
    return centroid / np.sum(power) + 0.1 * np.sum(power)


def autocorr_np(x):
    """Sample autocorrelations at lags 1..3 and a Ljung-Box style statistic."""
    n = x.shape[0]
    xc = x - x.mean()
    denom = np.sum(xc * xc)
    r = np.array([np.sum(xc[:n - lag] * xc[lag:]) / denom for lag in range(1, 4)])
    return n * (n + 2) * np.sum(r ** 2 / (n - np.arange(1, 4)))


@numba.njit
def autocorr_nb(x):
    n = x.shape[0]
    mean = 0.0
    for i in range(n):
        mean += x[i]
    mean /= n
    acf = np.zeros(4)
    for lag in range(4):
        acc = 0.0
        for i in range(n - lag):
            acc += (x[i] - mean) * (x[i + lag] - mean)
        acf[lag] = acc
    stat = 0.0
    for lag in range(1, 4):
        stat += (acf[lag] / acf[0]) ** 2 / (n - lag)
    return n * (n + 2) * stat


SG5 = np.array([-3.0, 12.0, 17.0, 12.0, -3.0]) / 35.0  # quadratic, 5-point smoothing weights


def savgol_np(x):
    """Savitzky-Golay smoothing with the edges extended by repeating the end samples, and a
    roughness-penalised fit."""
    ext = np.concatenate((np.full(2, x[0]), x, np.full(2, x[-1])))
    smooth = np.convolve(ext, SG5[::-1], mode="valid")
    rough = np.diff(smooth, n=2)
    return np.sum((smooth - TARGET8) ** 2) + np.sum(rough ** 2)


def savgol_nb(x):
    n = x.shape[0]
    smooth = np.empty(n)
    for i in range(n):
        acc = 0.0
        for k in range(5):
            j = min(max(i + k - 2, 0), n - 1)  # clamp to the ends
            acc += SG5[k] * x[j]
        smooth[i] = acc
    total = 0.0
    for i in range(n):
        total += (smooth[i] - TARGET8[i]) ** 2
        if 0 < i < n - 1:
            total += (smooth[i + 1] - 2.0 * smooth[i] + smooth[i - 1]) ** 2
    return total


# ---- robotics, orbits, chemistry, epidemics, hydrology, images, springs, filters --------------

LINKS = np.array([1.0, 0.8, 0.6, 0.4])


def planar_arm_np(q, target):
    """Reaching loss of a planar 4-link arm: joint angles accumulate along the chain."""
    phi = np.cumsum(q)
    x = np.sum(LINKS * np.cos(phi))
    y = np.sum(LINKS * np.sin(phi))
    return (x - target[0]) ** 2 + (y - target[1]) ** 2 + 0.01 * np.sum(q ** 2)


DH_D = np.array([0.3, 0.0, 0.0, 0.1])
DH_A = np.array([0.0, 0.5, 0.4, 0.0])
DH_ALPHA = np.array([0.5 * np.pi, 0.0, 0.0, 0.5 * np.pi])


@numba.njit
def _dh_matrix(theta, d, a, alpha, out):
    ct = math.cos(theta)
    st = math.sin(theta)
    ca = math.cos(alpha)
    sa = math.sin(alpha)
    out[0, 0] = ct
    out[0, 1] = -st * ca
    out[0, 2] = st * sa
    out[0, 3] = a * ct
    out[1, 0] = st
    out[1, 1] = ct * ca
    out[1, 2] = -ct * sa
    out[1, 3] = a * st
    out[2, 0] = 0.0
    out[2, 1] = sa
    out[2, 2] = ca
    out[2, 3] = d
    out[3, :] = 0.0
    out[3, 3] = 1.0


def dh_chain_nb(q, target):
    """Forward kinematics of a 4-joint arm from Denavit-Hartenberg parameters: a helper fills
    each joint's homogeneous transform in place, the chain multiplies them."""
    pose = np.eye(4)
    joint = np.zeros((4, 4))
    for i in range(q.shape[0]):
        _dh_matrix(q[i], DH_D[i], DH_A[i], DH_ALPHA[i], joint)
        pose = pose @ joint
    err = pose[:3, 3] - target
    return np.sum(err * err) + 0.1 * (1.0 - pose[2, 2])


def kepler_np(mean_anom, ecc, semi_major):
    """Positions on an ellipse at given mean anomalies: Kepler's equation by a fixed number of
    Newton steps on the whole array."""
    e_anom = mean_anom + ecc * np.sin(mean_anom)
    for _ in range(8):
        e_anom = e_anom - (e_anom - ecc * np.sin(e_anom) - mean_anom) / (
            1.0 - ecc * np.cos(e_anom))
    x = semi_major * (np.cos(e_anom) - ecc)
    y = semi_major * np.sqrt(1.0 - ecc ** 2) * np.sin(e_anom)
    r = semi_major * (1.0 - ecc * np.cos(e_anom))
    return np.sum(W8[:x.shape[0]] * x) + np.sum(y) + np.sum(1.0 / r)


@numba.njit
def _eccentric_anomaly(m, e):
    big_e = m if e < 0.8 else math.pi
    step = 1.0
    it = 0
    while abs(step) > 1e-14 and it < 50:
        step = (big_e - e * math.sin(big_e) - m) / (1.0 - e * math.cos(big_e))
        big_e -= step
        it += 1
    return big_e


def kepler_nb(times, ecc, period):
    """An orbit track: each time's eccentric anomaly by Newton iterations that stop when the
    step is tiny, then the true anomaly by atan2 and the radius."""
    n = times.shape[0]
    xs = np.empty(n)
    ys = np.empty(n)
    for i in range(n):
        m = 2.0 * math.pi * times[i] / period
        big_e = _eccentric_anomaly(m, ecc)
        nu = 2.0 * math.atan2(math.sqrt(1.0 + ecc) * math.sin(0.5 * big_e),
                              math.sqrt(1.0 - ecc) * math.cos(0.5 * big_e))
        r = 1.0 - ecc * math.cos(big_e)
        xs[i] = r * math.cos(nu)
        ys[i] = r * math.sin(nu)
    return np.sum(W8[:n] * xs) + np.sum(ys * ys)


def kinetics_np(c0, k):
    """A <-> B, B + B -> C with mass-action rates: RK4 steps on the concentrations, the
    right-hand side built as an array of its three components."""
    def rhs(c):
        r1 = k[0] * c[0]
        r2 = k[1] * c[1]
        r3 = k[2] * c[1] * c[1]
        return np.array([-r1 + r2, r1 - r2 - 2.0 * r3, r3])

    h = 0.1
    c = c0.copy()
    for _ in range(6):
        k1 = rhs(c)
        k2 = rhs(c + 0.5 * h * k1)
        k3 = rhs(c + 0.5 * h * k2)
        k4 = rhs(c + h * k3)
        c = c + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return c[2] + 0.5 * c[1] ** 2 + np.sum(W8[:3] * c)


@numba.njit
def _rates(c, k, out):
    r1 = k[0] * c[0]
    r2 = k[1] * c[1]
    r3 = k[2] * c[1] * c[1]
    out[0] = -r1 + r2
    out[1] = r1 - r2 - 2.0 * r3
    out[2] = r3


def kinetics_nb(c0, k):
    """The same RK4 integration in Numba style: stage derivatives written by a helper into
    preallocated arrays, the stage state into a scratch array."""
    h = 0.1
    c = c0.copy()
    k1 = np.empty(3)
    k2 = np.empty(3)
    k3 = np.empty(3)
    k4 = np.empty(3)
    tmp = np.empty(3)
    for _ in range(6):
        _rates(c, k, k1)
        tmp[:] = c + 0.5 * h * k1
        _rates(tmp, k, k2)
        tmp[:] = c + 0.5 * h * k2
        _rates(tmp, k, k3)
        tmp[:] = c + h * k3
        _rates(tmp, k, k4)
        for s in range(3):
            c[s] += h / 6.0 * (k1[s] + 2.0 * k2[s] + 2.0 * k3[s] + k4[s])
    return c[2] + 0.5 * c[1] ** 2 + np.sum(W8[:3] * c)


OBSERVED = np.array([12.0, 18.0, 27.0, 38.0, 52.0, 66.0, 80.0, 89.0])
CONTACT = np.array([[1.0, 0.3, 0.1], [0.3, 1.0, 0.3], [0.1, 0.3, 1.0]])
POP = np.array([1000.0, 1500.0, 800.0])


def sir_np(beta, gamma, infected0):
    """A metapopulation SIR model: three regions mixing through a contact matrix, daily
    Euler steps, the loss on the total prevalence against observations."""
    i = infected0.copy()
    s = POP - i
    r = np.zeros(3)
    loss = 0.0
    for day in range(8):
        force = beta * (CONTACT @ (i / POP))
        new_inf = force * s
        new_rec = gamma * i
        s = s - new_inf
        i = i + new_inf - new_rec
        r = r + new_rec
        loss += (np.log(np.sum(i)) - np.log(OBSERVED[day])) ** 2
    return loss + 1e-3 * np.sum(r)


def sir_nb(beta, gamma, infected0):
    """One population, four Euler sub-steps a day, a Poisson log-likelihood of daily cases."""
    n = 2000.0
    s = n - infected0
    i = infected0
    nll = 0.0
    h = 0.25
    for day in range(8):
        cases = 0.0
        for _ in range(4):
            inf = beta * s * i / n * h
            rec = gamma * i * h
            s -= inf
            i += inf - rec
            cases += inf
        nll += cases - OBSERVED[day] * math.log(cases)
    return nll


PRECIP = np.array([2.0, 0.0, 14.0, 30.0, 1.0, 0.0, 6.0, 0.0])
PET = np.array([1.0, 2.0, 1.5, 0.5, 2.5, 3.0, 2.0, 2.5])
QOBS = np.array([0.5, 0.4, 1.5, 6.0, 1.2, 0.9, 1.0, 0.7])


def bucket_nb(smax, k, s0):
    """A one-bucket rainfall-runoff model: rain fills the store, anything above its capacity
    spills at once, evaporation takes a fraction of the demand (never more than is stored),
    a linear reservoir drains the rest."""
    s = s0
    q = np.zeros(PRECIP.shape[0])
    for t in range(PRECIP.shape[0]):
        s += PRECIP[t]
        spill = max(s - smax, 0.0)
        s = min(s, smax)
        et = min(PET[t] * s / smax, s)
        s -= et
        base = k * s
        s -= base
        q[t] = base + spill
    return np.sum((q - QOBS) ** 2)


def bucket_np(smax, k, s0):
    """The same model for several catchments at once (np.maximum/np.minimum on arrays)."""
    s = s0.copy()
    loss = 0.0
    for t in range(PRECIP.shape[0]):
        s = s + PRECIP[t]
        spill = np.maximum(s - smax, 0.0)
        s = np.minimum(s, smax)
        s = s - np.minimum(PET[t] * s / smax, s)
        base = k * s
        s = s - base
        loss += np.sum((base + spill - QOBS[t]) ** 2)
    return loss


TV_EPS, TV_TAU = 1e-2, 0.1


def _forward_diffs(u):
    dx = np.zeros_like(u)
    dy = np.zeros_like(u)
    dx[:-1, :] = u[1:, :] - u[:-1, :]
    dy[:, :-1] = u[:, 1:] - u[:, :-1]
    return dx, dy


def tv_denoise_np(f, lam):
    """A few explicit steps of total-variation (ROF) denoising, then the ROF energy."""
    u = f.copy()
    for _ in range(3):
        dx, dy = _forward_diffs(u)
        mag = np.sqrt(TV_EPS + dx ** 2 + dy ** 2)
        px = dx / mag
        py = dy / mag
        div = px.copy()
        div[1:, :] -= px[:-1, :]
        div += py
        div[:, 1:] -= py[:, :-1]
        u = u - TV_TAU * ((u - f) - lam * div)
    dx, dy = _forward_diffs(u)
    return 0.5 * np.sum((u - f) ** 2) + lam * np.sum(np.sqrt(TV_EPS + dx ** 2 + dy ** 2))


def tv_denoise_nb(f, lam):
    n, m = f.shape
    u = f.copy()
    px = np.zeros((n, m))
    py = np.zeros((n, m))
    for _ in range(3):
        for i in range(n):
            for j in range(m):
                gx = u[i + 1, j] - u[i, j] if i < n - 1 else 0.0
                gy = u[i, j + 1] - u[i, j] if j < m - 1 else 0.0
                mag = math.sqrt(TV_EPS + gx * gx + gy * gy)
                px[i, j] = gx / mag
                py[i, j] = gy / mag
        for i in range(n):
            for j in range(m):
                div = px[i, j] + py[i, j]
                if i > 0:
                    div -= px[i - 1, j]
                if j > 0:
                    div -= py[i, j - 1]
                u[i, j] -= TV_TAU * ((u[i, j] - f[i, j]) - lam * div)
    energy = 0.0
    for i in range(n):
        for j in range(m):
            gx = u[i + 1, j] - u[i, j] if i < n - 1 else 0.0
            gy = u[i, j + 1] - u[i, j] if j < m - 1 else 0.0
            energy += 0.5 * (u[i, j] - f[i, j]) ** 2 + lam * math.sqrt(TV_EPS + gx * gx + gy * gy)
    return energy


SPRING_REST, SPRING_DT, SPRING_DAMP = 1.0, 0.05, 0.98


def spring_chain_np(x0, v0, stiff):
    """A chain of unit masses hanging from a fixed point at 0: spring tensions from the
    extensions, semi-implicit Euler with damping."""
    x = x0.copy()
    v = v0.copy()
    for _ in range(10):
        ext = np.diff(np.concatenate((np.zeros(1), x))) - SPRING_REST
        tension = stiff * ext
        force = -tension.copy()
        force[:-1] += tension[1:]
        v = SPRING_DAMP * (v + SPRING_DT * force)
        x = x + SPRING_DT * v
    return np.sum(W8[:x.shape[0]] * x) + 0.5 * np.sum(v * v)


@numba.njit
def _spring_forces(x, stiff, out):
    """Net force on each mass: its own spring pulls it up, the next one down."""
    n = x.shape[0]
    for s in range(n):
        left = x[s - 1] if s > 0 else 0.0
        out[s] = -stiff[s] * (x[s] - left - SPRING_REST)
        if s < n - 1:
            out[s] += stiff[s + 1] * (x[s + 1] - x[s] - SPRING_REST)


@numba.njit
def _spring_forces_zeroed(x, stiff, out):
    """The same forces accumulated spring by spring into a zeroed output."""
    n = x.shape[0]
    out[:] = 0.0
    for s in range(n):
        left = x[s - 1] if s > 0 else 0.0
        tension = stiff[s] * (x[s] - left - SPRING_REST)
        out[s] -= tension
        if s > 0:
            out[s - 1] += tension


def spring_chain_nb(x0, v0, stiff):
    n = x0.shape[0]
    x = x0.copy()
    v = v0.copy()
    force = np.empty(n)
    for _ in range(10):
        _spring_forces(x, stiff, force)
        for s in range(n):
            v[s] = SPRING_DAMP * (v[s] + SPRING_DT * force[s])
            x[s] += SPRING_DT * v[s]
    return np.sum(W8[:n] * x) + 0.5 * np.sum(v * v)


KF_F = np.array([[1.0, 0.0, 0.5, 0.0], [0.0, 1.0, 0.0, 0.5],
                 [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
KF_H = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])


def kalman_update_np(x, chol, y, log_q):
    """One predict/update step of a constant-velocity Kalman filter: the innovation's
    Gaussian log-likelihood (solve and slogdet), the updated state and its covariance."""
    p = chol @ chol.T + 0.1 * np.eye(4)
    xp = KF_F @ x
    pp = KF_F @ p @ KF_F.T + np.exp(log_q) * np.eye(4)
    innov = y - KF_H @ xp
    s = KF_H @ pp @ KF_H.T + 0.5 * np.eye(2)
    gain = np.linalg.solve(s, KF_H @ pp).T
    x_new = xp + gain @ innov
    p_new = (np.eye(4) - gain @ KF_H) @ pp
    _, logdet = np.linalg.slogdet(s)
    nll = 0.5 * (innov @ np.linalg.solve(s, innov) + logdet)
    return nll + np.sum(W8[:4] * x_new) + np.trace(p_new)


def kalman_level_nb(obs, log_q, log_r):
    """The local-level model's Kalman filter written as the scalar recursion, and the
    negative log-likelihood of the series (prediction-error decomposition)."""
    q = math.exp(log_q)
    r = math.exp(log_r)
    level = obs[0]
    var = 1.0
    nll = 0.0
    for t in range(1, obs.shape[0]):
        var += q
        f = var + r
        e = obs[t] - level
        nll += 0.5 * (math.log(2.0 * math.pi * f) + e * e / f)
        gain = var / f
        level += gain * e
        var *= 1.0 - gain
    return nll


def spring_chain_zeroed_nb(x0, v0, stiff):
    n = x0.shape[0]
    x = x0.copy()
    v = v0.copy()
    force = np.empty(n)
    for _ in range(10):
        _spring_forces_zeroed(x, stiff, force)
        for s in range(n):
            v[s] = (v[s] + SPRING_DT * force[s]) * SPRING_DAMP
            x[s] += SPRING_DT * v[s]
    return np.sum(W8[:n] * x) + 0.5 * np.sum(v * v)


def time_levels_views_nb(q0, courant):
    """time_levels_nb with each level named before the helper call."""
    n = q0.shape[0]
    levels = np.zeros((2, n))
    levels[0, :] = q0
    for step in range(4):
        now = levels[step % 2]
        nxt = levels[(step + 1) % 2]
        _upwind_step(now, nxt, courant)
    return np.sum(W8 * levels[0]) + np.sum(levels[1] ** 2)


# ---- the same kinds of programs, written with functions jitgrad refuses -------------------------


def drawdown_accumulate(returns):
    equity = np.cumprod(1.0 + returns)
    peak = np.maximum.accumulate(equity)
    return np.max((peak - equity) / peak)


def iir_lfilter(x, b, a):
    y = scipy.signal.lfilter(b, a, x)
    return np.sum(W8 * y)


def spectrum_rfft(x):
    n = x.shape[0]
    win = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)
    spec = np.fft.rfft(x * win)
    return np.sum(np.abs(spec) ** 2)


def autocorr_correlate(x):
    xc = x - np.mean(x)
    full = np.correlate(xc, xc, mode="full")
    return np.sum(full[x.shape[0]:] ** 2) / full[x.shape[0] - 1] ** 2


def curve_interp(zero_rates):
    grid = np.array([0.5, 1.0, 2.0, 5.0])
    r = np.interp(np.array([0.75, 1.5, 3.0]), grid, zero_rates)
    return np.sum(np.exp(-r * np.array([0.75, 1.5, 3.0])))


def ghost_cells_pad(u):
    padded = np.pad(u, 1, mode="edge")
    lap = padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:] - 4.0 * u
    return np.sum(lap ** 2)


def centred_gradient(h):
    dhdx, dhdy = np.gradient(h)
    return np.sum(dhdx ** 2 + dhdy ** 2)


def fv_scatter_add(q, left, right):
    flux = 0.5 * (q[left] + q[right])
    out = np.zeros_like(q)
    np.add.at(out, left, -flux)
    np.add.at(out, right, flux)
    return np.sum(out ** 2)


def portfolio_pca(rets):
    dev = rets - rets.mean(axis=0)
    cov = dev.T @ dev / (rets.shape[0] - 1)
    vals, _ = np.linalg.eigh(cov)
    return vals[-1]


KERNELS = [
    eos_density_np, eos_density_nb, isoneutral_slopes_nb, isoneutral_slopes_np,
    vertical_mixing_nb, vertical_mixing_np, upwind_advection_np, upwind_advection_nb,
    limited_advection_nb, leapfrog_levels_np, leapfrog_levels_nb, time_levels_nb,
    burgers_np, burgers_nb, shallow_water_np, shallow_water_nb, cavity_step_np, cavity_step_nb,
    pressure_sor_nb, pressure_redblack_np, fv_diffusion_nb,
    heston_call_nb, heston_call_np, sabr_vol_np, sabr_vol_nb, barrier_call_nb, barrier_call_np,
    lookback_nb, max_drawdown_nb, bootstrap_curve_np, bootstrap_curve_nb, portfolio_risk_np,
    portfolio_risk_nb,
    fir_filter_np, fir_filter_nb, biquad_cascade_nb, windowed_power_np, windowed_power_nb,
    autocorr_np, autocorr_nb, savgol_np, savgol_nb,
    planar_arm_np, dh_chain_nb, kepler_np, kepler_nb, kinetics_np, kinetics_nb, sir_np, sir_nb,
    bucket_nb, bucket_np, tv_denoise_np, tv_denoise_nb, spring_chain_np, spring_chain_nb,
    spring_chain_zeroed_nb, kalman_update_np, kalman_level_nb, autocorr_correlate, curve_interp,
    ghost_cells_pad, spectrum_rfft, centred_gradient, portfolio_pca, fv_scatter_add,
]

REFUSED = [time_levels_views_nb, drawdown_accumulate]
