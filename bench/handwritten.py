"""Hand-written Numba baselines for the problems in ``bench.problems``.

Every public function here is a ``numba.njit`` dispatcher (compiled lazily on first call,
no on-disk cache) taking the same positional arguments as the matching problem:

* primals, returning the same float as the problem function (to rounding):
  ``two_layer_primal``, ``rnn_primal``, ``gmm_primal``, ``reproj_primal``,
  ``control_flow_primal``. Where the problem compiles under Numba as written, the primal
  *is* ``numba.njit`` of the problem function, so it runs exactly that source.
* gradients, returning a tuple with one gradient per differentiable argument, each with
  the shape of (and float64 like) that argument; Python floats get float gradients:

  ==========================  ==============================================
  ``two_layer_grad``           ``(dW1, db1, dW2, db2)`` -- NumPy style
  ``two_layer_grad_loops``     same, every matmul / reduction as a loop
  ``rnn_grad``                 ``(dw, dx)``
  ``gmm_grad``                 ``(dalphas, dmeans, dlog_prec)`` (not ``x``)
  ``gmm_adbench_grad``         ``(dalphas, dmeans, dicf)``: ADBench's Manual, in Numba
  ``gmm_adbench_cols_grad``    same, Q by columns as ADBench's C++
  ``reproj_grad``              ``(dcams, dpoints)``
  ``control_flow_grad``        ``(dx, dthresh)``
  ==========================  ==============================================

Conventions: the derivative of ``max(a, 0)`` at exactly ``a == 0`` is 0.5 (ties split
equally); at a branch boundary of ``control_flow`` the branch the primal took is used.

Numba 0.68 does not accept ``keepdims=`` nor ``np.max(a, axis=k)``, and compiling
``a.sum(axis=k)`` or ``np.where`` costs ~1-1.5 s each in a fresh process, against
0.1-0.3 s for a loop. So the row/column reductions are small ``_row_*`` / ``_col_sum``
loop helpers, and the ReLU mask is ``0.5 * (np.sign(a) + 1)`` (1, 0.5, 0 for a >, ==, < 0).

``verify()`` checks every gradient against 4th-order central finite differences of the
*plain-Python problem function* (relative error per argument < 1e-6) and every primal
against the problem function; run it with ``python -m bench.handwritten``.
"""

import math

import numba
import numpy as np

from bench import problems

# --------------------------------------------------------------------------------------
# Two-layer network
# --------------------------------------------------------------------------------------


@numba.njit
def _row_max(a):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        m = a[i, 0]
        for j in range(1, a.shape[1]):
            m = max(m, a[i, j])
        out[i] = m
    return out


@numba.njit
def _row_sum(a):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i] += a[i, j]
    return out


@numba.njit
def _col_sum(a):
    out = np.zeros(a.shape[1])
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[j] += a[i, j]
    return out


@numba.njit
def two_layer_primal(W1, b1, W2, b2, inputs, y_true):
    h = np.maximum(inputs @ W1 + b1, 0.0)
    z = h @ W2 + b2
    z = z - _row_max(z)[:, np.newaxis]
    e = np.exp(z)
    p = e / _row_sum(e)[:, np.newaxis]
    return -np.sum(y_true * np.log(p)) / inputs.shape[0]


@numba.njit
def two_layer_grad(W1, b1, W2, b2, inputs, y_true):
    batch = inputs.shape[0]
    a1 = inputs @ W1 + b1
    h = np.maximum(a1, 0.0)
    z = h @ W2 + b2
    z = z - _row_max(z)[:, np.newaxis]
    e = np.exp(z)
    p = e / _row_sum(e)[:, np.newaxis]
    # loss = -(1/B) sum_i sum_c y[i,c] (z[i,c] - logsumexp_c z[i,:]); the max shift cancels
    dz = (p * _row_sum(y_true)[:, np.newaxis] - y_true) / batch
    dW2 = h.T @ dz
    db2 = _col_sum(dz)
    da1 = (dz @ W2.T) * (0.5 * (np.sign(a1) + 1.0))
    dW1 = inputs.T @ da1
    db1 = _col_sum(da1)
    return dW1, db1, dW2, db2


