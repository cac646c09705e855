"""Functions for the domain corpus (``corpus_domains.py``, issue #43 item 3).

Small numerical programs from domains the other corpora do not cover -- photovoltaics, power
systems, seismology, volatility econometrics, survival analysis, Gaussian processes,
psychometrics, reinforcement learning, thin-film and ray optics, sports ratings,
pharmacokinetics, traffic flow, structural mechanics, computer graphics, population genetics,
battery models and astronomical photometry -- written in the forms public projects of those
domains use (each function's comment names the project whose forms it follows). Every line was
written for this corpus; none is copied from any project, and the coefficients are made up.

The functions were written as those authors write them, not bent to what jitgrad supports:
helpers with keyword defaults, module-level constants, tuples and dicts returned, string
options, ``isinstance`` checks on configuration values, lists built in loops then stacked,
lambdas passed as arguments, ``*args``, complex arithmetic where the domain is complex, SciPy
where the domain reaches for it. About half are NumPy whole-array code, half Numba-style loops.
Entry functions return a scalar (a loss, a likelihood, a weighted sum of what the code
computes) and leave their arguments alone.
"""

# written as the projects write it: unpacked values left unused, zip(x[:-1], x[1:])
# ruff: noqa: RUF059, RUF007

import functools
import math

import numba
import numpy as np
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats

W6 = np.arange(1.0, 7.0) / 6.0
W8 = np.arange(1.0, 9.0) / 8.0


# ---- photovoltaics -----------------------------------------------------------------------------

# forms of pvlib-python (github.com/pvlib/pvlib-python): aoi projection with clipping, component dict
def _aoi_projection(surface_tilt, surface_azimuth, solar_zenith, solar_azimuth):
    projection = (
        np.cos(np.radians(surface_tilt)) * np.cos(np.radians(solar_zenith))
        + np.sin(np.radians(surface_tilt)) * np.sin(np.radians(solar_zenith))
        * np.cos(np.radians(solar_azimuth - surface_azimuth)))
    return np.clip(projection, -1, 1)


def _poa_components(aoi_proj, dni, poa_sky_diffuse, poa_ground_diffuse):
    poa_direct = np.maximum(dni * aoi_proj, 0)
    poa_diffuse = poa_sky_diffuse + poa_ground_diffuse
    return {"poa_global": poa_direct + poa_diffuse, "poa_direct": poa_direct,
            "poa_diffuse": poa_diffuse}


def poa_isotropic_np(surface_tilt, surface_azimuth, solar_zenith, solar_azimuth, dni, ghi, dhi,
                     albedo=0.25):
    proj = _aoi_projection(surface_tilt, surface_azimuth, solar_zenith, solar_azimuth)
    sky = dhi * (1 + np.cos(np.radians(surface_tilt))) * 0.5
    ground = ghi * albedo * (1 - np.cos(np.radians(surface_tilt))) * 0.5
    irrads = _poa_components(proj, dni, sky, ground)
    return np.sum(irrads["poa_global"]) / 1000.0


# forms of pvlib-python (github.com/pvlib/pvlib-python): sapm cell temperature + pvwatts dc, kw defaults
def sapm_module(poa_global, temp_air, wind_speed, a=-3.56, b=-0.075):
    return poa_global * np.exp(a + b * wind_speed) + temp_air


def sapm_cell_from_module(module_temperature, poa_global, deltaT, irrad_ref=1000.):
    return module_temperature + (poa_global / irrad_ref) * deltaT


def pvwatts_dc(g_poa_effective, temp_cell, pdc0, gamma_pdc, temp_ref=25.):
    return g_poa_effective * 0.001 * pdc0 * (1 + gamma_pdc * (temp_cell - temp_ref))


def pv_energy_np(poa_global, temp_air, wind_speed, pdc0, gamma_pdc):
    temp_module = sapm_module(poa_global, temp_air, wind_speed)
    temp_cell = sapm_cell_from_module(temp_module, poa_global, deltaT=3)
    return np.sum(pvwatts_dc(poa_global, temp_cell, pdc0, gamma_pdc)) / 1000.0


# forms of pvlib-python (github.com/pvlib/pvlib-python): bishop88 explicit IV curve, tuple out
def bishop88(diode_voltage, photocurrent, saturation_current, resistance_series,
             resistance_shunt, nNsVth, breakdown_factor=0., gradients=False):
    i_sh = diode_voltage / resistance_shunt
    i_d = saturation_current * np.expm1(diode_voltage / nNsVth)
    i_breakdown = breakdown_factor * diode_voltage
    i = photocurrent - i_d - i_sh - i_breakdown
    v = diode_voltage - i * resistance_series
    retval = (i, v, i * v)
    if gradients:
        grad_i = -saturation_current / nNsVth * np.exp(diode_voltage / nNsVth) - 1 / resistance_shunt
        retval += (grad_i,)
    return retval


def bishop88_power_np(diode_voltage, photocurrent, saturation_current, resistance_series,
                      resistance_shunt, nNsVth):
    i, v, p = bishop88(diode_voltage, photocurrent, saturation_current, resistance_series,
                       resistance_shunt, nNsVth)
    return np.sum(W8 * p) + 0.1 * np.max(p)


# forms of pvlib-python (github.com/pvlib/pvlib-python): Newton on the single-diode equation, loop
def single_diode_current_nb(voltage, photocurrent, saturation_current, resistance_series,
                            resistance_shunt, nNsVth):
    out = np.empty_like(voltage)
    for k in range(voltage.shape[0]):
        v = voltage[k]
        i = photocurrent
        for _ in range(30):
            arg = (v + i * resistance_series) / nNsVth
            f = photocurrent - saturation_current * (math.exp(arg) - 1.0) \
                - (v + i * resistance_series) / resistance_shunt - i
            df = -saturation_current * math.exp(arg) * resistance_series / nNsVth \
                - resistance_series / resistance_shunt - 1.0
            step = f / df
            i -= step
            if abs(step) < 1e-13:
                break
        out[k] = i
    return np.sum(out * voltage)


# forms of pvlib-python (github.com/pvlib/pvlib-python): Hay-Davies transposition, np.maximum floors
def haydavies_np(surface_tilt, surface_azimuth, dhi, dni, dni_extra, solar_zenith,
                 solar_azimuth, return_components=False):
    cos_tt = _aoi_projection(surface_tilt, surface_azimuth, solar_zenith, solar_azimuth)
    cos_tt = np.maximum(cos_tt, 0)
    cos_solar_zenith = np.cos(np.radians(solar_zenith))
    Rb = cos_tt / np.maximum(cos_solar_zenith, 0.01745)
    AI = dni / dni_extra
    term1 = 1 - AI
    term2 = 0.5 * (1 + np.cos(np.radians(surface_tilt)))
    poa_isotropic = np.maximum(dhi * term1 * term2, 0)
    poa_circumsolar = np.maximum(dhi * (AI * Rb), 0)
    sky_diffuse = poa_isotropic + poa_circumsolar
    if return_components:
        return sky_diffuse, poa_isotropic, poa_circumsolar
    return np.sum(sky_diffuse)


# forms of pvlib-python (github.com/pvlib/pvlib-python): physical IAM, normalised by the value at 0
def _physical_tau(aoi, n, K, L):
    sin_aoi = np.sin(np.radians(aoi))
    cos_aoi = np.cos(np.radians(aoi))
    sin_refr = sin_aoi / n
    cos_refr = np.sqrt(1 - sin_refr ** 2)
    n1cos1, n2cos1 = cos_aoi, n * cos_aoi
    n1cos2, n2cos2 = cos_refr, n * cos_refr
    rho_s = ((n1cos1 - n2cos2) / (n1cos1 + n2cos2)) ** 2
    rho_p = ((n1cos2 - n2cos1) / (n1cos2 + n2cos1)) ** 2
    tau_s = (1 - rho_s) * np.exp(-K * L / cos_refr)
    tau_p = (1 - rho_p) * np.exp(-K * L / cos_refr)
    return 0.5 * (tau_s + tau_p)


def physical_iam_np(aoi, n=1.526, K=4.0, L=0.002):
    tau0 = (1 - ((1 - n) / (1 + n)) ** 2) * np.exp(-K * L)
    iam = _physical_tau(aoi, n, K, L) / tau0
    iam = np.where(np.abs(aoi) >= 90, 0, iam)
    return np.sum(W6 * iam)


# forms of pvlib-python (github.com/pvlib/pvlib-python): Spencer declination, EoT, zenith, in loops
def solar_zenith_nb(day_of_year, hours, latitude, longitude):
    total = 0.0
    for k in range(hours.shape[0]):
        day_angle = 2.0 * math.pi / 365.0 * (day_of_year - 1)
        decl = (0.006918 - 0.399912 * math.cos(day_angle) + 0.070257 * math.sin(day_angle)
                - 0.006758 * math.cos(2 * day_angle) + 0.000907 * math.sin(2 * day_angle))
        eot = 229.18 * (0.000075 + 0.001868 * math.cos(day_angle)
                        - 0.032077 * math.sin(day_angle))
        solar_time = hours[k] + (eot + 4.0 * longitude) / 60.0
        hour_angle = math.radians(15.0 * (solar_time - 12.0))
        lat = math.radians(latitude)
        cos_zen = (math.sin(lat) * math.sin(decl)
                   + math.cos(lat) * math.cos(decl) * math.cos(hour_angle))
        if cos_zen <= 0.0:
            continue
        total += cos_zen
    return total


# forms of pvlib-python (github.com/pvlib/pvlib-python): pvwatts inverter with clipping via minimum
def pvwatts_ac_np(pdc, pdc0, eta_inv_nom=0.96, eta_inv_ref=0.9637):
    pac0 = eta_inv_nom * pdc0
    zeta = pdc / pdc0
    eta = eta_inv_nom / eta_inv_ref * (-0.0162 * zeta - np.divide(0.0059, zeta) + 0.9858)
    eta[eta < 0] = 0
    power_ac = eta * pdc
    power_ac = np.minimum(pac0, power_ac)
    power_ac = np.maximum(0, power_ac)
    return np.sum(power_ac)


# ---- power systems -----------------------------------------------------------------------------

# forms of PYPOWER (github.com/rwl/PYPOWER): complex Ybus and S = V * conj(Ybus V)
def _make_ybus(r, x, b, f, t, nb):
    ys = 1 / (r + 1j * x)
    Ybus = np.zeros((nb, nb), dtype=complex)
    for k in range(len(r)):
        Ybus[f[k], f[k]] += ys[k] + 0.5j * b[k]
        Ybus[t[k], t[k]] += ys[k] + 0.5j * b[k]
        Ybus[f[k], t[k]] -= ys[k]
        Ybus[t[k], f[k]] -= ys[k]
    return Ybus


def power_mismatch_complex(vm, va, r, x, b, f, t, sbus):
    Ybus = _make_ybus(r, x, b, f, t, vm.shape[0])
    V = vm * np.exp(1j * va)
    mis = V * np.conj(Ybus @ V) - sbus
    return np.sum(np.abs(mis) ** 2)


# forms of PYPOWER (github.com/rwl/PYPOWER): DC power flow, B matrix sliced with ix_ over pvpq
def dc_power_flow_np(x_branch, p_inj, f, t, ref=0):
    nb = p_inj.shape[0]
    Bf = np.zeros((x_branch.shape[0], nb))
    Bf[np.arange(x_branch.shape[0]), f] = 1 / x_branch
    Bf[np.arange(x_branch.shape[0]), t] = -1 / x_branch
    Cft = np.zeros((x_branch.shape[0], nb))
    Cft[np.arange(x_branch.shape[0]), f] = 1
    Cft[np.arange(x_branch.shape[0]), t] = -1
    Bbus = Cft.T @ Bf
    pvpq = np.array([i for i in range(nb) if i != ref])
    Va = np.zeros(nb)
    Va[pvpq] = np.linalg.solve(Bbus[np.ix_(pvpq, pvpq)], p_inj[pvpq])
    flows = Bf @ Va
    return np.sum(flows ** 2)


# forms of pandapower (github.com/e2nIEE/pandapower): polar injections in numba double loops
def _injections_nb(vm, va, G, B):
    n = vm.shape[0]
    P = np.zeros(n)
    Q = np.zeros(n)
    for i in range(n):
        for k in range(n):
            dth = va[i] - va[k]
            P[i] += vm[i] * vm[k] * (G[i, k] * math.cos(dth) + B[i, k] * math.sin(dth))
            Q[i] += vm[i] * vm[k] * (G[i, k] * math.sin(dth) - B[i, k] * math.cos(dth))
    return P, Q


def polar_mismatch_nb(vm, va, G, B, p_spec, q_spec):
    P, Q = _injections_nb(vm, va, G, B)
    mis = 0.0
    for i in range(1, vm.shape[0]):
        mis += (P[i] - p_spec[i]) ** 2 + (Q[i] - q_spec[i]) ** 2
    return mis


