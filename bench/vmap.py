"""Per-example gradients: `jitgrad.vmap` against a Python loop over the gradient (issue #23).

``python -m bench.vmap [--rounds 15]``

``vmap(grad(loss), in_axes=(None, 0, 0))(w, X, Y)`` is the per-example gradient of DP-SGD: one
gradient per row of ``X``. jitgrad runs it as a compiled loop around the compiled gradient
(`backend.numba.batch`); the baseline calls the same gradient once per row from Python (what
a user without vmap writes), and JAX's ``jit(vmap(grad(loss)))`` runs where JAX is installed.
Every result is first checked against the Python loop (exactly) and against central
differences on three rows (1e-6 relative). Times are medians of interleaved rounds
(`bench.timing.measure`); ratios are from the same run. Single-threaded (OPENBLAS and Numba at
one thread, XLA on the CPU as installed).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import functools

import numpy as np

import jitgrad
from bench.timing import measure


def logistic(w, x, y):
    """One example's logistic loss, with an L2 term."""
    z = np.dot(x, w)
    return np.log1p(np.exp(-y * z)) + 0.01 * np.sum(w * w)


def mlp(w1, w2, x, y):
    """One example's squared error through a tanh layer."""
    h = np.tanh(x @ w1)
    return (np.dot(h, w2) - y) ** 2


def cases():
    rng = np.random.default_rng(0)
    for n, d in ((256, 10), (4096, 50)):
        yield (f"logistic, {n} rows x {d}", logistic, (rng.normal(size=d), rng.normal(size=(n, d)),
                                                      rng.choice([-1.0, 1.0], size=n)),
               (None, 0, 0), 0)
    n, d, h = 1024, 20, 16
    yield (f"tanh MLP, {n} rows x {d}, {h} hidden", mlp,
           (rng.normal(size=(d, h)) * 0.3, rng.normal(size=h), rng.normal(size=(n, d)),
            rng.normal(size=n)), (None, None, 0, 0), (0, 1))


def _rows(args, in_axes, i):
    return [a[i] if ax == 0 else a for a, ax in zip(args, in_axes)]


def _fd(fn, args, k, eps=1e-6):
    x = args[k]
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        up = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        down = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        up[k][idx] += eps
        down[k][idx] -= eps
        g[idx] = (fn(*up) - fn(*down)) / (2 * eps)
    return g


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    opts = ap.parse_args(argv)
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        jax = None
    print(f"Per-example gradients, median of {opts.rounds} interleaved rounds, one thread")
    print()
    print("| case | jitgrad.vmap | Python loop over jitgrad.grad | loop / vmap | jax.jit(vmap) |"
          " jax / vmap |")
    print("|---|---|---|---|---|---|")
    for name, fn, args, in_axes, wrt in cases():
        g = jitgrad.grad(fn, wrt=wrt)
        per_example = jitgrad.vmap(g, in_axes=in_axes)
        n = next(a.shape[0] for a, ax in zip(args, in_axes) if ax == 0)

        def loop(g=g, args=args, in_axes=in_axes, n=n):
            return [g(*_rows(args, in_axes, i)) for i in range(n)]

        got = per_example(*args)
        want = loop()
        parts = got if isinstance(wrt, tuple) else (got,)
        for j, part in enumerate(parts):
            ref = np.stack([w[j] if isinstance(wrt, tuple) else w for w in want])
            if not np.array_equal(part, ref):
                raise SystemExit(f"{name}: vmap differs from the Python loop")
        for i in (0, n // 2, n - 1):
            rows = _rows(args, in_axes, i)
            for j, k in enumerate(wrt if isinstance(wrt, tuple) else (wrt,)):
                fd = _fd(fn, rows, k)
                if np.linalg.norm(parts[j][i] - fd) > 1e-6 * max(1.0, np.linalg.norm(fd)):
                    raise SystemExit(f"{name}: row {i} disagrees with central differences")
        tools = {"vmap": functools.partial(per_example, *args), "loop": loop}
        if jax is not None:
            jfn = jax.jit(jax.vmap(jax.grad(_jax_version(fn), argnums=wrt), in_axes=in_axes))
            jargs = [jax.numpy.asarray(a) for a in args]
            jout = jfn(*jargs)
            jparts = jout if isinstance(wrt, tuple) else (jout,)
            for p, q in zip(parts, jparts):
                if not np.allclose(p, np.asarray(q), rtol=1e-10, atol=1e-12):
                    raise SystemExit(f"{name}: JAX's per-example gradients differ")
            tools["jax"] = lambda jfn=jfn, jargs=jargs: jax.block_until_ready(jfn(*jargs))
        t = measure(tools, rounds=opts.rounds)
        v, lo = t["vmap"].median, t["loop"].median
        jx = f"{t['jax'].median * 1e3:.3f} ms | {t['jax'].median / v:.2f}×" if jax else "— | —"
        print(f"| {name} | {v * 1e3:.3f} ms | {lo * 1e3:.3f} ms | {lo / v:.1f}× | {jx} |",
              flush=True)


def _jax_version(fn):
    import jax.numpy as jnp
    if fn is logistic:
        return lambda w, x, y: jnp.log1p(jnp.exp(-y * jnp.dot(x, w))) + 0.01 * jnp.sum(w * w)
    return lambda w1, w2, x, y: (jnp.dot(jnp.tanh(x @ w1), w2) - y) ** 2


if __name__ == "__main__":
    main()