@numba.njit
def two_layer_grad_loops(W1, b1, W2, b2, inputs, y_true):
    batch, n_in = inputs.shape
    n_hidden = W1.shape[1]
    n_out = W2.shape[1]

    # forward: a1 = inputs @ W1 + b1, h = relu(a1), z = h @ W2 + b2 (i-k-j loop order)
    a1 = np.empty((batch, n_hidden))
    for i in range(batch):
        for j in range(n_hidden):
            a1[i, j] = b1[j]
        for k in range(n_in):
            xik = inputs[i, k]
            for j in range(n_hidden):
                a1[i, j] += xik * W1[k, j]
    h = np.empty((batch, n_hidden))
    for i in range(batch):
        for j in range(n_hidden):
            h[i, j] = max(0.0, a1[i, j])
    z = np.empty((batch, n_out))
    for i in range(batch):
        for c in range(n_out):
            z[i, c] = b2[c]
        for j in range(n_hidden):
            hij = h[i, j]
            for c in range(n_out):
                z[i, c] += hij * W2[j, c]

    # softmax cross-entropy -> dz
    dz = np.empty((batch, n_out))
    for i in range(batch):
        m = z[i, 0]
        for c in range(1, n_out):
            m = max(m, z[i, c])
        s = 0.0
        ysum = 0.0
        for c in range(n_out):
            dz[i, c] = math.exp(z[i, c] - m)
            s += dz[i, c]
            ysum += y_true[i, c]
        for c in range(n_out):
            dz[i, c] = (dz[i, c] / s * ysum - y_true[i, c]) / batch

    # backward
    dW2 = np.zeros((n_hidden, n_out))
    db2 = np.zeros(n_out)
    da1 = np.empty((batch, n_hidden))
    for i in range(batch):
        for c in range(n_out):
            db2[c] += dz[i, c]
        for j in range(n_hidden):
            hij = h[i, j]
            g = 0.0
            for c in range(n_out):
                dW2[j, c] += hij * dz[i, c]
                g += dz[i, c] * W2[j, c]
            if a1[i, j] > 0.0:
                da1[i, j] = g
            elif a1[i, j] == 0.0:
                da1[i, j] = 0.5 * g
            else:
                da1[i, j] = 0.0
    dW1 = np.zeros((n_in, n_hidden))
    db1 = np.zeros(n_hidden)
    for i in range(batch):
        for j in range(n_hidden):
            db1[j] += da1[i, j]
        for k in range(n_in):
            xik = inputs[i, k]
            for j in range(n_hidden):
                dW1[k, j] += xik * da1[i, j]
    return dW1, db1, dW2, db2


# --------------------------------------------------------------------------------------
# Scalar RNN
# --------------------------------------------------------------------------------------

rnn_primal = numba.njit(problems.rnn_loss)


@numba.njit
def rnn_grad(w, x):
    n = x.shape[0]
    hs = np.empty(n + 1)  # hs[t + 1] is h after step t; hs[0] = 0
    hs[0] = 0.0
    for t in range(n):
        hs[t + 1] = math.tanh(w * hs[t] + x[t])
    dx = np.empty(n)
    dw = 0.0
    dh = 0.0  # adjoint of h after step t, from the steps after t
    for t in range(n - 1, -1, -1):
        h = hs[t + 1]
        da = (dh + 2.0 * h) * (1.0 - h * h)
        dx[t] = da
        dw += da * hs[t]
        dh = da * w
    return dw, dx


# --------------------------------------------------------------------------------------
# Gaussian mixture model
# --------------------------------------------------------------------------------------

gmm_primal = numba.njit(problems.gmm_nll)
gmm_adbench_primal = numba.njit(problems.gmm_adbench)
gmm_adbench_cols_primal = numba.njit(problems.gmm_adbench_cols)