# forms of PYPOWER (github.com/rwl/PYPOWER): Newton-Raphson power flow, convergence break
def newton_pf_nb(p_spec, q_spec, G, B, max_it=10, tol=1e-12):
    n = G.shape[0]
    vm = np.ones(n)
    va = np.zeros(n)
    for it in range(max_it):
        P, Q = _injections_nb(vm, va, G, B)
        F = np.concatenate((P[1:] - p_spec[1:], Q[1:] - q_spec[1:]))
        normF = np.max(np.abs(F))
        if normF < tol:
            break
        J = np.zeros((2 * (n - 1), 2 * (n - 1)))
        h = 1e-7
        for j in range(2 * (n - 1)):
            vm2 = vm.copy()
            va2 = va.copy()
            if j < n - 1:
                va2[j + 1] += h
            else:
                vm2[j - n + 2] += h
            P2, Q2 = _injections_nb(vm2, va2, G, B)
            F2 = np.concatenate((P2[1:] - p_spec[1:], Q2[1:] - q_spec[1:]))
            J[:, j] = (F2 - F) / h
        dx = -np.linalg.solve(J, F)
        va[1:] += dx[:n - 1]
        vm[1:] += dx[n - 1:]
    return np.sum(W6[:n] * vm) + np.sum(va)


# forms of pandapower (github.com/e2nIEE/pandapower): branch losses from index arrays f, t
def branch_losses_np(vm, va, r, x, f, t):
    g = r / (r ** 2 + x ** 2)
    dv2 = vm[f] ** 2 + vm[t] ** 2 - 2 * vm[f] * vm[t] * np.cos(va[f] - va[t])
    return np.sum(g * dv2)


# forms of PYPOWER (github.com/rwl/PYPOWER): gencost polynomial rows, Horner per generator
def totcost_nb(gencost, pg):
    total = 0.0
    for i in range(pg.shape[0]):
        ncost = int(gencost[i, 3])
        c = 0.0
        for k in range(ncost):
            c = c * pg[i] + gencost[i, 4 + k]
        total += c
    return total


# forms of pandapower (github.com/e2nIEE/pandapower): net as a dict of arrays, degrees, loading %
def line_loading_pp(vm_pu, va_degree, net):
    f = net["from_bus"]
    t = net["to_bus"]
    z = np.sqrt(net["r_ohm"] ** 2 + net["x_ohm"] ** 2)
    va = np.deg2rad(va_degree)
    vf = vm_pu[f] * net["vn_kv"]
    vt = vm_pu[t] * net["vn_kv"]
    dv = np.sqrt(vf ** 2 + vt ** 2 - 2 * vf * vt * np.cos(va[f] - va[t]))
    i_ka = dv / z / np.sqrt(3)
    loading_percent = i_ka / net["max_i_ka"] * 100
    return np.sum(loading_percent ** 2) / 1e4


# forms of PYPOWER (github.com/rwl/PYPOWER): economic dispatch, lambda and clipped outputs
def economic_dispatch_np(lam, b, c, pmin, pmax, demand):
    pg = np.clip((lam - b) / (2 * c), pmin, pmax)
    cost = np.sum(b * pg + c * pg ** 2)
    return cost + 10.0 * (np.sum(pg) - demand) ** 2


# ---- seismology --------------------------------------------------------------------------------

# forms of obspy (github.com/obspy/obspy): classic STA/LTA by cumulative sums, head zeroed
def classic_sta_lta_np(a, nsta, nlta):
    m = len(a)
    sta = np.cumsum(a ** 2, dtype=np.float64)
    lta = sta.copy()
    sta[nsta:] = sta[nsta:] - sta[:-nsta]
    sta /= nsta
    lta[nlta:] = lta[nlta:] - lta[:-nlta]
    lta /= nlta
    sta[:nlta - 1] = 0
    dtiny = np.finfo(0.0).tiny
    idx = lta < dtiny
    lta[idx] = dtiny
    return np.sum(W8[:m] * sta / lta)


# forms of obspy (github.com/obspy/obspy): recursive STA/LTA written in Python
def recursive_sta_lta_py(a, nsta, nlta):
    ndat = len(a)
    csta = 1. / nsta
    clta = 1. / nlta
    sta = 0.
    lta = 1e-30
    charfct = [0.0] * len(a)
    icsta = 1 - csta
    iclta = 1 - clta
    for i in range(1, ndat):
        sq = a[i] ** 2
        sta = csta * sq + icsta * sta
        lta = clta * sq + iclta * lta
        charfct[i] = sta / lta
        if i < nlta:
            charfct[i] = 0.
    return sum(charfct)


# forms of obspy (github.com/obspy/obspy): detrend, cosine taper by index ranges, energy
def cosine_taper(npts, p=0.1):
    frac = int(npts * p / 2.0 + 0.5)
    idx1 = 0
    idx2 = frac - 1
    idx3 = npts - frac
    idx4 = npts - 1
    cos_win = np.zeros(npts)
    cos_win[idx1:idx2 + 1] = 0.5 * (1.0 - np.cos(np.pi * (np.arange(idx1, idx2 + 1) - float(idx1))
                                                 / (idx2 - idx1)))
    cos_win[idx2 + 1:idx3] = 1.0
    cos_win[idx3:idx4 + 1] = 0.5 * (1.0 + np.cos(np.pi * (float(idx3) - np.arange(idx3, idx4 + 1))
                                                 / (idx4 - idx3)))
    if idx1 == idx2:
        cos_win[idx1] = 0.0
    if idx3 == idx4:
        cos_win[idx3] = 0.0
    return cos_win


def tapered_energy_np(data, p=0.5):
    x = np.arange(len(data), dtype=np.float64)
    slope = np.sum((x - x.mean()) * (data - data.mean())) / np.sum((x - x.mean()) ** 2)
    detrended = data - data.mean() - slope * (x - x.mean())
    tapered = detrended * cosine_taper(len(data), p=p)
    return np.sum(tapered ** 2)


# forms of obspy (github.com/obspy/obspy): envelope through scipy.signal.hilbert
def envelope_peak_np(data):
    hilb = scipy.signal.hilbert(data)
    env = np.sqrt(np.power(data, 2) + np.power(hilb.imag, 2))
    return np.sum(W8[:len(data)] * env)


# forms of pyrocko (github.com/pyrocko/pyrocko): hypocentre misfit over stations, loops
def hypocenter_misfit_nb(src, origin_time, stations, t_obs, velocity):
    misfit = 0.0
    for k in range(stations.shape[0]):
        dx = stations[k, 0] - src[0]
        dy = stations[k, 1] - src[1]
        dz = stations[k, 2] - src[2]
        dist = math.sqrt(dx * dx + dy * dy + dz * dz)
        t_pred = origin_time + dist / velocity
        res = t_obs[k] - t_pred
        misfit += res * res
    return misfit


# forms of SourceSpec (github.com/SeismicSource/sourcespec): Brune spectrum fit in log10 space
def brune_model(freqs, omega0, fc, t_star):
    return omega0 / (1. + (freqs / fc) ** 2) * np.exp(-np.pi * freqs * t_star)


def brune_misfit_np(log_omega0, log_fc, t_star, freqs, amps):
    model = brune_model(freqs, 10 ** log_omega0, 10 ** log_fc, t_star)
    resid = np.log10(model) - np.log10(amps)
    Mo = 10 ** log_omega0 * 1e10
    Mw = 2. / 3. * (np.log10(Mo) - 9.1)
    return np.sum(resid ** 2) + 0.01 * Mw ** 2


# forms of obspy (github.com/obspy/obspy): polarisation from the eigenvectors of a covariance
def polarization_linearity_np(z, n, e):
    data = np.vstack((z - z.mean(), n - n.mean(), e - e.mean()))
    cov = np.cov(data)
    eigvals, eigvecs = np.linalg.eigh(cov)
    return 1 - (eigvals[1] + eigvals[0]) / (2 * eigvals[2])


# forms of obspy (github.com/obspy/obspy): normalised cross-correlation over shifts, max of list
def xcorr_max_nb(a, b, shift_len):
    n = len(a)
    norm = math.sqrt(np.sum(a ** 2) * np.sum(b ** 2))
    ccs = []
    for shift in range(-shift_len, shift_len + 1):
        cc = 0.0
        for i in range(n):
            j = i + shift
            if j < 0 or j >= n:
                continue
            cc += a[i] * b[j]
        ccs.append(cc / norm)
    return max(ccs)


# forms of obspy (github.com/obspy/obspy): local magnitude, Hutton-Boore, station average
def local_magnitude_np(amplitudes, hypo_distances, a=1.11, b=0.00189, c=-2.09):
    ml = np.log10(amplitudes * 1000) + a * np.log10(hypo_distances) + b * hypo_distances + c
    return np.mean(ml) + 0.1 * np.std(ml)


# ---- volatility econometrics -------------------------------------------------------------------

# forms of arch (github.com/bashtage/arch): variance bounds check and GARCH(p,o,q) recursion
def bounds_check(sigma2, var_bounds):
    if sigma2 < var_bounds[0]:
        sigma2 = var_bounds[0]
    elif sigma2 > var_bounds[1]:
        if not np.isinf(sigma2):
            sigma2 = var_bounds[1] + np.log(sigma2 / var_bounds[1])
        else:
            sigma2 = var_bounds[1] + 1000.
    return sigma2


def garch_recursion(parameters, fresids, sresids, sigma2, p, o, q, nobs, backcast,
                    var_bounds):
    for t in range(nobs):
        loc = 0
        sigma2[t] = parameters[loc]
        loc += 1
        for j in range(p):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * backcast
            else:
                sigma2[t] += parameters[loc] * fresids[t - 1 - j]
            loc += 1
        for j in range(o):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * 0.5 * backcast
            else:
                sigma2[t] += parameters[loc] * fresids[t - 1 - j] * (sresids[t - 1 - j] < 0)
            loc += 1
        for j in range(q):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * backcast
            else:
                sigma2[t] += parameters[loc] * sigma2[t - 1 - j]
            loc += 1
        sigma2[t] = bounds_check(sigma2[t], var_bounds[t])
    return sigma2


def gjr_garch_nll(parameters, resids, backcast):
    nobs = resids.shape[0]
    sigma2 = np.zeros_like(resids)
    var_bounds = np.empty((nobs, 2))
    var_bounds[:, 0] = 1e-6
    var_bounds[:, 1] = 1e6
    garch_recursion(parameters, resids ** 2, np.sign(resids), sigma2, 1, 1, 1, nobs, backcast,
                    var_bounds)
    lls = -0.5 * (np.log(2 * np.pi) + np.log(sigma2) + resids ** 2 / sigma2)
    return -np.sum(lls)


# forms of arch (github.com/bashtage/arch): EGARCH log-variance recursion, numba style
@numba.njit
def egarch_nll_nb(parameters, resids, backcast):
    nobs = resids.shape[0]
    omega, alpha, gamma, beta = parameters[0], parameters[1], parameters[2], parameters[3]
    norm_const = np.sqrt(2 / np.pi)
    lnsigma2 = np.empty(nobs)
    std_resids = np.empty(nobs)
    abs_std_resids = np.empty(nobs)
    nll = 0.0
    for t in range(nobs):
        if t == 0:
            lnsigma2[t] = backcast
        else:
            lnsigma2[t] = (omega + alpha * (abs_std_resids[t - 1] - norm_const)
                           + gamma * std_resids[t - 1] + beta * lnsigma2[t - 1])
        std_resids[t] = resids[t] / np.exp(0.5 * lnsigma2[t])
        abs_std_resids[t] = np.abs(std_resids[t])
        nll += 0.5 * (np.log(2 * np.pi) + lnsigma2[t] + std_resids[t] ** 2)
    return nll


# forms of arch (github.com/bashtage/arch): Student's t log-likelihood with gammaln
def studentst_loglik_np(nu, resids, sigma2, individual=False):
    lls = scipy.special.gammaln((nu + 1) / 2) - scipy.special.gammaln(nu / 2) \
        - np.log(np.pi * (nu - 2)) / 2
    lls -= 0.5 * (np.log(sigma2))
    lls -= ((nu + 1) / 2) * (np.log(1 + (resids ** 2.0) / (sigma2 * (nu - 2))))
    if individual:
        return lls
    return np.sum(lls)


# forms of arch (github.com/bashtage/arch): Hansen's skewed t, constants a, b, c and np.where
def skewt_loglik_np(parameters, std_resid):
    eta, lam = parameters
    const_c = scipy.special.gammaln((eta + 1) / 2) - scipy.special.gammaln(eta / 2) \
        - np.log(np.pi * (eta - 2)) / 2
    const_a = 4 * lam * np.exp(const_c) * (eta - 2) / (eta - 1)
    const_b = (1 + 3 * lam ** 2 - const_a ** 2) ** 0.5
    resid = std_resid
    lls = np.log(const_b) + const_c
    lls -= (eta + 1) / 2 * np.log(1 + (const_b * resid + const_a) ** 2
                                  / (eta - 2) / (1 + np.where(resid < -const_a / const_b,
                                                              -lam, lam)) ** 2)
    return np.sum(lls)


# forms of arch (github.com/bashtage/arch): RiskMetrics EWMA variance as a plain loop
def ewma_nll(resids, lam=0.94, backcast=None):
    nobs = resids.shape[0]
    if backcast is None:
        backcast = np.mean(resids[:4] ** 2)
    sigma2 = np.empty(nobs)
    sigma2[0] = backcast
    for t in range(1, nobs):
        sigma2[t] = lam * sigma2[t - 1] + (1 - lam) * resids[t - 1] ** 2
    return 0.5 * np.sum(np.log(sigma2) + resids ** 2 / sigma2)


