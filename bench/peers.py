"""The benchmark problems written for peer AD systems: autograd, PyTorch (eager) and JAX.

Each peer function computes the same number as the problem of the same name in
``bench.problems`` (to rounding), in float64, and is written the way a user of that system
would naturally write it:

=================  =====================  ==========================  =======================
problem            autograd               PyTorch eager               JAX (``jit(grad)``)
=================  =====================  ==========================  =======================
``two_layer``      array code             array code                  array code
``rnn``            Python loop, ``x[t]``  Python loop over            ``lax.scan``
                                          ``x.unbind()`` (0-d)
``gmm``            vectorised             vectorised                  vectorised
``reproj``         vectorised gathers     vectorised gathers          vectorised gathers
``control_flow``   Python loop with ``if``  Python loop with ``if``   ``lax.scan`` + ``where``
``gmm_adbench``    vectorised             (none)                      vectorised
=================  =====================  ==========================  =======================

The sequential problems (``rnn``, ``control_flow``: each step depends on the previous one)
keep their loop: in autograd and PyTorch it runs in Python over scalars, and in JAX it
becomes ``lax.scan``. The GMM and reprojection loops are over independent data points, and
users of these systems write them as whole-array expressions (an (n, K, d) broadcast for the
GMM, fancy-index gathers for reprojection), so that is what is measured; ``logsumexp`` is the
library's own. ``gmm_adbench`` (ADBench's GMM) is not timed for the peers (`suites.PEERLESS`):
its vectorised versions are the benchmark's independent check of jitgrad's gradient there
(`bench.oracle`).

``make_tool(system, suite, data, wrt)`` binds a problem to its data and returns
``(call, to_numpy)``: ``call()`` computes the gradients with respect to the arguments at the
positions ``wrt`` (data conversion to tensors happens once, outside ``call``; JAX results are
waited for with ``block_until_ready``), and ``to_numpy(call())`` turns them into a tuple of
NumPy arrays / Python floats shaped like those arguments. ``available()`` says which of the
three systems import, and ``configure_threads(1)`` makes PyTorch and XLA single-threaded
(XLA's setting only takes effect if called before JAX is imported).

Importing this module imports none of the peers; each is imported on first use.
"""

import importlib
import math
import os

import numpy as np

SYSTEMS = ("autograd", "torch", "jax")

# what each system's version of each problem looks like, for the report
STYLE = {
    ("autograd", "rnn"): "Python loop over scalars (x[t])",
    ("autograd", "control_flow"): "Python loop over scalars (x[t]), Python if",
    ("autograd", "gmm"): "vectorised (n, K, d) broadcast",
    ("autograd", "reproj"): "vectorised gathers",
    ("torch", "rnn"): "Python loop over x.unbind() 0-d tensors",
    ("torch", "control_flow"): "Python loop over x.unbind() 0-d tensors, Python if",
    ("torch", "gmm"): "vectorised (n, K, d) broadcast",
    ("torch", "reproj"): "vectorised gathers",
    ("jax", "rnn"): "lax.scan",
    ("jax", "control_flow"): "lax.scan, branches as jnp.where",
    ("jax", "gmm"): "vectorised (n, K, d) broadcast",
    ("jax", "reproj"): "vectorised gathers",
}

_LOG_2PI = math.log(2.0 * math.pi)


def _adbench_gmm(xp, logsumexp, by_columns=False):
    """`problems.gmm_adbench` (or, ``by_columns``, `problems.gmm_adbench_cols`, which reads
    ``icf[k, d:]`` column by column) as array code in the NumPy-like module ``xp``
    (``autograd.numpy``, ``jax.numpy``): the inverse Cholesky factors Q_k built whole,
    ``|Q_k (x_i - means_k)|^2`` as an (n, K, d) einsum, the library's ``logsumexp``. Only the
    benchmark's independent check of jitgrad's gradient uses it (`bench.oracle`); the peers
    are timed on `gmm`."""

    def gmm_adbench(alphas, means, icf, x):
        n, d = x.shape
        K = alphas.shape[0]
        rows, cols = np.tril_indices(d, -1)  # row by row, as the loop form reads icf[k, d:]
        if by_columns:
            cols, rows = np.triu_indices(d, 1)  # (c, r) with r > c, column by column
        scatter = np.zeros((rows.size, d * d))
        scatter[np.arange(rows.size), rows * d + cols] = 1.0
        Q = (xp.dot(icf[:, d:], scatter).reshape(K, d, d)
             + xp.exp(icf[:, :d])[:, :, None] * np.eye(d)[None])
        Qxc = xp.einsum("kij,nkj->nki", Q, x[:, None, :] - means[None])
        beta = alphas + xp.sum(icf[:, :d], axis=1) - 0.5 * xp.sum(Qxc * Qxc, axis=2)
        return (-0.5 * n * d * _LOG_2PI + xp.sum(logsumexp(beta, axis=1))
                - n * logsumexp(alphas))

    return gmm_adbench