@numba.njit
def gmm_adbench_grad(alphas, means, icf, x):
    """ADBench's Manual gradient of its loop GMM (`problems.gmm_adbench`), structured as its C++
    (``gmm_objective_d``): per point, the forward work of every component is kept (``xc`` and
    ``Q xc`` per component: no tape), then with the weights ``w_k = exp(beta_k - lse)`` each
    component's gradient is accumulated in one sweep over the triangle of ``Q``, which also
    builds ``Q^T (Q xc)`` for the means."""
    n, d = x.shape
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += math.exp(alphas[k] - amax)
    qdiags = np.exp(icf[:, :d])
    sum_qs = np.zeros(K)
    for k in range(K):
        for j in range(d):
            sum_qs[k] += icf[k, j]
    dalphas = np.zeros(K)
    dmeans = np.zeros((K, d))
    dicf = np.zeros(icf.shape)
    xcs = np.zeros((K, d))
    qxc = np.zeros((K, d))
    beta = np.zeros(K)
    tmp = np.zeros(d)
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xcs[k, j] = x[i, j] - means[k, j]
            sqsum = 0.0
            idx = d
            for r in range(d):
                s = qdiags[k, r] * xcs[k, r]
                for c in range(r):
                    s += icf[k, idx] * xcs[k, c]
                    idx += 1
                qxc[k, r] = s
                sqsum += s * s
            beta[k] = alphas[k] + sum_qs[k] - 0.5 * sqsum
        bmax = beta[0]
        for k in range(1, K):
            bmax = max(bmax, beta[k])
        se = 0.0
        for k in range(K):
            se += math.exp(beta[k] - bmax)
        lse = bmax + math.log(se)
        for k in range(K):
            w = math.exp(beta[k] - lse)  # d value / d beta_k
            dalphas[k] += w
            for j in range(d):
                tmp[j] = 0.0
            idx = d
            for r in range(d):
                g = -w * qxc[k, r]  # d value / d (Q xc)_r
                dicf[k, r] += w + g * xcs[k, r] * qdiags[k, r]  # sum_qs, and exp's diagonal
                tmp[r] += g * qdiags[k, r]
                for c in range(r):
                    dicf[k, idx] += g * xcs[k, c]
                    tmp[c] += g * icf[k, idx]
                    idx += 1
            for j in range(d):
                dmeans[k, j] -= tmp[j]
    for k in range(K):  # - n logsumexp(alphas)
        dalphas[k] -= n * math.exp(alphas[k] - amax) / asum
    return dalphas, dmeans, dicf


@numba.njit
def gmm_adbench_cols_grad(alphas, means, icf, x):
    """ADBench's Manual gradient (``gmm_objective_d``) of `problems.gmm_adbench_cols`, Q's
    entries by columns as in its C++: per point, every component's ``xc`` and ``Q xc`` kept;
    then, with the weights ``w_k``, one sweep down each column ``c`` of Q that adds into the
    column's entries of ``dicf`` and sums ``(Q^T g)_c`` in a scalar (ADBench's
    ``Qtransposetimesx``, fused with its ``compute_L_inner_term``)."""
    n, d = x.shape
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += math.exp(alphas[k] - amax)
    qdiags = np.exp(icf[:, :d])
    sum_qs = np.zeros(K)
    for k in range(K):
        for j in range(d):
            sum_qs[k] += icf[k, j]
    dalphas = np.zeros(K)
    dmeans = np.zeros((K, d))
    dicf = np.zeros(icf.shape)
    xcs = np.zeros((K, d))
    qxc = np.zeros((K, d))
    beta = np.zeros(K)
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xcs[k, j] = x[i, j] - means[k, j]
            for j in range(d):
                qxc[k, j] = qdiags[k, j] * xcs[k, j]
            idx = d
            for c in range(d):
                xcc = xcs[k, c]
                for r in range(c + 1, d):
                    qxc[k, r] += icf[k, idx] * xcc
                    idx += 1
            sqsum = 0.0
            for j in range(d):
                sqsum += qxc[k, j] * qxc[k, j]
            beta[k] = alphas[k] + sum_qs[k] - 0.5 * sqsum
        bmax = beta[0]
        for k in range(1, K):
            bmax = max(bmax, beta[k])
        se = 0.0
        for k in range(K):
            se += math.exp(beta[k] - bmax)
        lse = bmax + math.log(se)
        for k in range(K):
            w = math.exp(beta[k] - lse)  # d value / d beta_k
            dalphas[k] += w
            idx = d
            for c in range(d):
                g_c = -w * qxc[k, c]  # d value / d (Q xc)_c
                xcc = xcs[k, c]
                dicf[k, c] += w + g_c * xcc * qdiags[k, c]  # sum_qs, and exp's diagonal
                s = g_c * qdiags[k, c]
                for r in range(c + 1, d):
                    g = -w * qxc[k, r]
                    dicf[k, idx] += g * xcc
                    s += icf[k, idx] * g
                    idx += 1
                dmeans[k, c] -= s
    for k in range(K):  # - n logsumexp(alphas)
        dalphas[k] -= n * math.exp(alphas[k] - amax) / asum
    return dalphas, dmeans, dicf