# forms of arch (github.com/bashtage/arch): HAR design built from lag windows, lstsq
def har_fit_lstsq(rv, lags=(1, 3, 6)):
    maxlag = max(lags)
    cols = [np.ones(rv.shape[0] - maxlag)]
    for lag in lags:
        col = [np.mean(rv[t - lag:t]) for t in range(maxlag, rv.shape[0])]
        cols.append(np.array(col))
    x = np.column_stack(cols)
    y = rv[maxlag:]
    params = np.linalg.lstsq(x, y, rcond=None)[0]
    return np.sum((y - x @ params) ** 2)


# forms of arch (github.com/bashtage/arch): HAR with rolling means in loops and normal equations
def har_fit_normal_eq(rv, lags=(1, 3, 6)):
    maxlag = max(lags)
    nobs = rv.shape[0] - maxlag
    x = np.ones((nobs, len(lags) + 1))
    for j, lag in enumerate(lags):
        for t in range(nobs):
            x[t, j + 1] = rv[maxlag + t - lag:maxlag + t].mean()
    y = rv[maxlag:]
    params = np.linalg.solve(x.T @ x, x.T @ y)
    resid = y - x @ params
    return resid @ resid


# forms of arch (github.com/bashtage/arch): analytic multi-step GARCH(1,1) variance forecast
def garch_forecast_nb(parameters, last_resid, last_sigma2, horizon=5):
    omega, alpha, beta = parameters[0], parameters[1], parameters[2]
    forecasts = np.empty(horizon)
    forecasts[0] = omega + alpha * last_resid ** 2 + beta * last_sigma2
    for h in range(1, horizon):
        forecasts[h] = omega + (alpha + beta) * forecasts[h - 1]
    return forecasts.sum()


# ---- survival analysis -------------------------------------------------------------------------

# forms of lifelines (github.com/CamDavidsonPilon/lifelines): Weibull NLL, params unpacked
def weibull_nll_np(lambda_rho, T, E):
    n = T.shape[0]
    lambda_, rho = lambda_rho
    neg_ll = -np.log(rho * lambda_) * E.sum() - (rho - 1) * (E * np.log(lambda_ * T)).sum() \
        + ((lambda_ * T) ** rho).sum()
    return neg_ll / n


# forms of lifelines (github.com/CamDavidsonPilon/lifelines): Weibull AFT, log hazard and cum. hazard
def _weibull_aft_cumulative_hazard(params, T, Xs):
    lambda_params, rho_params = params
    lambda_ = np.exp(np.dot(Xs, lambda_params))
    rho_ = np.exp(rho_params)
    return (T / lambda_) ** rho_


def _weibull_aft_log_hazard(params, T, Xs):
    lambda_params, rho_params = params
    log_rho_ = rho_params
    ln_lambda_ = np.dot(Xs, lambda_params)
    return log_rho_ - ln_lambda_ + np.expm1(log_rho_) * (np.log(T) - ln_lambda_)


def weibull_aft_nll_np(lambda_params, rho_param, T, E, Xs):
    params = (lambda_params, rho_param)
    ll = (E * _weibull_aft_log_hazard(params, T, Xs)).sum() \
        - _weibull_aft_cumulative_hazard(params, T, Xs).sum()
    return -ll / T.shape[0]


# forms of lifelines (github.com/CamDavidsonPilon/lifelines): Cox partial likelihood, reverse cumsum
def coxph_nll_np(beta, X, T, E):
    order = np.argsort(-T)
    X, E = X[order], E[order]
    scores = X @ beta
    log_risk_set = np.log(np.cumsum(np.exp(scores)))
    return -np.sum(E * (scores - log_risk_set))


# forms of lifelines (github.com/CamDavidsonPilon/lifelines): Efron ties, loop over sorted times
def coxph_efron_nll_nb(beta, X, T, E):
    n, d = X.shape
    risk_phi = 0.0
    tie_phi = 0.0
    tie_count = 0
    tie_xb = 0.0
    ll = 0.0
    for i in range(n - 1, -1, -1):
        xb = 0.0
        for j in range(d):
            xb += X[i, j] * beta[j]
        phi_i = math.exp(xb)
        risk_phi += phi_i
        if E[i]:
            tie_phi += phi_i
            tie_xb += xb
            tie_count += 1
        if i > 0 and T[i - 1] == T[i]:
            continue
        if tie_count == 0:
            continue
        ll += tie_xb
        for l in range(tie_count):
            ll -= math.log(risk_phi - l / tie_count * tie_phi)
        tie_phi = 0.0
        tie_xb = 0.0
        tie_count = 0
    return -ll


# forms of lifelines (github.com/CamDavidsonPilon/lifelines): log-logistic fitter, survival function
def loglogistic_nll_np(alpha_, beta_, T, E):
    log_hz = np.log(beta_) - np.log(alpha_) + np.expm1(np.log(beta_)) * (np.log(T) - np.log(alpha_)) \
        - np.log1p((T / alpha_) ** beta_)
    cum_hz = np.log1p((T / alpha_) ** beta_)
    return -(E * log_hz).sum() + cum_hz.sum()


# forms of lifelines (github.com/CamDavidsonPilon/lifelines): piecewise exponential, breakpoints loop
def piecewise_exponential_nll_nb(log_lambdas, breakpoints, T, E):
    nll = 0.0
    for i in range(T.shape[0]):
        cum_haz = 0.0
        last = 0
        lo = 0.0
        for k in range(log_lambdas.shape[0]):
            hi = breakpoints[k] if k < breakpoints.shape[0] else np.inf
            if T[i] <= lo:
                break
            cum_haz += math.exp(log_lambdas[k]) * (min(T[i], hi) - lo)
            last = k
            lo = hi
        nll += cum_haz - E[i] * log_lambdas[last]
    return nll


# forms of lifelines (github.com/CamDavidsonPilon/lifelines): generalized gamma with gammaincc
def generalized_gamma_nll(mu_, ln_sigma_, lambda_, T, E):
    sigma_ = np.exp(ln_sigma_)
    Z = (np.log(T) - mu_) / sigma_
    ilambda_2 = 1 / lambda_ ** 2
    v = ilambda_2 * np.exp(lambda_ * Z)
    log_sf = np.log(scipy.special.gammaincc(ilambda_2, v))
    log_hz = np.log(np.abs(lambda_)) - ln_sigma_ - np.log(T) - scipy.special.gammaln(ilambda_2) \
        + (lambda_ * Z - 2 * np.log(np.abs(lambda_))) * ilambda_2 - v - log_sf
    return -(E * log_hz).sum() - log_sf.sum()


# forms of lifelines (github.com/CamDavidsonPilon/lifelines): mixture cure model with expit
def mixture_cure_nll_np(logit_cure, log_lambda, log_rho, T, E):
    p = scipy.special.expit(logit_cure)
    lam, rho = np.exp(log_lambda), np.exp(log_rho)
    sf_uncured = np.exp(-(T / lam) ** rho)
    pdf_uncured = rho / lam * (T / lam) ** (rho - 1) * sf_uncured
    ll = E * np.log((1 - p) * pdf_uncured) + (1 - E) * np.log(p + (1 - p) * sf_uncured)
    return -ll.sum()


# ---- Gaussian processes ------------------------------------------------------------------------

# forms of GPy (github.com/SheffieldML/GPy): scaled distance with X2=None default, RBF of r, cholesky
def _unscaled_dist(X, X2=None):
    if X2 is None:
        Xsq = np.sum(np.square(X), 1)
        r2 = -2. * np.dot(X, X.T) + (Xsq[:, None] + Xsq[None, :])
        r2 = np.clip(r2, 0, np.inf)
        return np.sqrt(r2)
    X1sq = np.sum(np.square(X), 1)
    X2sq = np.sum(np.square(X2), 1)
    r2 = -2. * np.dot(X, X2.T) + (X1sq[:, None] + X2sq[None, :])
    r2 = np.clip(r2, 0, np.inf)
    return np.sqrt(r2)


def rbf_K(X, variance, lengthscale, X2=None):
    r = _unscaled_dist(X / lengthscale, None if X2 is None else X2 / lengthscale)
    return variance * np.exp(-0.5 * r ** 2)


def gp_rbf_nll_np(log_variance, log_lengthscale, log_noise, X, Y):
    K = rbf_K(X, np.exp(log_variance), np.exp(log_lengthscale))
    Ky = K + np.exp(log_noise) * np.eye(X.shape[0])
    L = np.linalg.cholesky(Ky)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, Y))
    return 0.5 * Y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * X.shape[0] * np.log(2 * np.pi)


# forms of GPy (github.com/SheffieldML/GPy): Matern 5/2 with ARD lengthscales, slogdet
def matern52_nll_np(log_lengthscales, log_noise, X, Y, variance=1.0):
    Xs = X / np.exp(log_lengthscales)
    diff = Xs[:, None, :] - Xs[None, :, :]
    r = np.sqrt(np.sum(diff ** 2, axis=-1) + 1e-12)
    K = variance * (1 + np.sqrt(5.) * r + 5. / 3 * r ** 2) * np.exp(-np.sqrt(5.) * r)
    Ky = K + np.exp(log_noise) * np.eye(X.shape[0])
    sign, logdet = np.linalg.slogdet(Ky)
    return 0.5 * Y @ np.linalg.solve(Ky, Y) + 0.5 * logdet


# forms of george (github.com/dfm/george): cho_factor / cho_solve for the likelihood and prediction
def george_predict(log_amp, log_metric, x, y, xs, yerr=0.1):
    amp, metric = np.exp(log_amp), np.exp(log_metric)
    K = amp * np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / metric)
    K[np.diag_indices_from(K)] += yerr ** 2
    factor = scipy.linalg.cho_factor(K, lower=True)
    alpha = scipy.linalg.cho_solve(factor, y)
    Ks = amp * np.exp(-0.5 * (xs[:, None] - x[None, :]) ** 2 / metric)
    mu = Ks @ alpha
    return np.sum(mu ** 2) - 0.5 * y @ alpha


# forms of george (github.com/dfm/george): kernel matrix filled in numba loops, periodic term
@numba.njit
def _exp_sine2(tau, gamma, log_period):
    s = math.sin(math.pi * tau / math.exp(log_period))
    return math.exp(-gamma * s * s)


def quasi_periodic_nll_nb(params, t, y):
    amp, ell, gamma, log_period, jitter = params[0], params[1], params[2], params[3], params[4]
    n = t.shape[0]
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            tau = t[i] - t[j]
            K[i, j] = amp * math.exp(-0.5 * tau * tau / ell) * _exp_sine2(tau, gamma, log_period)
        K[i, i] += jitter
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, y)
    logdet = 0.0
    for i in range(n):
        logdet += 2.0 * math.log(L[i, i])
    return 0.5 * (z @ z + logdet)


# forms of GPy (github.com/SheffieldML/GPy): Titsias sparse-GP bound through inducing points
def sparse_gp_bound_np(Z, log_variance, log_lengthscale, log_noise, X, Y):
    variance, lengthscale, beta = np.exp(log_variance), np.exp(log_lengthscale), np.exp(-log_noise)
    Kmm = rbf_K(Z, variance, lengthscale) + 1e-8 * np.eye(Z.shape[0])
    Knm = rbf_K(X, variance, lengthscale, Z)
    Lm = np.linalg.cholesky(Kmm)
    A = np.linalg.solve(Lm, Knm.T) * np.sqrt(beta)
    B = np.eye(Z.shape[0]) + A @ A.T
    LB = np.linalg.cholesky(B)
    c = np.linalg.solve(LB, A @ Y) * np.sqrt(beta)
    n = X.shape[0]
    bound = -0.5 * n * np.log(2 * np.pi) + 0.5 * n * np.log(beta) - np.sum(np.log(np.diag(LB)))
    bound += -0.5 * beta * Y @ Y + 0.5 * c @ c
    bound += -0.5 * beta * n * variance + 0.5 * np.trace(A @ A.T)
    return -bound


# forms of GPy (github.com/SheffieldML/GPy): Laplace approximation for a Bernoulli-logit GP
def gp_laplace_nll_nb(log_variance, log_lengthscale, X, y, n_iter=6):
    K = rbf_K(X, np.exp(log_variance), np.exp(log_lengthscale)) + 1e-6 * np.eye(X.shape[0])
    n = X.shape[0]
    f = np.zeros(n)
    for it in range(n_iter):
        pi = 1 / (1 + np.exp(-f))
        W = pi * (1 - pi)
        sW = np.sqrt(W)
        B = np.eye(n) + sW[:, None] * K * sW[None, :]
        L = np.linalg.cholesky(B)
        b = W * f + (y - pi)
        a = b - sW * np.linalg.solve(L.T, np.linalg.solve(L, sW * (K @ b)))
        f = K @ a
    loglik = np.sum(y * f - np.log1p(np.exp(f)))
    return 0.5 * a @ f - loglik + np.sum(np.log(np.diag(L)))