def available():
    """``{system: version string or None}`` for autograd, torch and jax (imports them)."""
    out = {}
    for name in SYSTEMS:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            out[name] = None
        else:
            out[name] = getattr(mod, "__version__", None) or _dist_version(name)
    return out


def _dist_version(name):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def configure_threads(n):
    """Single-thread (``n=1``) or ``n``-thread PyTorch and XLA, like OpenBLAS elsewhere."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in flags:
        extra = f"--xla_cpu_multi_thread_eigen={'false' if n == 1 else 'true'} "
        extra += f"intra_op_parallelism_threads={n}"
        os.environ["XLA_FLAGS"] = (flags + " " + extra).strip()
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(n)


# --------------------------------------------------------------------------------------
# autograd
# --------------------------------------------------------------------------------------


def _autograd_fns():
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp

    def two_layer(W1, b1, W2, b2, inputs, y_true):
        h = anp.maximum(anp.dot(inputs, W1) + b1, 0.0)
        z = anp.dot(h, W2) + b2
        z = z - anp.max(z, axis=1, keepdims=True)
        p = anp.exp(z) / anp.sum(anp.exp(z), axis=1, keepdims=True)
        return -anp.mean(anp.sum(y_true * anp.log(p), axis=1))

    def rnn(w, x):
        h = 0.0
        loss = 0.0
        for t in range(x.shape[0]):
            h = anp.tanh(w * h + x[t])
            loss = loss + h * h
        return loss

    def gmm(alphas, means, log_prec, x):
        n, d = x.shape
        r = anp.exp(log_prec)[None] * (x[:, None, :] - means[None])
        lp = alphas + anp.sum(log_prec, axis=1) - 0.5 * anp.sum(r * r, axis=2)
        return n * (logsumexp(alphas) + 0.5 * d * _LOG_2PI) - anp.sum(logsumexp(lp, axis=1))

    def reproj(cams, points, obs, cam_idx, pt_idx):
        c = cams[cam_idx]
        y = points[pt_idx] + c[:, 0:3]
        u = y[:, 0:2] / y[:, 2:3]
        r2 = anp.sum(u * u, axis=1)
        scale = c[:, 3] * (1.0 + c[:, 4] * r2 + c[:, 5] * r2 * r2)
        e = scale[:, None] * u - obs
        return anp.sum(e * e)

    def control_flow(x, thresh):
        state = 0.0
        total = 0.0
        for i in range(x.shape[0]):
            r = x[i] - 0.5 * state
            if r > thresh:
                total = total + thresh * (r - 0.5 * thresh)
                state = 0.9 * state + thresh
            elif r < -thresh:
                total = total + thresh * (-r - 0.5 * thresh)
                state = 0.9 * state - thresh
            else:
                total = total + 0.5 * r * r
                state = 0.9 * state + r
        return total

    gmm_adbench = _adbench_gmm(anp, logsumexp)
    gmm_adbench_cols = _adbench_gmm(anp, logsumexp, by_columns=True)

    return locals()


def _autograd_tool(fn, data, wrt):
    import autograd

    g = autograd.grad(fn, argnum=tuple(wrt))

    def call():
        return g(*data)

    def to_numpy(grads):
        return tuple(_like(data[k], np.asarray(v)) for k, v in zip(wrt, grads))

    return call, to_numpy


# --------------------------------------------------------------------------------------
# PyTorch (eager)
# --------------------------------------------------------------------------------------


def _torch_fns():
    import torch

    def two_layer(W1, b1, W2, b2, inputs, y_true):
        h = torch.relu(inputs @ W1 + b1)
        z = h @ W2 + b2
        z = z - torch.amax(z, dim=1, keepdim=True)
        p = torch.exp(z) / torch.sum(torch.exp(z), dim=1, keepdim=True)
        return -torch.mean(torch.sum(y_true * torch.log(p), dim=1))

    def rnn(w, x):
        h = 0.0
        loss = 0.0
        for xt in x.unbind(0):
            h = torch.tanh(w * h + xt)
            loss = loss + h * h
        return loss

    def gmm(alphas, means, log_prec, x):
        n, d = x.shape
        r = torch.exp(log_prec)[None] * (x[:, None, :] - means[None])
        lp = alphas + torch.sum(log_prec, dim=1) - 0.5 * torch.sum(r * r, dim=2)
        log_norm = torch.logsumexp(alphas, dim=0)
        return n * (log_norm + 0.5 * d * _LOG_2PI) - torch.sum(torch.logsumexp(lp, dim=1))

    def reproj(cams, points, obs, cam_idx, pt_idx):
        c = cams[cam_idx]
        y = points[pt_idx] + c[:, 0:3]
        u = y[:, 0:2] / y[:, 2:3]
        r2 = torch.sum(u * u, dim=1)
        scale = c[:, 3] * (1.0 + c[:, 4] * r2 + c[:, 5] * r2 * r2)
        e = scale[:, None] * u - obs
        return torch.sum(e * e)

    def control_flow(x, thresh):
        state = 0.0
        total = 0.0
        for xi in x.unbind(0):
            r = xi - 0.5 * state
            if r > thresh:
                total = total + thresh * (r - 0.5 * thresh)
                state = 0.9 * state + thresh
            elif r < -thresh:
                total = total + thresh * (-r - 0.5 * thresh)
                state = 0.9 * state - thresh
            else:
                total = total + 0.5 * r * r
                state = 0.9 * state + r
        return total

    return locals()


def _torch_tool(fn, data, wrt):
    import torch

    args = []
    for k, a in enumerate(data):
        t = torch.tensor(a, dtype=torch.float64) if isinstance(a, float) else torch.from_numpy(
            np.array(a)
        )
        if k in wrt:
            t.requires_grad_(True)
        args.append(t)
    params = [args[k] for k in wrt]

    def call():
        return torch.autograd.grad(fn(*args), params)

    def to_numpy(grads):
        return tuple(_like(data[k], v.detach().numpy()) for k, v in zip(wrt, grads))

    return call, to_numpy


# --------------------------------------------------------------------------------------
# JAX
# --------------------------------------------------------------------------------------


def _jax_fns():
    import jax.numpy as jnp
    from jax import lax
    from jax.scipy.special import logsumexp

    def two_layer(W1, b1, W2, b2, inputs, y_true):
        h = jnp.maximum(inputs @ W1 + b1, 0.0)
        z = h @ W2 + b2
        z = z - jnp.max(z, axis=1, keepdims=True)
        p = jnp.exp(z) / jnp.sum(jnp.exp(z), axis=1, keepdims=True)
        return -jnp.mean(jnp.sum(y_true * jnp.log(p), axis=1))

    def rnn(w, x):
        def step(carry, xt):
            h, loss = carry
            h = jnp.tanh(w * h + xt)
            return (h, loss + h * h), None

        zero = jnp.zeros((), dtype=x.dtype)
        (_, loss), _ = lax.scan(step, (zero, zero), x)
        return loss

    def gmm(alphas, means, log_prec, x):
        n, d = x.shape
        r = jnp.exp(log_prec)[None] * (x[:, None, :] - means[None])
        lp = alphas + jnp.sum(log_prec, axis=1) - 0.5 * jnp.sum(r * r, axis=2)
        return n * (logsumexp(alphas) + 0.5 * d * _LOG_2PI) - jnp.sum(logsumexp(lp, axis=1))

    def reproj(cams, points, obs, cam_idx, pt_idx):
        c = cams[cam_idx]
        y = points[pt_idx] + c[:, 0:3]
        u = y[:, 0:2] / y[:, 2:3]
        r2 = jnp.sum(u * u, axis=1)
        scale = c[:, 3] * (1.0 + c[:, 4] * r2 + c[:, 5] * r2 * r2)
        e = scale[:, None] * u - obs
        return jnp.sum(e * e)

    def control_flow(x, thresh):
        def step(carry, xi):
            state, total = carry
            r = xi - 0.5 * state
            hi = r > thresh
            lo = r < -thresh
            quad = 0.5 * r * r
            lin_hi = thresh * (r - 0.5 * thresh)
            lin_lo = thresh * (-r - 0.5 * thresh)
            total = total + jnp.where(hi, lin_hi, jnp.where(lo, lin_lo, quad))
            state = 0.9 * state + jnp.where(hi, thresh, jnp.where(lo, -thresh, r))
            return (state, total), None

        zero = jnp.zeros((), dtype=x.dtype)
        (_, total), _ = lax.scan(step, (zero, zero), x)
        return total

    gmm_adbench = _adbench_gmm(jnp, logsumexp)
    gmm_adbench_cols = _adbench_gmm(jnp, logsumexp, by_columns=True)

    return locals()


def _jax_tool(fn, data, wrt):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    args = [jnp.asarray(a, dtype=jnp.float64) if isinstance(a, float) else jnp.asarray(a)
            for a in data]
    g = jax.jit(jax.grad(fn, argnums=tuple(wrt)))

    def call():
        return jax.block_until_ready(g(*args))

    def to_numpy(grads):
        return tuple(_like(data[k], np.asarray(v)) for k, v in zip(wrt, grads))

    return call, to_numpy


# --------------------------------------------------------------------------------------


def _like(arg, grad):
    """A gradient as NumPy, a Python float where the argument was a Python float."""
    if isinstance(arg, float):
        return float(grad)
    return np.asarray(grad, dtype=np.float64)


_FNS = {"autograd": _autograd_fns, "torch": _torch_fns, "jax": _jax_fns}
_TOOLS = {"autograd": _autograd_tool, "torch": _torch_tool, "jax": _jax_tool}
_CACHE = {}


def function(system, suite):
    """The ``system`` version of problem ``suite`` (a plain function of the problem's args)."""
    if system not in _CACHE:
        _CACHE[system] = _FNS[system]()
    return _CACHE[system][suite]


def make_tool(system, suite, data, wrt):
    """``(call, to_numpy)`` for the gradient of ``suite`` w.r.t. ``wrt`` in ``system``."""
    return _TOOLS[system](function(system, suite), data, tuple(wrt))