@numba.njit
def gmm_grad(alphas, means, log_prec, x):
    n, d = x.shape
    K = alphas.shape[0]

    # d/dalphas of n * logsumexp(alphas) is n * softmax(alphas)
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    dalphas = np.empty(K)
    asum = 0.0
    for k in range(K):
        dalphas[k] = math.exp(alphas[k] - amax)
        asum += dalphas[k]
    for k in range(K):
        dalphas[k] *= n / asum

    prec = np.exp(log_prec)
    prec2 = prec * prec
    dmeans = np.zeros((K, d))
    dlog_prec = np.zeros((K, d))
    lp = np.empty(K)
    for i in range(n):
        lmax = -math.inf
        for k in range(K):
            s = alphas[k]
            for j in range(d):
                r = prec[k, j] * (x[i, j] - means[k, j])
                s += log_prec[k, j] - 0.5 * r * r
            lp[k] = s
            lmax = max(lmax, s)
        se = 0.0
        for k in range(K):
            lp[k] = math.exp(lp[k] - lmax)
            se += lp[k]
        # NLL has -logsumexp_k(lp): adjoint of lp[k] is minus the responsibility
        for k in range(K):
            resp = lp[k] / se
            dalphas[k] -= resp
            for j in range(d):
                diff = x[i, j] - means[k, j]
                dmeans[k, j] -= resp * prec2[k, j] * diff
                dlog_prec[k, j] -= resp * (1.0 - prec2[k, j] * diff * diff)
    return dalphas, dmeans, dlog_prec


# --------------------------------------------------------------------------------------
# Reprojection error
# --------------------------------------------------------------------------------------

reproj_primal = numba.njit(problems.reproj_loss)


@numba.njit
def reproj_grad(cams, points, obs, cam_idx, pt_idx):
    dcams = np.zeros(cams.shape)
    dpoints = np.zeros(points.shape)
    for o in range(obs.shape[0]):
        c = cam_idx[o]
        p = pt_idx[o]
        y0 = points[p, 0] + cams[c, 0]
        y1 = points[p, 1] + cams[c, 1]
        y2 = points[p, 2] + cams[c, 2]
        u0 = y0 / y2
        u1 = y1 / y2
        r2 = u0 * u0 + u1 * u1
        f = cams[c, 3]
        k1 = cams[c, 4]
        k2 = cams[c, 5]
        dist = 1.0 + k1 * r2 + k2 * r2 * r2
        scale = f * dist
        de0 = 2.0 * (scale * u0 - obs[o, 0])
        de1 = 2.0 * (scale * u1 - obs[o, 1])
        ude = u0 * de0 + u1 * de1  # adjoint of scale
        dcams[c, 3] += dist * ude
        dcams[c, 4] += f * r2 * ude
        dcams[c, 5] += f * r2 * r2 * ude
        dr2 = ude * f * (k1 + 2.0 * k2 * r2)
        du0 = scale * de0 + 2.0 * u0 * dr2
        du1 = scale * de1 + 2.0 * u1 * dr2
        dy0 = du0 / y2
        dy1 = du1 / y2
        dy2 = -(du0 * u0 + du1 * u1) / y2
        dcams[c, 0] += dy0
        dcams[c, 1] += dy1
        dcams[c, 2] += dy2
        dpoints[p, 0] += dy0
        dpoints[p, 1] += dy1
        dpoints[p, 2] += dy2
    return dcams, dpoints


# --------------------------------------------------------------------------------------
# Control flow
# --------------------------------------------------------------------------------------

control_flow_primal = numba.njit(problems.control_flow)


@numba.njit
def control_flow_grad(x, thresh):
    n = x.shape[0]
    rs = np.empty(n)  # residual of each step; with thresh it determines the branch taken
    state = 0.0
    for i in range(n):
        r = x[i] - 0.5 * state
        rs[i] = r
        if r > thresh:
            state = 0.9 * state + thresh
        elif r < -thresh:
            state = 0.9 * state - thresh
        else:
            state = 0.9 * state + r
    dx = np.empty(n)
    dthresh = 0.0
    dstate = 0.0  # adjoint of the state after step i
    for i in range(n - 1, -1, -1):
        r = rs[i]
        if r > thresh:
            dr = thresh
            dthresh += (r - thresh) + dstate
        elif r < -thresh:
            dr = -thresh
            dthresh += (-r - thresh) - dstate
        else:
            dr = r + dstate
        dx[i] = dr
        dstate = 0.9 * dstate - 0.5 * dr
    return dx, dthresh


# --------------------------------------------------------------------------------------
# Self-check against finite differences
# --------------------------------------------------------------------------------------


def _fd_gradient(f, args, i, h=1e-4):
    """4th-order central difference of ``f(*args)`` w.r.t. argument ``i`` (array or float)."""
    args = list(args)
    x0 = args[i]

    def at(xi):
        args[i] = xi
        return f(*args)

    if np.ndim(x0) == 0:
        return (-at(x0 + 2 * h) + 8 * at(x0 + h) - 8 * at(x0 - h) + at(x0 - 2 * h)) / (12 * h)
    grad = np.empty(x0.shape)
    for idx in np.ndindex(x0.shape):
        vals = []
        for step in (2 * h, h, -h, -2 * h):
            xs = x0.copy()
            xs[idx] += step
            vals.append(at(xs))
        grad[idx] = (-vals[0] + 8 * vals[1] - 8 * vals[2] + vals[3]) / (12 * h)
    return grad