# forms of GPy (github.com/SheffieldML/GPy): kernel chosen by string, settings in a dict config
def _stationary(r, kernel):
    if kernel == "rbf":
        return np.exp(-0.5 * r ** 2)
    elif kernel == "matern32":
        return (1 + np.sqrt(3.) * r) * np.exp(-np.sqrt(3.) * r)
    elif kernel == "exponential":
        return np.exp(-r)
    raise ValueError("unknown kernel")


def gp_config_nll(log_lengthscale, log_noise, X, Y, config):
    jitter = config["jitter"]
    if isinstance(jitter, str):
        jitter = 1e-6
    r = np.sqrt(np.sum((X[:, None, :] - X[None, :, :]) ** 2, -1) + 1e-12) / np.exp(log_lengthscale)
    K = _stationary(r, config["kernel"]) + (np.exp(log_noise) + jitter) * np.eye(X.shape[0])
    L = np.linalg.cholesky(K)
    v = np.linalg.solve(L, Y)
    return 0.5 * v @ v + np.log(np.diag(L)).sum()


# ---- psychometrics -----------------------------------------------------------------------------

# forms of girth (github.com/eribean/girth): irt_evaluation + kernel signs, joint likelihood
def irt_evaluation(difficulty, discrimination, thetas):
    kernel = thetas - difficulty[:, None]
    kernel *= discrimination[:, None]
    return 1.0 / (1 + np.exp(-kernel))


def convert_responses_to_kernel_sign(responses):
    return (2 * responses - 1).astype(np.float64)


def twopl_jml_nll_np(discrimination, difficulty, thetas, responses):
    prob = irt_evaluation(difficulty, discrimination, thetas)
    the_sign = convert_responses_to_kernel_sign(responses)
    p = np.where(the_sign > 0, prob, 1 - prob)
    return -np.sum(np.log(p)) + 0.5 * np.sum(thetas ** 2)


# forms of girth (github.com/eribean/girth): marginal likelihood by quadrature, partial integral
QUAD_THETA = np.linspace(-4, 4, 11)
QUAD_WEIGHTS = np.exp(-QUAD_THETA ** 2 / 2) / np.sum(np.exp(-QUAD_THETA ** 2 / 2))


def _compute_partial_integral(theta, difficulty, discrimination, the_sign):
    partial_int = np.ones((the_sign.shape[1], theta.size))
    for ndx in range(the_sign.shape[0]):
        kernel = the_sign[ndx][:, None] * discrimination[ndx] * (theta[None, :] - difficulty[ndx])
        partial_int *= 1.0 / (1.0 + np.exp(-kernel))
    return partial_int


def twopl_mml_nll_np(discrimination, difficulty, responses):
    the_sign = convert_responses_to_kernel_sign(responses)
    partial_int = _compute_partial_integral(QUAD_THETA, difficulty, discrimination, the_sign)
    return -np.sum(np.log(partial_int @ QUAD_WEIGHTS))


# forms of girth (github.com/eribean/girth): graded response model, category boundaries in loops
def grm_nll_nb(discrimination, thresholds, thetas, responses):
    n_items, n_people = responses.shape
    n_thr = thresholds.shape[1]
    nll = 0.0
    for i in range(n_items):
        for j in range(n_people):
            k = responses[i, j]
            upper = 1.0 if k == 0 else 1.0 / (1.0 + math.exp(
                -discrimination[i] * (thetas[j] - thresholds[i, k - 1])))
            lower = 0.0 if k == n_thr else 1.0 / (1.0 + math.exp(
                -discrimination[i] * (thetas[j] - thresholds[i, k])))
            nll -= math.log(upper - lower)
    return nll


# forms of girth (github.com/eribean/girth): partial credit model, cumsum then softmax over categories
def pcm_nll_np(discrimination, deltas, thetas, responses):
    kernel = discrimination[:, None, None] * (thetas[None, :, None] - deltas[:, None, :])
    cum = np.concatenate((np.zeros(kernel.shape[:2] + (1,)), np.cumsum(kernel, axis=2)), axis=2)
    cum = cum - cum.max(axis=2, keepdims=True)
    logp = cum - np.log(np.exp(cum).sum(axis=2, keepdims=True))
    picked = np.take_along_axis(logp, responses[:, :, None], axis=2)
    return -picked.sum()


# forms of girth (github.com/eribean/girth): three-parameter logistic with a guessing floor
def threepl_nll_np(discrimination, difficulty, guessing, thetas, responses):
    prob = guessing[:, None] + (1 - guessing[:, None]) * irt_evaluation(difficulty,
                                                                          discrimination, thetas)
    return -np.sum(responses * np.log(prob) + (1 - responses) * np.log(1 - prob))


# forms of girth (github.com/eribean/girth): expected a posteriori abilities, kw quadrature options
def ability_eap(dataset, difficulty, discrimination, options=None):
    if options is None:
        options = {"quadrature_n": 21, "quadrature_bounds": (-4, 4)}
    lo, hi = options["quadrature_bounds"]
    theta = np.linspace(lo, hi, options["quadrature_n"])
    prior = np.exp(-theta ** 2 / 2)
    the_sign = convert_responses_to_kernel_sign(dataset)
    partial_int = _compute_partial_integral(theta, difficulty, discrimination, the_sign)
    posterior = partial_int * prior
    return np.sum(posterior * theta, axis=1) / np.sum(posterior, axis=1)


def eap_spread_np(difficulty, discrimination, dataset):
    abilities = ability_eap(dataset, difficulty, discrimination)
    return np.sum(abilities ** 2)


# forms of girth (github.com/eribean/girth): maximum-likelihood ability by Newton per person
def ability_mle_nb(discrimination, difficulty, responses, n_iter=8):
    n_items, n_people = responses.shape
    total = 0.0
    for j in range(n_people):
        theta = 0.0
        for _ in range(n_iter):
            grad = 0.0
            hess = 0.0
            for i in range(n_items):
                p = 1.0 / (1.0 + math.exp(-discrimination[i] * (theta - difficulty[i])))
                grad += discrimination[i] * (responses[i, j] - p)
                hess -= discrimination[i] ** 2 * p * (1 - p)
            grad -= theta  # a N(0, 1) prior keeps all-correct patterns finite
            hess -= 1.0
            theta -= grad / hess
        total += theta * (j + 1)
    return total


# ---- reinforcement learning --------------------------------------------------------------------

# forms of gym (github.com/openai/gym): cart-pole step with tuple-unpacked state, linear policy
GRAVITY, MASSCART, MASSPOLE, LENGTH, FORCE_MAG, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TOTAL_MASS = MASSPOLE + MASSCART
POLEMASS_LENGTH = MASSPOLE * LENGTH


def cartpole_step(state, force):
    x, x_dot, theta, theta_dot = state
    costheta = math.cos(theta)
    sintheta = math.sin(theta)
    temp = (force + POLEMASS_LENGTH * theta_dot ** 2 * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        LENGTH * (4.0 / 3.0 - MASSPOLE * costheta ** 2 / TOTAL_MASS))
    xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    x = x + TAU * x_dot
    x_dot = x_dot + TAU * xacc
    theta = theta + TAU * theta_dot
    theta_dot = theta_dot + TAU * thetaacc
    return np.array((x, x_dot, theta, theta_dot))


def cartpole_rollout_cost(policy_w, state0, steps=10):
    state = state0
    cost = 0.0
    for _ in range(steps):
        force = FORCE_MAG * np.tanh(policy_w @ state)
        state = cartpole_step(state, force)
        cost += state[2] ** 2 + 0.1 * state[0] ** 2
    return cost


# forms of gym (github.com/openai/gym): pendulum with angle_normalize, clipped torque and speed
def angle_normalize(x):
    return ((x + np.pi) % (2 * np.pi)) - np.pi


def pendulum_rollout_cost(k_p, k_d, th0, thdot0, max_speed=8, max_torque=2.0, dt=0.05, g=10.0):
    th, thdot = th0, thdot0
    m = 1.0
    l = 1.0
    total = 0.0
    for _ in range(8):
        u = np.clip(-k_p * angle_normalize(th) - k_d * thdot, -max_torque, max_torque)
        costs = angle_normalize(th) ** 2 + .1 * thdot ** 2 + .001 * (u ** 2)
        newthdot = thdot + (3 * g / (2 * l) * np.sin(th) + 3. / (m * l ** 2) * u) * dt
        newthdot = np.clip(newthdot, -max_speed, max_speed)
        th = th + newthdot * dt
        thdot = newthdot
        total += costs
    return total


# forms of stable-baselines3 (github.com/DLR-RM/stable-baselines3): GAE over reversed(range)
def compute_gae(rewards, values, episode_starts, last_values, dones, gamma=0.99,
                gae_lambda=0.95):
    buffer_size = rewards.shape[0]
    advantages = np.zeros(buffer_size)
    last_gae_lam = 0
    for step in reversed(range(buffer_size)):
        if step == buffer_size - 1:
            next_non_terminal = 1.0 - dones
            next_values = last_values
        else:
            next_non_terminal = 1.0 - episode_starts[step + 1]
            next_values = values[step + 1]
        delta = rewards[step] + gamma * next_values * next_non_terminal - values[step]
        last_gae_lam = delta + gamma * gae_lambda * next_non_terminal * last_gae_lam
        advantages[step] = last_gae_lam
    returns = advantages + values
    return np.sum(advantages ** 2) + 0.5 * np.sum(returns)


# forms of spinningup (github.com/openai/spinningup): discount_cumsum through scipy.signal.lfilter
def discount_cumsum(x, discount):
    return scipy.signal.lfilter([1], [1, float(-discount)], x[::-1], axis=0)[::-1]


def reward_to_go_loss(rewards, values, gamma=0.99):
    ret = discount_cumsum(rewards, gamma)
    return np.mean((ret - values) ** 2)


# forms of stable-baselines3 (github.com/DLR-RM/stable-baselines3): PPO clipped surrogate
def ppo_clip_loss_np(logits, actions, old_log_prob, advantages, clip_range=0.2):
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    log_prob = log_probs[np.arange(actions.shape[0]), actions]
    ratio = np.exp(log_prob - old_log_prob)
    policy_loss_1 = advantages * ratio
    policy_loss_2 = advantages * np.clip(ratio, 1 - clip_range, 1 + clip_range)
    policy_loss = -np.minimum(policy_loss_1, policy_loss_2).mean()
    entropy = -np.sum(np.exp(log_probs) * log_probs, axis=1).mean()
    return policy_loss - 0.01 * entropy


# forms of spinningup (github.com/openai/spinningup): REINFORCE with a softmax policy, loops
def reinforce_loss_nb(theta, features, actions, returns):
    T, n_actions, d = features.shape
    loss = 0.0
    for t in range(T):
        prefs = np.zeros(n_actions)
        for a in range(n_actions):
            for k in range(d):
                prefs[a] += theta[k] * features[t, a, k]
        m = prefs.max()
        lse = m + math.log(np.sum(np.exp(prefs - m)))
        loss -= (prefs[actions[t]] - lse) * returns[t]
    return loss / T


# forms of spinningup (github.com/openai/spinningup): diagonal Gaussian likelihood helper
EPS = 1e-8


def gaussian_likelihood(x, mu, log_std):
    pre_sum = -0.5 * (((x - mu) / (np.exp(log_std) + EPS)) ** 2 + 2 * log_std + np.log(2 * np.pi))
    return np.sum(pre_sum, axis=1)


def gaussian_policy_loss_np(W, log_std, obs, act, adv):
    mu = np.tanh(obs @ W)
    logp = gaussian_likelihood(act, mu, log_std)
    entropy = np.sum(log_std + 0.5 * np.log(2.0 * np.pi * np.e))
    return -np.mean(logp * adv) - 0.01 * entropy


# forms of stable-baselines3 (github.com/DLR-RM/stable-baselines3): SAC twin-Q soft target
def sac_critic_loss_np(q1, q2, next_q1, next_q2, next_log_prob, rewards, dones, ent_coef=0.2,
                       gamma=0.99):
    next_q_values = np.minimum(next_q1, next_q2)
    next_q_values = next_q_values - ent_coef * next_log_prob
    target_q_values = rewards + (1 - dones) * gamma * next_q_values
    current_q_values = (q1, q2)
    critic_loss = 0.5 * sum(np.mean((current_q - target_q_values) ** 2)
                            for current_q in current_q_values)
    return critic_loss


# forms of gym (github.com/openai/gym): mountain car with math.cos, clipped velocity and position
def mountain_car_return(k, position0, velocity0, force=0.001, gravity=0.0025):
    min_position, max_position, max_speed = -1.2, 0.6, 0.07
    position, velocity = position0, velocity0
    total = 0.0
    for _ in range(10):
        action = math.tanh(k * velocity) + 1
        velocity += (action - 1) * force + math.cos(3 * position) * (-gravity)
        velocity = np.clip(velocity, -max_speed, max_speed)
        position += velocity
        position = np.clip(position, min_position, max_position)
        if position == min_position and velocity < 0:
            velocity = 0
        total += position
    return total


# ---- optics ------------------------------------------------------------------------------------

# forms of tmm (github.com/sbyrnes321/tmm): coherent transfer matrices in complex arithmetic
def make_2x2_array(a, b, c, d, dtype=float):
    my_array = np.empty((2, 2), dtype=dtype)
    my_array[0, 0] = a
    my_array[0, 1] = b
    my_array[1, 0] = c
    my_array[1, 1] = d
    return my_array


def interface_r(polarization, n_i, n_f, th_i, th_f):
    if polarization == 's':
        return ((n_i * np.cos(th_i) - n_f * np.cos(th_f))
                / (n_i * np.cos(th_i) + n_f * np.cos(th_f)))
    elif polarization == 'p':
        return ((n_f * np.cos(th_i) - n_i * np.cos(th_f))
                / (n_f * np.cos(th_i) + n_i * np.cos(th_f)))
    raise ValueError("Polarization must be 's' or 'p'")


def interface_t(polarization, n_i, n_f, th_i, th_f):
    if polarization == 's':
        return 2 * n_i * np.cos(th_i) / (n_i * np.cos(th_i) + n_f * np.cos(th_f))
    elif polarization == 'p':
        return 2 * n_i * np.cos(th_i) / (n_f * np.cos(th_i) + n_i * np.cos(th_f))
    raise ValueError("Polarization must be 's' or 'p'")


def coh_tmm_R(n_list, d_list, th_0, lam_vac, pol='s'):
    n_list = np.array(n_list, dtype=complex)
    num_layers = n_list.size
    th_list = np.arcsin(n_list[0] * np.sin(th_0) / n_list)
    kz_list = 2 * np.pi * n_list * np.cos(th_list) / lam_vac
    delta = kz_list * d_list
    t_list = np.zeros((num_layers, num_layers), dtype=complex)
    r_list = np.zeros((num_layers, num_layers), dtype=complex)
    for i in range(num_layers - 1):
        t_list[i, i + 1] = interface_t(pol, n_list[i], n_list[i + 1], th_list[i], th_list[i + 1])
        r_list[i, i + 1] = interface_r(pol, n_list[i], n_list[i + 1], th_list[i], th_list[i + 1])
    M_list = np.zeros((num_layers, 2, 2), dtype=complex)
    for i in range(1, num_layers - 1):
        M_list[i] = (1 / t_list[i, i + 1]) * np.dot(
            make_2x2_array(np.exp(-1j * delta[i]), 0, 0, np.exp(1j * delta[i]), dtype=complex),
            make_2x2_array(1, r_list[i, i + 1], r_list[i, i + 1], 1, dtype=complex))
    Mtilde = make_2x2_array(1, 0, 0, 1, dtype=complex)
    for i in range(1, num_layers - 1):
        Mtilde = np.dot(Mtilde, M_list[i])
    Mtilde = np.dot(make_2x2_array(1, r_list[0, 1], r_list[0, 1], 1, dtype=complex)
                    / t_list[0, 1], Mtilde)
    r = Mtilde[1, 0] / Mtilde[0, 0]
    return abs(r) ** 2


def tmm_stack_R(n_layers, d_layers, lam_vac):
    n_list = np.concatenate(([1.0], n_layers, [1.52]))
    d_list = np.concatenate(([np.inf], d_layers, [np.inf]))
    return coh_tmm_R(n_list, d_list, 0.1, lam_vac)


# forms of tmm (github.com/sbyrnes321/tmm): lossless normal incidence, real and imaginary parts kept
def quarter_stack_reflectance_nb(n_layers, d_layers, wavelengths, n_sub=1.52, n_in=1.0):
    total = 0.0
    for w in range(wavelengths.shape[0]):
        lam = wavelengths[w]
        m11r, m12i, m21i, m22r = 1.0, 0.0, 0.0, 1.0
        for j in range(n_layers.shape[0]):
            delta = 2 * math.pi * n_layers[j] * d_layers[j] / lam
            c, s = math.cos(delta), math.sin(delta)
            a11r, a12i, a21i, a22r = c, s / n_layers[j], n_layers[j] * s, c
            m11r, m12i, m21i, m22r = (m11r * a11r - m12i * a21i, m11r * a12i + m12i * a22r,
                                      m21i * a11r + m22r * a21i, -m21i * a12i + m22r * a22r)
        num_r = n_in * m11r - n_sub * m22r
        num_i = n_in * n_sub * m12i - m21i
        den_r = n_in * m11r + n_sub * m22r
        den_i = n_in * n_sub * m12i + m21i
        total += (num_r ** 2 + num_i ** 2) / (den_r ** 2 + den_i ** 2)
    return total


# forms of tmm (github.com/sbyrnes321/tmm): Fresnel R and T at one interface, unpolarised average
def fresnel_unpolarized_np(n1, n2, th_i):
    cos_i = np.cos(th_i)
    sin_t = n1 / n2 * np.sin(th_i)
    cos_t = np.sqrt(1 - sin_t ** 2)
    rs = (n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t)
    rp = (n2 * cos_i - n1 * cos_t) / (n2 * cos_i + n1 * cos_t)
    R = 0.5 * (rs ** 2 + rp ** 2)
    T = 1 - R
    return np.sum(W6[:R.shape[0]] * R) + 0.1 * np.sum(T ** 2)


# forms of RayTracing (github.com/DCC-Lab/RayTracing): ABCD matrices in a list, reduce with matmul
def abcd_system_np(curvatures, thicknesses, n_glass):
    mats = []
    n_before = 1.0
    for k, (c, t) in enumerate(zip(curvatures, thicknesses)):
        n_after = n_glass if k % 2 == 0 else 1.0
        refraction = np.array([[1.0, 0.0], [(n_before - n_after) * c / n_after,
                                            n_before / n_after]])
        mats.append(refraction)
        mats.append(np.array([[1.0, t], [0.0, 1.0]]))
        n_before = n_after
    system = functools.reduce(lambda a, b: b @ a, mats)
    efl = -1 / system[1, 0]
    return (efl - 50.0) ** 2 + system[0, 0] ** 2


# forms of rayoptics (github.com/mjhoptics/ray-optics): Sellmeier index fit, group index
def sellmeier_n(wvl, B, C):
    w2 = wvl ** 2
    n2 = 1 + np.sum(B[None, :] * w2[:, None] / (w2[:, None] - C[None, :]), axis=1)
    return np.sqrt(n2)


def sellmeier_fit_np(B, C, wvl, n_measured):
    n = sellmeier_n(wvl, B, C)
    dn = -np.sum(B[None, :] * C[None, :] * wvl[:, None] / (wvl[:, None] ** 2 - C[None, :]) ** 2,
                 axis=1) / n
    n_group = n - wvl * dn
    return np.sum((n - n_measured) ** 2) * 1e4 + 1e-3 * np.sum(n_group)


# forms of rayoptics (github.com/mjhoptics/ray-optics): exact meridional trace through spheres
def trace_meridional_nb(curvatures, thicknesses, indices, heights, slope0=0.0):
    spot = 0.0
    for k in range(heights.shape[0]):
        y = heights[k]
        z = 0.0
        uy = slope0
        uz = math.sqrt(1.0 - uy * uy)
        n1 = 1.0
        zs = 0.0
        for s in range(curvatures.shape[0]):
            c = curvatures[s]
            # intersection of the ray with the sphere of curvature c whose vertex is at zs
            dz = z - zs
            bb = uz - c * (y * uy + dz * uz)
            cc = c * (y * y + dz * dz) - 2.0 * dz
            t = cc / (bb + math.sqrt(bb * bb - c * cc))
            y += t * uy
            z += t * uz
            # surface normal and Snell refraction in vector form
            ny, nz = -c * y, 1.0 - c * (z - zs)
            n2 = indices[s]
            mu = n1 / n2
            cosi = uy * ny + uz * nz
            cost = math.sqrt(1.0 - mu * mu * (1.0 - cosi * cosi))
            g = cost - mu * cosi
            uy, uz = mu * uy + g * ny, mu * uz + g * nz
            n1 = n2
            zs += thicknesses[s]
        t_img = (zs - z) / uz
        spot += (y + t_img * uy) ** 2
    return spot


# ---- sports ratings ----------------------------------------------------------------------------

# forms of elo (github.com/sublee/elo): expected score helper, sequential updates over games
def expect(rating, other_rating, scale=400.0):
    diff = float(other_rating) - float(rating)
    f_factor = 2 * scale
    return 1. / (1 + 10 ** (diff / f_factor))


def elo_history_nb(ratings, winners, losers, k_factor=32.0):
    r = ratings.copy()
    for g in range(winners.shape[0]):
        w, l = winners[g], losers[g]
        e_w = expect(r[w], r[l])
        r[w] = r[w] + k_factor * (1.0 - e_w)
        r[l] = r[l] - k_factor * (1.0 - e_w)
    return np.sum(W6[:r.shape[0]] * r)


# forms of elo-style rating fits (github.com/fivethirtyeight/nfl-elo-game): home advantage, log loss
def elo_logloss_np(ratings, home, away, home_won, hfa=65.0):
    dr = ratings[home] + hfa - ratings[away]
    p_home = 1.0 / (10 ** (-dr / 400.0) + 1)
    return -np.mean(home_won * np.log(p_home) + (1 - home_won) * np.log(1 - p_home))


# forms of glicko2 (github.com/sublee/glicko2): volatility by the Illinois iteration, while loop
EPSILON = 1e-10


def glicko2_rate(mu, phi, sigma, opp_mu, opp_phi, scores, tau=0.5):
    impacts = 1 / np.sqrt(1 + 3 * opp_phi ** 2 / np.pi ** 2)
    expects = 1 / (1 + np.exp(-impacts * (mu - opp_mu)))
    variance = 1 / np.sum(impacts ** 2 * expects * (1 - expects))
    difference = np.sum(impacts * (scores - expects)) * variance
    delta_sq = difference ** 2
    alpha = np.log(sigma ** 2)

    def f(x):
        tmp = phi ** 2 + variance + np.exp(x)
        a = np.exp(x) * (delta_sq - tmp) / (2 * tmp ** 2)
        b = (x - alpha) / (tau ** 2)
        return a - b

    a = alpha
    if delta_sq > phi ** 2 + variance:
        b = np.log(delta_sq - phi ** 2 - variance)
    else:
        k = 1
        while f(alpha - k * np.sqrt(tau ** 2)) < 0:
            k += 1
        b = alpha - k * np.sqrt(tau ** 2)
    f_a, f_b = f(a), f(b)
    while abs(b - a) > EPSILON:
        c = a + (a - b) * f_a / (f_b - f_a)
        f_c = f(c)
        if f_c * f_b < 0:
            a, f_a = b, f_b
        else:
            f_a /= 2
        b, f_b = c, f_c
    sigma_new = np.exp(a / 2)
    phi_star = np.sqrt(phi ** 2 + sigma_new ** 2)
    phi_new = 1 / np.sqrt(1 / phi_star ** 2 + 1 / variance)
    mu_new = mu + phi_new ** 2 * np.sum(impacts * (scores - expects))
    return mu_new + phi_new + sigma_new


# forms of trueskill (github.com/sublee/trueskill): v and w from the normal pdf / cdf, 1-vs-1 update
def v_win(diff, draw_margin):
    x = diff - draw_margin
    denom = scipy.stats.norm.cdf(x)
    return scipy.stats.norm.pdf(x) / denom


def w_win(diff, draw_margin):
    x = diff - draw_margin
    v = v_win(diff, draw_margin)
    return v * (v + x)


def trueskill_1v1(mu_w, sigma_w, mu_l, sigma_l, beta=25 / 6, draw_margin=0.0):
    c = math.sqrt(2 * beta ** 2 + sigma_w ** 2 + sigma_l ** 2)
    t = (mu_w - mu_l) / c
    v = v_win(t, draw_margin / c)
    w = w_win(t, draw_margin / c)
    new_mu_w = mu_w + sigma_w ** 2 / c * v
    new_mu_l = mu_l - sigma_l ** 2 / c * v
    new_sigma_w = sigma_w * math.sqrt(1 - sigma_w ** 2 / c ** 2 * w)
    new_sigma_l = sigma_l * math.sqrt(1 - sigma_l ** 2 / c ** 2 * w)
    return new_mu_w + 2 * new_mu_l + 3 * new_sigma_w + 4 * new_sigma_l


# forms of choix (github.com/lucasmaystre/choix): Bradley-Terry log-likelihood with logaddexp
def bradley_terry_nll_np(params, winners, losers, alpha=0.01):
    diff = params[winners] - params[losers]
    return np.sum(np.logaddexp(0, -diff)) + alpha * np.sum(params ** 2)


# forms of sports rating scripts (Massey method): matrix built game by game, last row replaced
def massey_ratings_nb(margins, home, away, n_teams):
    M = np.zeros((n_teams, n_teams))
    p = np.zeros(n_teams)
    for g in range(margins.shape[0]):
        i, j = home[g], away[g]
        M[i, i] += 1
        M[j, j] += 1
        M[i, j] -= 1
        M[j, i] -= 1
        p[i] += margins[g]
        p[j] -= margins[g]
    M[-1, :] = 1.0
    p[-1] = 0.0
    r = np.linalg.solve(M, p)
    return np.sum(W6[:n_teams] * r)