def _rel_err(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = max(np.linalg.norm(a), np.linalg.norm(b), 1e-300)
    return float(np.linalg.norm(a - b) / scale)


def verify(tol=1e-6, verbose=True):
    """Check all primals against the problem functions and all gradients against FD.

    Uses the ``SMALL_*`` sizes from ``bench.problems``; also cross-checks
    ``two_layer_grad`` against ``two_layer_grad_loops`` at the MNIST size. Returns a dict
    ``{check name: relative error}`` and raises ``AssertionError`` if any exceeds ``tol``.
    """
    P = problems
    cases = [
        # name, problem fn, primal, gradient, data, indices of differentiable args
        (
            "two_layer",
            P.two_layer_loss,
            two_layer_primal,
            two_layer_grad,
            P.make_two_layer(*P.SMALL_TWO_LAYER),
            (0, 1, 2, 3),
        ),
        (
            "two_layer_loops",
            P.two_layer_loss,
            two_layer_primal,
            two_layer_grad_loops,
            P.make_two_layer(*P.SMALL_TWO_LAYER),
            (0, 1, 2, 3),
        ),
        ("rnn", P.rnn_loss, rnn_primal, rnn_grad, P.make_rnn(*P.SMALL_RNN), (0, 1)),
        ("gmm", P.gmm_nll, gmm_primal, gmm_grad, P.make_gmm(*P.SMALL_GMM), (0, 1, 2)),
        ("gmm_adbench", P.gmm_adbench, gmm_adbench_primal, gmm_adbench_grad,
         P.make_adbench_gmm(30, 3, 4), (0, 1, 2)),
        ("gmm_adbench_cols", P.gmm_adbench_cols, gmm_adbench_cols_primal, gmm_adbench_cols_grad,
         P.make_adbench_gmm(30, 4, 3), (0, 1, 2)),
        (
            "reproj",
            P.reproj_loss,
            reproj_primal,
            reproj_grad,
            P.make_reproj(*P.SMALL_REPROJ),
            (0, 1),
        ),
        (
            "control_flow",
            P.control_flow,
            control_flow_primal,
            control_flow_grad,
            P.make_control_flow(*P.SMALL_CONTROL_FLOW),
            (0, 1),
        ),
    ]
    errors = {}
    for name, fn, primal, grad, data, wrt in cases:
        errors[f"{name} primal"] = abs(primal(*data) - fn(*data)) / max(abs(fn(*data)), 1e-300)
        grads = grad(*data)
        assert len(grads) == len(wrt), name
        for g, i in zip(grads, wrt):
            assert np.shape(g) == np.shape(data[i]), (name, i)
            errors[f"{name} d/arg{i}"] = _rel_err(g, _fd_gradient(fn, data, i))

    data = P.make_two_layer(*P.MNIST_TWO_LAYER)
    for i, (a, b) in enumerate(zip(two_layer_grad(*data), two_layer_grad_loops(*data))):
        errors[f"two_layer mnist numpy-vs-loops arg{i}"] = _rel_err(a, b)
    errors["two_layer mnist primal"] = _rel_err(two_layer_primal(*data), P.two_layer_loss(*data))

    # ReLU ties (finite differences cannot check these): a zero input row and b1[0] == 0
    # make a1[0, 0] exactly 0; the two independently written gradients must agree.
    W1, b1, W2, b2, inputs, y_true = P.make_two_layer(*P.SMALL_TWO_LAYER)
    inputs[0] = 0.0
    b1[0] = 0.0
    data = (W1, b1, W2, b2, inputs, y_true)
    for i, (a, b) in enumerate(zip(two_layer_grad(*data), two_layer_grad_loops(*data))):
        errors[f"two_layer relu-tie numpy-vs-loops arg{i}"] = _rel_err(a, b)

    if verbose:
        width = max(map(len, errors))
        for k, v in errors.items():
            print(f"{k:<{width}}  {v:.2e}  {'ok' if v < tol else 'FAIL'}")
    bad = {k: v for k, v in errors.items() if not v < tol}
    assert not bad, f"hand-written baselines disagree with the problems: {bad}"
    return errors


if __name__ == "__main__":
    verify()