# forms of penaltyblog (github.com/martineastwood/penaltyblog): Dixon-Coles with a low-score tau
def _dc_tau(x, y, lambda_x, mu_y, rho):
    if x == 0 and y == 0:
        return 1 - lambda_x * mu_y * rho
    elif x == 0 and y == 1:
        return 1 + lambda_x * rho
    elif x == 1 and y == 0:
        return 1 + mu_y * rho
    elif x == 1 and y == 1:
        return 1 - rho
    return 1.0


def dixon_coles_nll_nb(attack, defence, home_adv, rho, home, away, goals_home, goals_away):
    nll = 0.0
    for g in range(home.shape[0]):
        lam = math.exp(attack[home[g]] - defence[away[g]] + home_adv)
        mu = math.exp(attack[away[g]] - defence[home[g]])
        x, y = goals_home[g], goals_away[g]
        ll = (x * math.log(lam) - lam - math.lgamma(x + 1)
              + y * math.log(mu) - mu - math.lgamma(y + 1))
        nll -= ll + math.log(_dc_tau(x, y, lam, mu, rho))
    return nll


# ---- pharmacokinetics --------------------------------------------------------------------------

# forms of chi (github.com/DavAug/chi): one-compartment oral model + constant-and-multiplicative error
def one_compartment_oral(times, ka, ke, v, dose):
    return dose * ka / (v * (ka - ke)) * (np.exp(-ke * times) - np.exp(-ka * times))


def combined_error_loglik(observations, model_output, sigma_base, sigma_rel):
    sigma_tot = sigma_base + sigma_rel * model_output
    return np.sum(-np.log(2 * np.pi) / 2 - np.log(sigma_tot)
                  - (observations - model_output) ** 2 / (2 * sigma_tot ** 2))


def pk_oral_nll_np(log_ka, log_ke, log_v, times, observations, dose=100.0):
    conc = one_compartment_oral(times, np.exp(log_ka), np.exp(log_ke), np.exp(log_v), dose)
    return -combined_error_loglik(observations, conc, 0.05, 0.1)


# forms of PKPD scripts (superposition of doses): loop over dose events with continue
def multiple_dose_conc_nb(ka, ke, v, doses, dose_times, times):
    total = 0.0
    for j in range(times.shape[0]):
        c = 0.0
        for d in range(doses.shape[0]):
            if times[j] < dose_times[d]:
                continue
            dt = times[j] - dose_times[d]
            c += doses[d] * ka / (v * (ka - ke)) * (math.exp(-ke * dt) - math.exp(-ka * dt))
        total += c * (j + 1)
    return total


# forms of PKPD scripts (two-compartment IV bolus): macro constants from the micro ones
def two_compartment_iv_np(cl, v1, q, v2, times, dose=100.0):
    k10, k12, k21 = cl / v1, q / v1, q / v2
    s = k10 + k12 + k21
    root = np.sqrt(s ** 2 - 4 * k10 * k21)
    alpha, beta = (s + root) / 2, (s - root) / 2
    A = dose / v1 * (alpha - k21) / (alpha - beta)
    B = dose / v1 * (k21 - beta) / (alpha - beta)
    conc = A * np.exp(-alpha * times) + B * np.exp(-beta * times)
    auc = A / alpha + B / beta
    return np.sum(np.log(conc)) + 0.01 * auc


# forms of chi (github.com/DavAug/chi): sigmoid Emax pharmacodynamics with a Gaussian likelihood
def emax_nll_np(e0, emax, log_ec50, hill, conc, effect, sigma=0.5):
    ec50 = np.exp(log_ec50)
    pred = e0 + emax * conc ** hill / (ec50 ** hill + conc ** hill)
    return np.sum((effect - pred) ** 2) / (2 * sigma ** 2)


# forms of NCA scripts: linear-up / log-down trapezoids and a terminal slope by np.polyfit
def nca_auc_polyfit(conc, times):
    dc = conc[1:] - conc[:-1]
    dt = times[1:] - times[:-1]
    linear = 0.5 * (conc[1:] + conc[:-1]) * dt
    logdown = dc * dt / np.log(conc[1:] / conc[:-1])
    auc = np.sum(np.where(dc < 0, logdown, linear))
    slope, intercept = np.polyfit(times[-3:], np.log(conc[-3:]), 1)
    return auc + conc[-1] / -slope


# forms of NCA scripts: the same AUC with the terminal slope from a hand-written regression helper
def _lambda_z(times, conc, n_points=3):
    t = times[-n_points:]
    y = np.log(conc[-n_points:])
    tm = t.mean()
    return -np.sum((t - tm) * (y - y.mean())) / np.sum((t - tm) ** 2)


def nca_auc_inf_nb(conc, times):
    auc = 0.0
    for i in range(1, conc.shape[0]):
        dt = times[i] - times[i - 1]
        if conc[i] < conc[i - 1]:
            auc += (conc[i - 1] - conc[i]) * dt / math.log(conc[i - 1] / conc[i])
        else:
            auc += 0.5 * (conc[i - 1] + conc[i]) * dt
    return auc + conc[-1] / _lambda_z(times, conc)


# forms of PKPD scripts (zero-order infusion): piecewise in time, if / else per sample
def infusion_conc_nb(cl, v, rate, t_inf, times):
    ke = cl / v
    out = np.empty(times.shape[0])
    for i in range(times.shape[0]):
        t = times[i]
        if t <= t_inf:
            out[i] = rate / cl * (1 - math.exp(-ke * t))
        else:
            c_end = rate / cl * (1 - math.exp(-ke * t_inf))
            out[i] = c_end * math.exp(-ke * (t - t_inf))
    return np.sum(W8[:out.shape[0]] * out)


# forms of chi (github.com/DavAug/chi): population model, individual parameters from a dict config
def population_nll(log_typical, etas, weights, times, observations, covariates=None):
    if covariates is None:
        covariates = {"cl_exponent": 0.75, "v_exponent": 1.0, "ref_weight": 70.0}
    assert isinstance(covariates, dict)
    nll = 0.0
    for i, (eta, wt) in enumerate(zip(etas, weights)):
        scale = wt / covariates["ref_weight"]
        cl = np.exp(log_typical[0] + eta[0]) * scale ** covariates["cl_exponent"]
        v = np.exp(log_typical[1] + eta[1]) * scale ** covariates["v_exponent"]
        pred = 100.0 / v * np.exp(-cl / v * times)
        nll += 0.5 * np.sum((np.log(observations[i]) - np.log(pred)) ** 2) / 0.1 ** 2
        nll += 0.5 * np.sum(eta ** 2) / 0.3 ** 2
    return nll


# ---- traffic flow ------------------------------------------------------------------------------

# forms of flow (github.com/flow-project/flow): IDM controller acceleration with keyword parameters
def idm_accel(v, h, lead_vel, v0=30, T=1, a=1, b=1.5, delta=4, s0=2):
    s_star = s0 + np.maximum(0, v * T + v * (v - lead_vel) / (2 * np.sqrt(a * b)))
    return a * (1 - (v / v0) ** delta - (s_star / h) ** 2)


def idm_platoon_np(v, h, lead_vel, v0):
    acc = idm_accel(v, h, lead_vel, v0=v0)
    return np.sum(acc ** 2)


# forms of flow (github.com/flow-project/flow): ring road simulation, headways modulo the ring
def ring_road_nb(x0, v0_speeds, v_desired, length=60.0, dt=0.1, steps=8):
    n = x0.shape[0]
    x = x0.copy()
    v = v0_speeds.copy()
    for _ in range(steps):
        acc = np.empty(n)
        for i in range(n):
            lead = (i + 1) % n
            gap = (x[lead] - x[i]) % length - 4.0
            s_star = 2.0 + v[i] * 1.0 + v[i] * (v[i] - v[lead]) / (2.0 * math.sqrt(1.5))
            acc[i] = 1.0 * (1.0 - (v[i] / v_desired) ** 4 - (s_star / gap) ** 2)
        v = v + acc * dt
        x = x + v * dt
    return np.sum(v) + 0.01 * np.sum(x)


# forms of UXsim (github.com/toruseo/UXsim): LWR / cell transmission with demand and supply
def ctm_np(rho, v_free, w_back, rho_jam, inflow, dx=0.5, dt=0.01, steps=5):
    q_max = v_free * w_back * rho_jam / (v_free + w_back)
    for _ in range(steps):
        demand = np.minimum(v_free * rho, q_max)
        supply = np.minimum(w_back * (rho_jam - rho), q_max)
        flux = np.minimum(demand[:-1], supply[1:])
        flux_in = np.concatenate(([min(inflow, supply[0])], flux))
        flux_out = np.concatenate((flux, [demand[-1]]))
        rho = rho + dt / dx * (flux_in - flux_out)
    return np.sum(W6[:rho.shape[0]] * rho)


# forms of UXsim (github.com/toruseo/UXsim): the same cell transmission as explicit loops
def ctm_nb(rho0, v_free, w_back, rho_jam, inflow, dx=0.5, dt=0.01, steps=5):
    n = rho0.shape[0]
    rho = rho0.copy()
    q_max = v_free * w_back * rho_jam / (v_free + w_back)
    for _ in range(steps):
        flux = np.zeros(n + 1)
        flux[0] = min(inflow, w_back * (rho_jam - rho[0]), q_max)
        for i in range(n - 1):
            flux[i + 1] = min(v_free * rho[i], q_max, w_back * (rho_jam - rho[i + 1]))
        flux[n] = min(v_free * rho[n - 1], q_max)
        for i in range(n):
            rho[i] += dt / dx * (flux[i] - flux[i + 1])
    return np.sum(W6[:n] * rho)


# forms of aequilibrae (github.com/AequilibraE/aequilibrae): BPR delay and the Beckmann objective
def bpr(link_flows, capacity, fftime, alpha=0.15, beta=4.0):
    return fftime * (1 + alpha * (link_flows / capacity) ** beta)


def beckmann_objective_np(link_flows, capacity, fftime, alpha=0.15, beta=4.0):
    integral = fftime * (link_flows + alpha * capacity / (beta + 1)
                         * (link_flows / capacity) ** (beta + 1))
    return np.sum(integral) + 0.001 * np.sum(bpr(link_flows, capacity, fftime, alpha, beta))


# forms of aequilibrae (github.com/AequilibraE/aequilibrae): logit route split, paths as a lambda arg
def logit_assignment_np(demand, path_costs, theta, cost_fn=lambda c: c):
    costs = cost_fn(path_costs)
    util = -theta * costs
    util = util - util.max()
    share = np.exp(util) / np.exp(util).sum()
    flows = demand * share
    return np.sum(flows * path_costs)


# forms of traffic simulation scripts (Gipps car following): min of two speeds, sqrt braking term
def gipps_follow_nb(v_lead, v0, gap0, a_max=1.7, b=-3.0, tau=0.7, s_lead=6.5, v_des=25.0):
    v = v0
    gap = gap0
    total = 0.0
    for t in range(v_lead.shape[0]):
        v_free = v + 2.5 * a_max * tau * (1 - v / v_des) * math.sqrt(0.025 + v / v_des)
        disc = b * b * tau * tau - b * (2 * (gap - s_lead) - v * tau - v_lead[t] ** 2 / -3.2)
        v_cong = b * tau + math.sqrt(disc)
        v_new = min(v_free, v_cong)
        gap += (v_lead[t] - 0.5 * (v + v_new)) * tau
        v = v_new
        total += v
    return total


# ---- structural mechanics ----------------------------------------------------------------------

# forms of anaStruct (github.com/ritchie46/anaStruct): truss stiffness assembled with np.ix_
def truss_compliance_np(areas, coords, elements, fixed_dofs, loads, E=210e3):
    ndof = 2 * coords.shape[0]
    K = np.zeros((ndof, ndof))
    for e, (i, j) in enumerate(elements):
        dxy = coords[j] - coords[i]
        L = np.linalg.norm(dxy)
        c, s = dxy / L
        k = E * areas[e] / L * np.outer([-c, -s, c, s], [-c, -s, c, s])
        dofs = [2 * i, 2 * i + 1, 2 * j, 2 * j + 1]
        K[np.ix_(dofs, dofs)] += k
    free = np.setdiff1d(np.arange(ndof), fixed_dofs)
    u = np.zeros(ndof)
    u[free] = np.linalg.solve(K[np.ix_(free, free)], loads[free])
    return loads @ u


# forms of PyNite (github.com/JWock82/PyNite): truss assembly and reduction in explicit loops
def truss_compliance_nb(areas, coords, elements, free, loads, E=210e3):
    ndof = 2 * coords.shape[0]
    K = np.zeros((ndof, ndof))
    for e in range(elements.shape[0]):
        i, j = elements[e, 0], elements[e, 1]
        dx = coords[j, 0] - coords[i, 0]
        dy = coords[j, 1] - coords[i, 1]
        L = math.sqrt(dx * dx + dy * dy)
        c, s = dx / L, dy / L
        v = np.array([-c, -s, c, s])
        dofs = np.array([2 * i, 2 * i + 1, 2 * j, 2 * j + 1])
        for a in range(4):
            for b in range(4):
                K[dofs[a], dofs[b]] += E * areas[e] / L * v[a] * v[b]
    nf = free.shape[0]
    Kff = np.empty((nf, nf))
    ff = np.empty(nf)
    for a in range(nf):
        ff[a] = loads[free[a]]
        for b in range(nf):
            Kff[a, b] = K[free[a], free[b]]
    u = np.linalg.solve(Kff, ff)
    return ff @ u


# forms of anaStruct (github.com/ritchie46/anaStruct): Euler-Bernoulli cantilever, element matrices
def beam_stiffness(EI, L):
    return EI / L ** 3 * np.array([[12, 6 * L, -12, 6 * L],
                                   [6 * L, 4 * L ** 2, -6 * L, 2 * L ** 2],
                                   [-12, -6 * L, 12, -6 * L],
                                   [6 * L, 2 * L ** 2, -6 * L, 4 * L ** 2]])


def cantilever_tip_np(EI_segments, length, tip_load):
    n = EI_segments.shape[0]
    L = length / n
    K = np.zeros((2 * n + 2, 2 * n + 2))
    for e in range(n):
        K[2 * e:2 * e + 4, 2 * e:2 * e + 4] += beam_stiffness(EI_segments[e], L)
    f = np.zeros(2 * n + 2)
    f[-2] = tip_load
    u = np.linalg.solve(K[2:, 2:], f[2:])
    return u[-2] + 0.1 * u[-1]


# forms of OpenSeesPy material scripts: bilinear steel, np.where on the yield strain
def bilinear_energy_np(strain, E, fy, hardening=0.01):
    eps_y = fy / E
    stress = np.where(np.abs(strain) <= eps_y, E * strain,
                      np.sign(strain) * (fy + hardening * E * (np.abs(strain) - eps_y)))
    return np.sum(stress * strain) / 2 / 1e3


# forms of sectionproperties (github.com/robbievanleeuwen/section-properties): von Mises, principal
def von_mises_np(sig_xx, sig_yy, sig_xy):
    vm = np.sqrt(sig_xx ** 2 - sig_xx * sig_yy + sig_yy ** 2 + 3 * sig_xy ** 2)
    centre = 0.5 * (sig_xx + sig_yy)
    radius = np.sqrt((0.5 * (sig_xx - sig_yy)) ** 2 + sig_xy ** 2)
    sig_1, sig_2 = centre + radius, centre - radius
    return np.sum(vm) + 0.1 * np.sum(sig_1 - sig_2)


# forms of structural design scripts: buckling utilisation, end condition chosen by a string
K_FACTORS = {"pinned": 1.0, "fixed": 0.5, "fixed-pinned": 0.7, "cantilever": 2.0}


def buckling_utilisation(axial, I, lengths, E=210e3, end_condition="pinned"):
    k = K_FACTORS[end_condition]
    p_cr = np.pi ** 2 * E * I / (k * lengths) ** 2
    return np.sum((axial / p_cr) ** 2)


# forms of anaStruct (github.com/ritchie46/anaStruct): shear building modes via scipy.linalg.eigh
def shear_building_fundamental(k_storeys, m_storeys):
    n = k_storeys.shape[0]
    K = np.zeros((n, n))
    for i in range(n):
        K[i, i] += k_storeys[i]
        if i + 1 < n:
            K[i, i] += k_storeys[i + 1]
            K[i, i + 1] -= k_storeys[i + 1]
            K[i + 1, i] -= k_storeys[i + 1]
    M = np.diag(m_storeys)
    w2, modes = scipy.linalg.eigh(K, M)
    return np.sqrt(w2[0]) / (2 * np.pi)


# ---- computer graphics -------------------------------------------------------------------------

# forms of smplx (github.com/vchoutas/smplx): batch Rodrigues, then linear blend skinning by einsum
def batch_rodrigues(rot_vecs, epsilon=1e-8):
    angle = np.linalg.norm(rot_vecs + 1e-8, axis=1, keepdims=True)
    rot_dir = rot_vecs / angle
    cos = np.cos(angle)[:, :, None]
    sin = np.sin(angle)[:, :, None]
    rx, ry, rz = rot_dir[:, 0], rot_dir[:, 1], rot_dir[:, 2]
    zeros = np.zeros_like(rx)
    K = np.stack([zeros, -rz, ry, rz, zeros, -rx, -ry, rx, zeros], axis=1).reshape(-1, 3, 3)
    ident = np.eye(3)[None]
    return ident + sin * K + (1 - cos) * np.matmul(K, K)


def lbs_np(rot_vecs, skin_logits, vertices, joints, targets):
    R = batch_rodrigues(rot_vecs)
    t = joints - np.einsum('jab,jb->ja', R, joints)
    weights = np.exp(skin_logits) / np.exp(skin_logits).sum(axis=1, keepdims=True)
    T_R = np.einsum('vj,jab->vab', weights, R)
    T_t = weights @ t
    posed = np.einsum('vab,vb->va', T_R, vertices) + T_t
    return np.sum((posed - targets) ** 2)


# forms of trimesh (github.com/mikedh/trimesh): ray-sphere intersection, hit mask and clamped root
def ray_sphere_np(origins, directions, center, radius):
    d = directions / np.linalg.norm(directions, axis=1)[:, None]
    oc = origins - center
    b = np.einsum('ij,ij->i', oc, d)
    c = np.einsum('ij,ij->i', oc, oc) - radius ** 2
    disc = b ** 2 - c
    hit = disc > 0
    t = -b - np.sqrt(np.maximum(disc, 0))
    points = origins + d * t[:, None]
    normals = (points - center) / radius
    shade = np.where(hit, np.maximum(normals @ np.array([0.0, 0.0, -1.0]), 0), 0.0)
    return np.sum(shade) + 0.01 * np.sum(np.where(hit, t, 0.0))


# forms of tinyrenderer-style shaders: Blinn-Phong per pixel, normalise helper, max(0, .)
def _normalize(v):
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return v[0] / n, v[1] / n, v[2] / n


def blinn_phong_nb(normals, light_dir, albedo, shininess=16.0):
    lx, ly, lz = _normalize(light_dir)
    hx, hy, hz = _normalize((lx, ly, lz + 1.0))
    total = 0.0
    for p in range(normals.shape[0]):
        nx, ny, nz = _normalize(normals[p])
        ndl = max(0.0, nx * lx + ny * ly + nz * lz)
        ndh = max(0.0, nx * hx + ny * hy + nz * hz)
        total += albedo[p] * ndl + ndh ** shininess
    return total


# forms of SoftRas (github.com/ShichenLiu/SoftRas): soft rasterisation by sigmoid of edge distances
def soft_raster_np(tri, pixels, sigma=0.05):
    a, b, c = tri[0], tri[1], tri[2]

    def edge(p0, p1, pts):
        e = p1 - p0
        return (e[0] * (pts[:, 1] - p0[1]) - e[1] * (pts[:, 0] - p0[0])) / np.linalg.norm(e)

    d = np.stack([edge(a, b, pixels), edge(b, c, pixels), edge(c, a, pixels)], axis=1)
    inside = 1 / (1 + np.exp(-d / sigma))
    coverage = np.prod(inside, axis=1)
    return np.sum(W8[:coverage.shape[0]] * coverage)


# forms of pyrender (github.com/mmatl/pyrender): look-at camera, perspective projection, divide by w
def look_at(eye, target, up):
    f = target - eye
    f = f / np.linalg.norm(f)
    s = np.cross(f, up)
    s = s / np.linalg.norm(s)
    u = np.cross(s, f)
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = s, u, -f
    view[:3, 3] = -view[:3, :3] @ eye
    return view


def perspective(yfov, aspect, znear=0.1, zfar=100.0):
    P = np.zeros((4, 4))
    P[0, 0] = 1.0 / (aspect * np.tan(yfov / 2.0))
    P[1, 1] = 1.0 / np.tan(yfov / 2.0)
    P[2, 2] = (zfar + znear) / (znear - zfar)
    P[2, 3] = 2 * zfar * znear / (znear - zfar)
    P[3, 2] = -1.0
    return P


def reprojection_error_np(eye, points, observed, yfov=np.pi / 3):
    V = look_at(eye, np.zeros(3), np.array([0.0, 1.0, 0.0]))
    P = perspective(yfov, 1.0)
    ph = np.concatenate([points, np.ones((points.shape[0], 1))], axis=1)
    clip = ph @ (P @ V).T
    ndc = clip[:, :2] / clip[:, 3:4]
    return np.sum((ndc - observed) ** 2)


# forms of trimesh.transformations (github.com/mikedh/trimesh): quaternion slerp with early returns
def quaternion_slerp(quat0, quat1, fraction, shortestpath=True):
    q0 = quat0 / np.linalg.norm(quat0)
    q1 = quat1 / np.linalg.norm(quat1)
    d = np.dot(q0, q1)
    if abs(abs(d) - 1.0) < 1e-12:
        return q0
    if shortestpath and d < 0.0:
        d = -d
        q1 = -q1
    angle = math.acos(d)
    isin = 1.0 / math.sin(angle)
    return (math.sin((1.0 - fraction) * angle) * isin) * q0 + \
        (math.sin(fraction * angle) * isin) * q1


def slerp_path_nb(quat0, quat1, fractions):
    total = 0.0
    for k in range(fractions.shape[0]):
        q = quaternion_slerp(quat0, quat1, fractions[k])
        total += q[0] * (k + 1) + q[3]
    return total


# forms of bezier (github.com/dhermes/bezier): de Casteljau with lists, stacked points, arc length
def de_casteljau(ctrl, t):
    pts = [ctrl[i] for i in range(ctrl.shape[0])]
    while len(pts) > 1:
        pts = [(1 - t) * p0 + t * p1 for p0, p1 in zip(pts[:-1], pts[1:])]
    return pts[0]


def bezier_length(ctrl, n=8):
    samples = np.stack([de_casteljau(ctrl, t) for t in np.linspace(0.0, 1.0, n)])
    return np.sum(np.linalg.norm(np.diff(samples, axis=0), axis=1))


# forms of colour-science / tone-mapping scripts: operator chosen by string, sRGB piecewise encoding
def tone_map_np(hdr, exposure, method="reinhard", gamma=2.4):
    x = hdr * exposure
    if method == "reinhard":
        mapped = x / (1 + x)
    elif method == "aces":
        mapped = np.clip((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0, 1)
    else:
        raise ValueError(method)
    srgb = np.where(mapped <= 0.0031308, 12.92 * mapped, 1.055 * mapped ** (1 / gamma) - 0.055)
    return np.sum(W8[:srgb.shape[0]] * srgb)


# ---- population genetics -----------------------------------------------------------------------

# forms of scikit-allel (github.com/cggh/scikit-allel): Hudson's Fst from allele counts, ratio of sums
def hudson_fst(ac1, ac2):
    ac1 = np.asarray(ac1, dtype='f8')
    ac2 = np.asarray(ac2, dtype='f8')
    an1 = np.sum(ac1, axis=1)
    an2 = np.sum(ac2, axis=1)
    p1 = ac1[:, 1] / an1
    p2 = ac2[:, 1] / an2
    within = (p1 * (1 - p1) * an1 / (an1 - 1)) + (p2 * (1 - p2) * an2 / (an2 - 1))
    num = (p1 - p2) ** 2 - within / 2 * (1 / an1 + 1 / an2)
    den = num + within
    return np.sum(num) / np.sum(den)


# forms of population-genetics teaching code: Wright-Fisher selection recursion with dominance
def selection_trajectory_nb(p0, s, h, generations=12):
    p = p0
    total = 0.0
    for _ in range(generations):
        q = 1.0 - p
        w11, w12, w22 = 1.0 + s, 1.0 + h * s, 1.0
        wbar = p * p * w11 + 2 * p * q * w12 + q * q * w22
        p = (p * p * w11 + p * q * w12) / wbar
        total += p
    return total


# forms of scikit-allel (github.com/cggh/scikit-allel): r-squared linkage from haplotype frequencies
def ld_r2_np(hap_freqs):
    pAB, pAb, paB = hap_freqs[:, 0], hap_freqs[:, 1], hap_freqs[:, 2]
    pA = pAB + pAb
    pB = pAB + paB
    D = pAB - pA * pB
    r2 = D ** 2 / (pA * (1 - pA) * pB * (1 - pB))
    return np.sum(r2)


# forms of scikit-allel (github.com/cggh/scikit-allel): Tajima's D, constants from generator sums
def tajima_d(theta_pi, S, n):
    a1 = sum(1 / i for i in range(1, n))
    a2 = sum(1 / (i ** 2) for i in range(1, n))
    b1 = (n + 1) / (3 * (n - 1))
    b2 = 2 * (n ** 2 + n + 3) / (9 * n * (n - 1))
    c1 = b1 - (1 / a1)
    c2 = b2 - ((n + 2) / (a1 * n)) + (a2 / (a1 ** 2))
    e1 = c1 / a1
    e2 = c2 / (a1 ** 2 + a2)
    d = theta_pi - (S / a1)
    return d / np.sqrt((e1 * S) + (e2 * S * (S - 1)))


# forms of scikit-allel (github.com/cggh/scikit-allel): Hardy-Weinberg with inbreeding, genotype counts
def hwe_inbreeding_nll_np(p, F, genotype_counts):
    q = 1 - p
    expected = np.stack([p ** 2 + F * p * q, 2 * p * q * (1 - F), q ** 2 + F * p * q], axis=1)
    return -np.sum(genotype_counts * np.log(expected))


# forms of msprime (github.com/tskit-dev/msprime): piecewise-constant size, expected pairwise TMRCA
def expected_tmrca_nb(sizes, epoch_starts):
    n_epochs = sizes.shape[0]
    survival = 1.0
    expected = 0.0
    for k in range(n_epochs):
        rate = 1.0 / (2.0 * sizes[k])
        start = epoch_starts[k]
        if k + 1 < n_epochs:
            span = epoch_starts[k + 1] - start
            p_stay = math.exp(-rate * span)
            expected += survival * ((start + 1.0 / rate) - p_stay * (start + span + 1.0 / rate))
            survival *= p_stay
        else:
            expected += survival * (start + 1.0 / rate)
    return expected


# forms of fastStructure (github.com/rajanil/fastStructure): admixture likelihood, softmax Q, expit P
def admixture_nll_np(q_logits, p_logits, genotypes):
    Q = np.exp(q_logits - q_logits.max(axis=1, keepdims=True))
    Q /= Q.sum(axis=1, keepdims=True)
    P = scipy.special.expit(p_logits)
    freq = Q @ P
    return -np.sum(genotypes * np.log(freq) + (2 - genotypes) * np.log(1 - freq))


# ---- battery models ----------------------------------------------------------------------------

# forms of PyBaMM (github.com/pybamm-team/PyBaMM): OCP parameter functions of stoichiometry
def graphite_ocp(sto):
    u_eq = (0.194 + 1.5 * np.exp(-120.0 * sto) + 0.0351 * np.tanh((sto - 0.286) / 0.083)
            - 0.0045 * np.tanh((sto - 0.849) / 0.119) - 0.035 * np.tanh((sto - 0.9233) / 0.05)
            - 0.0147 * np.tanh((sto - 0.5) / 0.034) - 0.102 * np.tanh((sto - 0.194) / 0.142))
    return u_eq


def nmc_ocp(sto):
    stretch = 1.062
    sto = stretch * sto
    u_eq = (2.16216 + 0.07645 * np.tanh(30.834 - 54.4806 * sto)
            + 2.1581 * np.tanh(52.294 - 50.294 * sto) - 0.14169 * np.tanh(11.0923 - 19.8543 * sto)
            + 0.2051 * np.tanh(1.4684 - 5.4888 * sto) + 0.2531 * np.tanh((-sto + 0.56478) / 0.1316)
            - 0.02167 * np.tanh((sto - 0.525) / 0.006))
    return u_eq


def ocv_curve_np(sto_n, sto_p):
    return np.sum(W8[:sto_n.shape[0]] * (nmc_ocp(sto_p) - graphite_ocp(sto_n)))


# forms of PyBaMM (github.com/pybamm-team/PyBaMM): parameters in a dict keyed by "name [units]"
def exchange_current_density(c_e, c_s_surf, c_s_max, T, param):
    m_ref = param["Negative electrode exchange-current density reference [A.m-2.m3.mol-1.5]"]
    E_r = param["Negative electrode reaction activation energy [J.mol-1]"]
    arrhenius = np.exp(E_r / 8.314 * (1 / 298.15 - 1 / T))
    return m_ref * arrhenius * c_e ** 0.5 * c_s_surf ** 0.5 * (c_s_max - c_s_surf) ** 0.5


def spm_voltage_np(i_app, c_s_n_surf, c_s_p_surf, T, param):
    F, R = 96485.33, 8.314
    c_e = param["Initial concentration in electrolyte [mol.m-3]"]
    j0_n = exchange_current_density(c_e, c_s_n_surf, 33133.0, T, param)
    j0_p = exchange_current_density(c_e, c_s_p_surf, 63104.0, T, param)
    eta_n = 2 * R * T / F * np.arcsinh(i_app / (2 * j0_n * param["a_n"]))
    eta_p = -2 * R * T / F * np.arcsinh(i_app / (2 * j0_p * param["a_p"]))
    V = nmc_ocp(c_s_p_surf / 63104.0) - graphite_ocp(c_s_n_surf / 33133.0) + eta_p - eta_n
    return np.sum(V)


# forms of PyBaMM (github.com/pybamm-team/PyBaMM): Thevenin equivalent circuit, exact RC update
def _ocv_poly(soc, coeffs=(3.2, 1.1, -1.4, 1.2)):
    return coeffs[0] + coeffs[1] * soc + coeffs[2] * soc ** 2 + coeffs[3] * soc ** 3


def thevenin_fit_nb(r0, r1, c1, current, v_meas, soc0=0.9, capacity=3600.0, dt=10.0):
    soc = soc0
    v_rc = 0.0
    sse = 0.0
    decay = math.exp(-dt / (r1 * c1))
    for k in range(current.shape[0]):
        soc -= current[k] * dt / capacity
        v_rc = v_rc * decay + r1 * (1 - decay) * current[k]
        v = _ocv_poly(soc) - v_rc - r0 * current[k]
        sse += (v - v_meas[k]) ** 2
    return sse


# forms of PyBaMM (github.com/pybamm-team/PyBaMM): SEI growth with sqrt(t) and an Arrhenius rate
def sei_capacity_fade_np(k0, Ea, times, temps, t_ref=298.15):
    rate = k0 * np.exp(-Ea / 8.314 * (1 / temps - 1 / t_ref))
    loss = rate * np.sqrt(times)
    return np.sum(loss) + np.max(loss)


# forms of PyBaMM (github.com/pybamm-team/PyBaMM): electrolyte conductivity as a parameter function
def electrolyte_conductivity(c_e, T):
    sigma_e = 0.1297 * (c_e / 1000) ** 3 - 2.51 * (c_e / 1000) ** 1.5 + 3.329 * (c_e / 1000)
    arrhenius = np.exp(34700 / 8.314 * (1 / 298.15 - 1 / T))
    return sigma_e * arrhenius


def ohmic_drop_np(c_e, T, i_app, thickness=1e-4):
    kappa = electrolyte_conductivity(c_e, T)
    return np.sum(i_app * thickness / kappa) * 1e3


# forms of liionpack (github.com/pybamm-team/liionpack): parallel cells share current, loop with lists
def parallel_pack_nb(ocvs, resistances, i_total):
    conductances = []
    for r in resistances:
        conductances.append(1.0 / r)
    g_sum = sum(conductances)
    v_term = (sum(g * u for g, u in zip(conductances, ocvs)) - i_total) / g_sum
    currents = [(u - v_term) * g for u, g in zip(ocvs, conductances)]
    heat = 0.0
    for i, (cur, r) in enumerate(zip(currents, resistances)):
        heat += cur ** 2 * r * (i + 1)
    return v_term + 0.1 * heat


# ---- astronomy photometry ----------------------------------------------------------------------

# forms of batman (github.com/lkreidberg/batman): transit depth by integration over stellar annuli
def _circle_overlap(r, p, d):
    if d >= r + p:
        return 0.0
    if d <= r - p:
        return math.pi * p * p
    if d <= p - r:
        return math.pi * r * r
    k0 = math.acos((p * p + d * d - r * r) / (2 * p * d))
    k1 = math.acos((r * r + d * d - p * p) / (2 * r * d))
    return p * p * k0 + r * r * k1 - 0.5 * math.sqrt(4 * d * d * r * r - (r * r + d * d - p * p) ** 2)


def transit_flux_nb(rp, u1, u2, ds, n_annuli=6):
    total = 0.0
    norm = 0.0
    for k in range(n_annuli):
        r_in = k / n_annuli
        r_out = (k + 1) / n_annuli
        r_mid = 0.5 * (r_in + r_out)
        mu = math.sqrt(1 - r_mid * r_mid)
        intensity = 1 - u1 * (1 - mu) - u2 * (1 - mu) ** 2
        norm += intensity * math.pi * (r_out ** 2 - r_in ** 2)
    for j in range(ds.shape[0]):
        blocked = 0.0
        for k in range(n_annuli):
            r_in = k / n_annuli
            r_out = (k + 1) / n_annuli
            r_mid = 0.5 * (r_in + r_out)
            mu = math.sqrt(1 - r_mid * r_mid)
            intensity = 1 - u1 * (1 - mu) - u2 * (1 - mu) ** 2
            blocked += intensity * (_circle_overlap(r_out, rp, ds[j]) - _circle_overlap(r_in, rp, ds[j]))
        total += (1 - blocked / norm) * (j + 1)
    return total


# forms of astropy (github.com/astropy/astropy): magnitudes, extinction and colour-term calibration
def calibrate_mags_np(zp, k_ext, color_term, inst_flux, airmass, color, catalog_mag):
    inst_mag = -2.5 * np.log10(inst_flux)
    mag = inst_mag + zp - k_ext * airmass + color_term * color
    return np.sum((mag - catalog_mag) ** 2)


# forms of photutils (github.com/astropy/photutils): aperture sum with a soft edge, annulus background
def aperture_photometry_nb(image, x0, y0, r_ap, r_in=3.5, r_out=4.5):
    ny, nx = image.shape
    ap_sum = 0.0
    ap_area = 0.0
    bkg_sum = 0.0
    bkg_n = 0
    for j in range(ny):
        for i in range(nx):
            r = math.sqrt((i - x0) ** 2 + (j - y0) ** 2)
            w = min(1.0, max(0.0, r_ap - r + 0.5))
            ap_sum += w * image[j, i]
            ap_area += w
            if r_in <= r < r_out:
                bkg_sum += image[j, i]
                bkg_n += 1
    bkg = bkg_sum / bkg_n
    return ap_sum - bkg * ap_area


# forms of photutils (github.com/astropy/photutils): integrated Gaussian PRF with erf, fit residuals
def integrated_gaussian(x, y, flux, x_0, y_0, sigma):
    return (flux / 4 * ((scipy.special.erf((x - x_0 + 0.5) / (np.sqrt(2) * sigma))
                         - scipy.special.erf((x - x_0 - 0.5) / (np.sqrt(2) * sigma)))
                        * (scipy.special.erf((y - y_0 + 0.5) / (np.sqrt(2) * sigma))
                           - scipy.special.erf((y - y_0 - 0.5) / (np.sqrt(2) * sigma)))))


def psf_fit_residual_np(params, image):
    flux, x_0, y_0, sigma = params
    yy, xx = np.mgrid[0:image.shape[0], 0:image.shape[1]]
    model = integrated_gaussian(xx, yy, flux, x_0, y_0, sigma)
    return np.sum((image - model) ** 2)


# forms of astropy (github.com/astropy/astropy): Sersic profile with b_n from gammaincinv
def sersic_profile_fit(amplitude, r_eff, n, r, intensity):
    bn = scipy.special.gammaincinv(2. * n, 0.5)
    model = amplitude * np.exp(-bn * ((r / r_eff) ** (1 / n) - 1))
    return np.sum((np.log(model) - np.log(intensity)) ** 2)


# forms of astropy (github.com/astropy/astropy): Sersic with the series approximation of b_n
def sersic_profile_approx_np(amplitude, r_eff, n, r, intensity):
    bn = 2 * n - 1 / 3 + 4 / (405 * n) + 46 / (25515 * n ** 2)
    model = amplitude * np.exp(-bn * ((r / r_eff) ** (1 / n) - 1))
    return np.sum((np.log(model) - np.log(intensity)) ** 2)


# forms of astropy (github.com/astropy/astropy): Lomb-Scargle "slow" method with the tau offset
def lombscargle_power_np(t, y, frequency, center_data=True):
    if center_data:
        y = y - y.mean()
    omega = 2 * np.pi * frequency
    wt = omega[:, None] * t[None, :]
    tau = np.arctan2(np.sum(np.sin(2 * wt), axis=1), np.sum(np.cos(2 * wt), axis=1)) / (2 * omega)
    arg = wt - (omega * tau)[:, None]
    cos, sin = np.cos(arg), np.sin(arg)
    power = 0.5 * ((cos @ y) ** 2 / np.sum(cos ** 2, axis=1)
                   + (sin @ y) ** 2 / np.sum(sin ** 2, axis=1))
    return np.sum(power / np.sum(y ** 2))


# forms of astropy (github.com/astropy/astropy): blackbody SED with expm1, scale fitted in log
H_PLANCK, C_LIGHT, K_BOLTZ = 6.62607015e-34, 2.99792458e8, 1.380649e-23


def blackbody_fit_np(temperature, log_scale, wavelengths_um, flux):
    lam = wavelengths_um * 1e-6
    log_boltz = H_PLANCK * C_LIGHT / (lam * K_BOLTZ * temperature)
    b = 2 * H_PLANCK * C_LIGHT ** 2 / lam ** 5 / np.expm1(log_boltz)
    model = np.exp(log_scale) * b / 1e13
    return np.sum((np.log(model) - np.log(flux)) ** 2)


# forms of photometry scripts taking any number of bands as *args
def colour_index(*mags):
    total = 0.0
    for a, b in zip(mags[:-1], mags[1:]):
        total += np.sum((a - b) ** 2)
    return total
